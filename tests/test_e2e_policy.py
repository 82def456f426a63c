"""The policy pack under the real Pulumi engine: `pulumi up` / `preview --policy-pack policies/analyzer` on the
`local` stack against the loopback emulator, with a guardrails block in its stack file.

- a stack within its guardrails is created, with the estimated cost reported as an advisory;
- a change that breaks a guardrail fails the preview, naming the guardrail, the job and the value;
- the pack enforces on its own: a program that registers a TrainingJob directly (no settings judge, no
  guardrails of its own) is stopped by the pack's mandatory policy.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh) and pulumi-policy in the venv
(`pip install --no-deps -r policies/requirements.txt`). Outside CI a missing one skips; under CI it fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
ENGINE_CACHE = Path(os.environ.get("PULUMI_ENGINE_CACHE", Path.home() / ".cache/gcp-training-jobs/pulumi-engine"))
PROJECT_FILES = ("Pulumi.yaml", "__main__.py", "components", "trainers", "requirements.txt", "policies")
PACK = "policies/analyzer"
GUARDRAILS = {"allowedAccelerators": ["NVIDIA_TESLA_T4", "TPU_V2"], "maxAcceleratorsPerJob": 8,
              "maxAcceleratorsPerStack": 10, "requiredLabels": ["env"]}


def _pulumi() -> str | None:
    found = shutil.which("pulumi")
    built = sorted(ENGINE_CACHE.glob("v*/bin/pulumi"))
    return found or (str(built[-1]) if built else None)


PULUMI = _pulumi()
_MISSING = ("no pulumi CLI on PATH or in the engine cache (scripts/install-pulumi-engine.sh)" if PULUMI is None
            else "pulumi-policy is not installed (pip install --no-deps -r policies/requirements.txt)"
            if importlib.util.find_spec("pulumi_policy") is None else None)
if _MISSING:
    if os.environ.get("CI"):
        pytest.fail(_MISSING, pytrace=False)
    pytest.skip(_MISSING, allow_module_level=True)


class Project:
    """A copy of the project in a temporary folder, with its own file state backend."""

    def __init__(self, path: Path, env: dict[str, str]) -> None:
        self.path, self.env = path, env

    def pulumi(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(PULUMI), *args, "--stack", "local", "--non-interactive"], cwd=self.path,
                              env=self.env, capture_output=True, text=True, timeout=300)

    def stack_config(self, change: Any) -> None:
        path = self.path / "stacks" / "Pulumi.local.yaml"
        data = yaml.safe_load(path.read_text())
        change(data["config"])
        path.write_text(yaml.safe_dump(data, sort_keys=False))


def copy_project(base: Path, endpoint: str) -> Project:
    path = base / "project"
    path.mkdir(parents=True)
    for name in PROJECT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, path / name, ignore=shutil.ignore_patterns("__pycache__", ".build"))
        else:
            shutil.copy2(source, path / name)
    (path / "stacks").mkdir()
    shutil.copy2(ROOT / "stacks" / "Pulumi.local.yaml", path / "stacks" / "Pulumi.local.yaml")
    (path / "venv").symlink_to(ROOT / "venv")
    (base / "state").mkdir()
    env = {
        "PATH": f"{Path(str(PULUMI)).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(base / "home"),
        "PULUMI_HOME": str(base / "pulumi-home"),
        "PULUMI_BACKEND_URL": f"file://{base / 'state'}",
        "PULUMI_CONFIG_PASSPHRASE": "e2e-passphrase",
        "PULUMI_SKIP_UPDATE_CHECK": "1",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "1",
        "PULUMI_PYTHON_CMD": str(ROOT / "venv" / "bin" / "python"),
        "GCP_TRAINING_JOBS_RETRY_BASE_SECONDS": "0.01",
    }
    project = Project(path, env)
    project.stack_config(lambda config: config.update({"gcp-training-jobs:apiEndpoint": endpoint,
                                                       "gcp-training-jobs:guardrails": dict(GUARDRAILS)}))
    assert project.pulumi("stack", "init").returncode == 0
    return project


@pytest.fixture(scope="module")
def emulator() -> Iterator[str]:
    process = subprocess.Popen([sys.executable, "-m", "components", "emulator", "--port", "0",
                                "--phase-seconds", "1000000"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert "listening on" in line, line
    yield line.split("listening on", 1)[1].strip()
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, emulator: str) -> Project:
    return copy_project(tmp_path_factory.mktemp("e2e-policy"), emulator)


def jobs_of(emulator: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(emulator + "_emulator/jobs", timeout=10) as answer:
        return list(json.loads(answer.read()))


def test_a_stack_within_its_guardrails_is_created_with_its_cost_reported(project: Project, emulator: str) -> None:
    done = project.pulumi("up", "--yes", "--policy-pack", PACK)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "gcp-training-jobs@v0.1.0 (local: policies/analyzer)" in out, out
    assert "[advisory]  estimated-cost" in out, out
    assert "gpu: us-central1: on demand unknown (no price for 1 x n1-standard-8; 2 x NVIDIA_TESLA_T4)" in out
    assert "prices: Vertex AI pricing" in out and "read 2026-11-22" in out
    assert "[mandatory]" not in out
    assert {j["job"]["jobId"].split("_")[0] for j in jobs_of(emulator)} == {"gpu", "tpu"}


def test_a_change_that_breaks_a_guardrail_fails_the_preview_naming_it(project: Project, emulator: str) -> None:
    before = len(jobs_of(emulator))
    project.stack_config(lambda config: config["gcp-training-jobs:guardrails"].update(maxAcceleratorsPerJob=4))
    done = project.pulumi("preview", "--diff", "--policy-pack", PACK)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "gcp-training-jobs:guardrails.maxAcceleratorsPerJob: job tpu holds 8 accelerators at once " \
        "(8 TPU_V2 x 1 replica); allowed: at most 4" in out, out
    done = project.pulumi("up", "--yes", "--policy-pack", PACK)
    assert done.returncode != 0
    assert len(jobs_of(emulator)) == before, "nothing is created or replaced when a guardrail breaks"


def test_the_pack_alone_stops_a_program_that_bypasses_the_settings(tmp_path: Path, emulator: str) -> None:
    """A consumer program registering TrainingJob itself: nothing but the pack knows the stack's guardrails."""
    project = copy_project(tmp_path, emulator)
    (project.path / "__main__.py").write_text(textwrap.dedent("""\
        from components import TrainingJob

        TrainingJob("direct", project="local-project", backend="ai-platform", job={"trainingInput": {
            "scaleTier": "CUSTOM", "region": "us-central1", "runtimeVersion": "2.11", "pythonVersion": "3.7",
            "pythonModule": "trainer.task", "packageUris": ["gs://local-staging-bucket/trainer-0.1.tar.gz"],
            "masterType": "n1-standard-16", "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_V100",
                                                                                  "count": 8}}}})
        """))
    done = project.pulumi("preview", "--policy-pack", PACK)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "[mandatory]  training-job-guardrails" in out, out
    for line in ("gcp-training-jobs:guardrails.allowedAccelerators: job direct uses NVIDIA_TESLA_V100 "
                 "(trainingInput.masterType); allowed: NVIDIA_TESLA_T4, TPU_V2",
                 "gcp-training-jobs:guardrails.requiredLabels: job direct has no label env"):
        assert line in out, out
