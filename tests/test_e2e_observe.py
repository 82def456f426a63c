"""After `pulumi up`, under the real Pulumi engine against the emulator (a separate process): a waiting `up`
reports each state change of its job and, when the job ends FAILED, its error with the job's last log lines; then
`status` (exit 1: a job FAILED), `logs` and `spend` read the stack's jobs from the API, and `pulumi refresh`
records the job's cost so far (`costUsd`).

The job spends PHASE_SECONDS in each of its states (queued, preparing, running), longer than the wait's longest
gap between polls (30 s) with room to spare, so the waiting `up` sees each state and reports the job's last log
line at its first poll a minute after the last report (61 s: preparing; 121 s: running). Nothing here times
anything: what a poll sees is asserted, never when. The same reports are pinned on an injected clock in
tests/test_job_watch.py.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing engine skips
these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from gcp_training_jobs.emulator.logging_v2 import TRACEBACK
from tests.e2e_support import (  # noqa: F401 (the fixture)
    LOCAL_BUCKETS,
    ROOT,
    Emulator,
    Project,
    offline_config,
    process_emulator,
    project_fixture,
    require_pulumi,
)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()

IMAGE = "us-central1-docker.pkg.dev/local-project/trainers/example:0.1"
ERROR = "The replica workerpool0-0 exited with a non-zero status of 1."
#: How long the job stays queued, preparing and running (then it fails): more than the wait's 30 s cap of a gap.
PHASE_SECONDS = 45
CONFIG: dict[str, Any] = offline_config("local", {"trial": {
    "labels": {"team": "vision", "emulator-outcome": "failed"},  # the emulator fails it once it has run
    "waitForCompletion": True,
    "waitTimeoutSeconds": 600,
    "jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": IMAGE, "args": ["--epochs=5"]}}],
        "scheduling": {"strategy": "SPOT"}}}}, buckets=LOCAL_BUCKETS, labels={"env": "local"})


project = project_fixture("observe", CONFIG)



def test_a_waiting_up_reports_the_states_and_a_failure_with_its_last_log_lines(
        project: Project, emulator: Emulator) -> None:
    emulator.control("reset", {})
    emulator.control("phase", {"seconds": PHASE_SECONDS})
    try:
        done = project.pulumi("up", "--yes", "--skip-preview", ok=False)
    finally:
        emulator.control("phase", {"seconds": 1000000})
    text = done.stdout + done.stderr
    (job,) = emulator.jobs().values()
    name = emulator.control("jobs")[0]["name"]
    states = [line.split(f"{name}: ", 1)[1].strip() for line in text.splitlines() if f"{name}: " in line]
    # (the engine prints each diagnostic as it comes, then again in its summary)
    assert list(dict.fromkeys(states)) == ["QUEUED", "PREPARING", "RUNNING", "FAILED"], text
    job_id = job["labels"]["pulumi-job"]
    reports = [line.split("last log line: ", 1)[1] for line in text.splitlines()
               if f"training job {job_id}: last log line: " in line]
    assert reports[0].endswith("INFO service Waiting for job to be provisioned."), text  # preparing, at 61 s
    assert " INFO workerpool0-0 step " in reports[-1], text  # running, at 121 s
    assert f"error: training job {job_id} FAILED: {ERROR}" in text, text  # an error diagnostic of the update...
    assert done.returncode != 0, text  # ...which fails the update (tests/test_e2e_failed_run.py)
    assert "log lines:" in text
    for line in (TRACEBACK[0], TRACEBACK[-1], f"ERROR service {ERROR}"):
        assert line in text, (line, text)
    (resource,) = project.resources()  # ...and the job is in the state, not orphaned
    assert resource["outputs"]["state"] == "FAILED" and resource["outputs"]["jobId"] == job_id
    assert job["labels"]["pulumi-stack"]  # the label status finds it by


def test_status_exits_1_naming_the_failed_job(project: Project) -> None:
    done = project.components("status", "--stack", "observe")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "  trial: FAILED (job trial_" in done.stdout and f"error: {ERROR}" in done.stdout
    assert "machines: g2-standard-8 x1 + 1 NVIDIA_L4; accelerators: 1 NVIDIA_L4" in done.stdout
    document = json.loads(project.components("status", "--stack", "observe", "--json").stdout)
    assert document["failed"] == ["trial"] and document["jobs"][0]["cost"]["runsAs"] == "SPOT, at Spot rates"
    assert document["stateRead"] is True and document["jobs"][0]["inState"] is True  # the engine's state, read


def test_logs_print_the_failed_jobs_lines(project: Project) -> None:
    done = project.components("logs", "--stack", "observe", "trial")
    assert done.returncode == 0, done.stderr
    messages = [line.split(" ", 3)[3] for line in done.stdout.splitlines()]
    assert messages[:3] == ["Waiting for job to be provisioned.", "Job is running.", f"Running {IMAGE} --epochs=5"]
    assert messages[-len(TRACEBACK) - 1:] == [*TRACEBACK, ERROR]
    tail = project.components("logs", "--stack", "observe", "trial", "--tail", "1")
    assert tail.stdout.splitlines() == done.stdout.splitlines()[-1:]


def test_spend_and_refresh_record_what_it_cost(project: Project) -> None:
    done = project.components("spend", "--stack", "observe", "--by", "team", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    (job,) = document["jobs"]
    assert job["name"] == "trial" and job["rate"] == "spot" and 0 < job["hours"] < 0.1
    assert document["byLabel"]["groups"] == [{"value": "vision", "costUsd": job["costUsd"], "complete": True,
                                              "jobCount": 1}]
    project.pulumi("refresh", "--yes", "--skip-preview")
    (resource,) = project.resources()
    assert resource["outputs"]["costUsd"] == job["costUsd"]  # a few seconds at $0.61/h: $0.00
