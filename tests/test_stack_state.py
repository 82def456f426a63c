"""live/state.py: what `status` reads of the engine's state through `pulumi stack export`: the TrainingJobs' resource
names and plain job ids only; an export that times out, fails or is not a deployment marks nothing and says why
in one line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gcp_training_jobs.cli.live.state import StackState, jobs_of_export, read_state

JOB = "pulumi-python:dynamic/training:TrainingJob"
URN = "urn:pulumi:dev::gcp-training-jobs::"


@pytest.fixture
def pulumi_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An executable `pulumi` on PATH (the runner given to read_state answers in its place)."""
    exe = tmp_path / "pulumi"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    return exe


def test_only_training_jobs_names_and_plain_ids_are_read() -> None:
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "ciphertext": "v1:abc"}
    export = {"deployment": {"resources": [
        {"urn": f"{URN}pulumi:pulumi:Stack::p-dev", "type": "pulumi:pulumi:Stack"},
        {"urn": f"{URN}gcp:storage/bucket:Bucket::staging", "type": "gcp:storage/bucket:Bucket",
         "outputs": {"jobId": "not_a_job"}},
        {"urn": f"{URN}{JOB}::l4", "type": JOB, "outputs": {"jobId": "l4_0a1b2c3d"}},
        {"urn": f"{URN}{JOB}::Trainer-A", "type": JOB, "outputs": {"jobId": secret}},
        {"urn": f"{URN}{JOB}::old", "type": JOB, "delete": True, "outputs": {"jobId": "old_00000000"}},
    ]}}
    state = StackState(jobs=jobs_of_export(export))
    assert dict(state.jobs) == {"l4": "l4_0a1b2c3d", "Trainer-A": None}
    assert state.holds("l4", "l4_0a1b2c3d") and state.holds("Trainer-A", "trainer_a_00000001")
    assert not state.holds("old", "old_00000000") and not state.holds(None, "cpu_00000000")


def test_an_export_that_times_out_fails_or_is_no_deployment_marks_nothing(tmp_path: Path,
                                                                          pulumi_on_path: Path) -> None:
    def late(argv: list[str], folder: Path, timeout: float) -> subprocess.CompletedProcess[str]:
        raise subprocess.TimeoutExpired(argv, timeout)

    def answer(code: int, out: str, err: str = ""):  # type: ignore[no-untyped-def]
        return lambda argv, folder, timeout: subprocess.CompletedProcess(argv, code, out, err)

    cases = [
        (late, "`pulumi stack export --stack dev` gave no answer in 60 s"),
        (answer(255, "", "warning: x\nerror: no stack named 'dev' found\n"),
         "`pulumi stack export --stack dev` failed (exit 255): error: no stack named 'dev' found"),
        (answer(0, "[]"), "`pulumi stack export --stack dev` printed no deployment this command reads"),
    ]
    for runner, why in cases:
        state = read_state("dev", tmp_path, run=runner)
        assert (state.read, state.unread, dict(state.jobs)) == (False, why, {})
    seen: list[tuple[list[str], Path, float]] = []

    def recorded(argv: list[str], folder: Path, timeout: float) -> subprocess.CompletedProcess[str]:
        seen.append((argv, folder, timeout))
        return subprocess.CompletedProcess(argv, 0, json.dumps({"deployment": {"resources": []}}), "")

    assert read_state("dev", tmp_path, run=recorded).read
    assert seen == [([str(pulumi_on_path), "stack", "export", "--stack", "dev", "--non-interactive"], tmp_path, 60)]


def test_without_a_pulumi_cli_the_state_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert read_state("dev", tmp_path).unread == "no pulumi CLI on PATH"
