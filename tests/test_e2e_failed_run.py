"""A failed run is a failed deploy, under the real Pulumi engine against the emulator (a separate process): an `up`
that waits for its job (waitForCompletion) exits non-zero when the job ends FAILED, with the job recorded in the
state (FAILED, its error); the next `up` keeps that job, runs nothing again (a failure of the user's code never is)
and is green; a preview after it has nothing to do.

The mechanism (Python dynamic providers cannot return a partial create): the create returns its outputs with the
FAILED state and `waitFailure`, the engine records them, and TrainingJob raises pulumi.RunError in an apply on
`waitFailure` once they resolve: the SDK awaits every output before the program ends, so the update fails after the
job is in the state. `pulumi.log.error` alone leaves `up` at exit 0.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing engine skips
these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e_support import (  # noqa: F401 (the fixture)
    LOCAL_BUCKETS,
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
#: Each state's length on the emulator's clock: the waited job ends FAILED at once, as the wait's first polls see.
PHASE_SECONDS = 0.05
CONFIG: dict[str, Any] = offline_config("local", {"trial": {
    "labels": {"team": "vision", "emulator-outcome": "failed"},  # the emulator's replica exits 1: the user's code
    "waitForCompletion": True,
    "waitTimeoutSeconds": 600,
    "jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": IMAGE, "args": ["--epochs=5"]}}],
        "scheduling": {"strategy": "SPOT", "timeout": "3600s"}}}}, buckets=LOCAL_BUCKETS, labels={"env": "local"})


project = project_fixture("failed", CONFIG)


def test_a_waited_job_that_fails_fails_the_up_and_stays_in_the_state(project: Project, emulator: Emulator) -> None:
    emulator.control("reset", {})
    emulator.control("phase", {"seconds": PHASE_SECONDS})
    done = project.pulumi("up", "--yes", "--skip-preview", ok=False)
    text = done.stdout + done.stderr
    assert done.returncode != 0, text
    (job_id,) = emulator.jobs()
    assert f"job trial: training job {job_id} FAILED: {ERROR} The job is recorded in the state as FAILED" in text, text
    assert f"{ERROR}. " not in text, "Google's sentence ends with its own period, once"
    assert "unhandled exception" not in text  # RunError: one error line (the trainer's own traceback is its log)
    (resource,) = project.resources()
    outputs = resource["outputs"]
    assert (outputs["jobId"], outputs["state"], outputs["errorMessage"]) == (job_id, "FAILED", ERROR)
    assert outputs["waitFailure"] == f"training job {job_id} FAILED: {ERROR}"


def test_the_next_up_keeps_the_failed_job_runs_nothing_and_is_green(project: Project, emulator: Emulator) -> None:
    (job_id,) = emulator.jobs()
    before = len(emulator.control("requests"))
    done = project.pulumi("up", "--yes", "--skip-preview")
    assert done.returncode == 0
    writes = [r["method"] for r in emulator.control("requests")[before:]
              if not str(r["method"]).endswith((".get", ".list"))]
    assert writes == [], "the user's code failed: the job is not run again on its own"
    (resource,) = project.resources()
    assert (resource["outputs"]["jobId"], resource["outputs"]["state"]) == (job_id, "FAILED")
    assert resource["outputs"].get("waitFailure") is None
    assert project.pulumi("preview", "--expect-no-changes").returncode == 0
    assert list(emulator.jobs()) == [job_id]
