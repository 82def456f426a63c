"""`status` against a state the real engine wrote, the emulator a separate process: a job the stack file declares
and one the program declares with `TrainingJob(...)` are both named by their resource (the second by the state
`pulumi stack export` reads); a replaced job's cost line is said once in a preview; after `pulumi destroy`, every
job (kept by the API, cancelled) is marked as no longer in the stack's state.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing engine skips
these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

import json
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
L4 = {"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
      "replicaCount": 1, "containerSpec": {"imageUri": IMAGE, "args": ["--epochs=5"]}}
CONFIG: dict[str, Any] = offline_config("seen", {"trial": {"jobSpec": {"workerPoolSpecs": [L4]}}},
                                        buckets=LOCAL_BUCKETS)
#: The repository's program, and a job it declares itself (not in the stack file).
PROGRAM = '''from pathlib import Path

from gcp_training_jobs import TrainingJob, TrainingJobArgs
from gcp_training_jobs.resources.settings import from_pulumi_config
from gcp_training_jobs.resources.stack import build_stack

build_stack(from_pulumi_config(root=Path(__file__).resolve().parent))
TrainingJob("Trainer-A", TrainingJobArgs(project="seen-project", job={"region": "us-central1", "jobSpec": {
    "workerPoolSpecs": [POOL]}}))
'''.replace("POOL", repr(L4))


project = project_fixture("seen", CONFIG, PROGRAM)


def status(project: Project) -> tuple[dict[str, Any], str]:
    document = json.loads(project.components("status", "--stack", "seen", "--json").stdout)
    done = project.components("status", "--stack", "seen")
    assert done.returncode == 0, done.stderr
    return document, done.stdout


def cost_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "job trial: $" in line]


# The steps build on each other, in order, on one stack.

def test_status_names_a_program_declared_job_by_its_resource_from_the_state(project: Project,
                                                                            emulator: Emulator) -> None:
    emulator.control("reset", {})
    project.up()
    document, text = status(project)
    jobs = {job["name"]: job for job in document["jobs"]}
    assert document["stateRead"] is True and document["notInState"] == []
    assert sorted(jobs) == ["Trainer-A", "trial"]
    assert (jobs["Trainer-A"]["namedBy"], jobs["Trainer-A"]["inStackFile"]) == ("state", False)
    assert (jobs["trial"]["namedBy"], jobs["trial"]["inState"]) == ("stack file", True)
    assert f"  Trainer-A (not in the stack file): QUEUED (job {jobs['Trainer-A']['jobId']}, " in text
    assert "not read" not in text and "no longer" not in text
    state = project.state()  # what status read holds encrypted secrets; status prints none of it
    secrets = [part.split('"', 1)[0] for part in state.split('"ciphertext": "')[1:]]
    assert not any(secret in text for secret in secrets)


def test_a_replaced_jobs_cost_line_is_said_once_in_a_preview_and_once_per_run_of_an_up(project: Project) -> None:
    project.edit_job("trial", lambda job: job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"].update(
        args=["--epochs=6"]))  # a new spec: the job is replaced (two checks of the new inputs in each run)
    preview = project.pulumi("preview")
    assert len(cost_lines(preview.stdout + preview.stderr)) == 1, preview.stdout
    up = project.pulumi("up", "--yes")  # its preview, then its update: a provider process each
    assert len(cost_lines(up.stdout + up.stderr)) == 2, up.stdout


def test_after_destroy_every_job_is_marked_no_longer_in_the_state(project: Project) -> None:
    project.pulumi("destroy", "--yes", "--skip-preview")
    document, text = status(project)
    assert document["stateRead"] is True
    # the state gone, a program-declared job is named by its id's stem (the resource name as an id spells it)
    assert {(job["name"], job["namedBy"]) for job in document["jobs"]} == {("trainer_a", "job id"),
                                                                         ("trial", "stack file")}
    assert all(job["inState"] is False for job in document["jobs"])
    assert text.count(", no longer in the stack's state (job ") == 2, text
