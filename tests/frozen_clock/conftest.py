"""The fixtures of this folder's tests: the emulator on a frozen clock (its jobs move only as a test advances it,
never with real time, so what a test reads of a job's timeline holds on a busy machine), Google's clients
pointed at it, and for `status`, `logs` and `spend` a project with its stacks and a command line run on that
clock."""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from gcp_training_jobs.cli.live import logs, spend, status
from gcp_training_jobs.cli.main import parser
from gcp_training_jobs.emulator import Emulator
from tests.conftest_emulator import build_client
from tests.frozen_clock.stack_project import PHASE, Run, vertex_stack


@pytest.fixture
def emulator(frozen_emulator: Emulator) -> Emulator:
    """The emulator on a frozen clock: its jobs move only as the test advances it, never with real time."""
    return frozen_emulator


@pytest.fixture(scope="module")
def vertex_client(frozen_emulator_server: Emulator) -> Any:
    return build_client("aiplatform", frozen_emulator_server.url)


@pytest.fixture(scope="module")
def ml_client(frozen_emulator_server: Emulator) -> Any:
    return build_client("ml", frozen_emulator_server.url)


@pytest.fixture
def project(tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Pulumi project with stacks `team` (Vertex AI, three jobs) and `empty` (no job), the working folder."""
    (tmp_path / "Pulumi.yaml").write_text("name: gcp-training-jobs\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.team.yaml").write_text(yaml.safe_dump(vertex_stack(emulator.url)))
    empty = vertex_stack(emulator.url)
    empty["config"]["gcp-training-jobs:jobs"] = {}
    (tmp_path / "stacks" / "Pulumi.empty.yaml").write_text(yaml.safe_dump(empty))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bin").mkdir()  # where a test puts its `pulumi`; none else on PATH: the state is not read
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.defpath}")
    monkeypatch.setenv("GCP_TRAINING_JOBS_RETRY_BASE_SECONDS", "0.001")
    emulator.state.set_phase_seconds(PHASE)
    return tmp_path


@pytest.fixture
def run(emulator: Emulator, capsys: pytest.CaptureFixture[str]) -> Run:
    """Run a command line (parsed by the real parser) on the emulator's clock; (exit code, stdout, stderr)."""
    commands = {"status": status.run_status, "logs": logs.run_logs, "spend": spend.run_spend}

    def now() -> datetime:
        return datetime.fromtimestamp(emulator.state.now(), UTC)

    def go(*argv: str) -> tuple[int, str, str]:
        args: argparse.Namespace = parser().parse_args(list(argv))
        capsys.readouterr()  # what the provider said while deploying is not the command's
        code = commands[argv[0]](args, now=now, sleep=emulator.state.advance)
        out, err = capsys.readouterr()
        return code, out, err

    return go
