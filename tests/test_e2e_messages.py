"""A refused job under the real engine reads as the project's own line: `pulumi preview` of a stack whose job
breaks a guardrail, and of a team's program whose TrainingJob names a bad job dir, say where (the stack key, or
the TrainingJob and its field), what is wrong and what is allowed, and never the engine's dump of the input's
value (`property job value {map[...]}`, `value {<nil>}`), which a check failure with a property brings. A destroy
of a protected running job names both keys and the `pulumi up` that must record lifting the protection.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing engine skips
these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e_support import (  # noqa: F401 (the emulator fixture)
    LOCAL_BUCKETS,
    Emulator,
    Project,
    offline_config,
    process_emulator,
    require_pulumi,
)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()

PROGRAM = '''"""A team's program whose job writes to a local folder, which Vertex AI cannot."""
from gcp_training_jobs import TrainingJob

IMAGE = "us-central1-docker.pkg.dev/team-project/trainers/example:0.1"
TrainingJob("l4-trial", project="team-project", job={
    "region": "us-central1",
    "jobSpec": {"baseOutputDirectory": {"outputUriPrefix": "/tmp/out"}, "workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": IMAGE}}]}})
'''


def _no_dump(text: str) -> None:
    assert "property " not in text and "value {" not in text, text


def test_a_stack_job_over_its_cost_cap_is_refused_in_the_projects_words(tmp_path: Path, emulator: Emulator) -> None:
    project = Project.copy(tmp_path, PULUMI, emulator, stack="local-ai-platform")
    project.edit_config(lambda config: config.update({"gcp-training-jobs:guardrails": {"maxJobCostUsd": 500}}))
    done = project.pulumi("preview", ok=False)
    text = done.stdout + done.stderr
    assert done.returncode != 0, text
    assert "resource 'tpu' has a problem: gcp-training-jobs:guardrails.maxJobCostUsd (job tpu): job tpu's worst " \
        "case is $978.90" in text, text
    assert "allowed: at most $500.00" in text
    _no_dump(text)
    assert emulator.jobs() == {}


def test_a_programs_refused_job_names_the_trainingjob_and_its_field(tmp_path: Path, emulator: Emulator) -> None:
    emulator.control("reset", {})
    project = Project.consumer(tmp_path, PULUMI, emulator, "team-training", PROGRAM)
    done = project.pulumi("preview", ok=False)
    text = done.stdout + done.stderr
    assert done.returncode != 0, text
    assert "resource 'l4-trial' has a problem: TrainingJob l4-trial, job.jobSpec.baseOutputDirectory." \
        "outputUriPrefix: '/tmp/out' is not a Cloud Storage URI: it does not start with gs://; allowed: " \
        "gs://BUCKET/PATH" in text, text
    assert text.count("has a problem: ") == 2, text  # the engine's line and its summary: the one failure
    _no_dump(text)
    assert emulator.jobs() == {}


def test_a_protected_jobs_destroy_names_both_keys_and_the_up_that_must_record_the_change(
        tmp_path: Path, emulator: Emulator) -> None:
    emulator.control("reset", {})
    image = "us-central1-docker.pkg.dev/team-project/trainers/example:0.1"
    config = offline_config("local", {"l4": {"jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": image}}]}}},
        buckets=LOCAL_BUCKETS, guardrails={"protectJobs": True})
    project = Project.copy(tmp_path, PULUMI, emulator, stack="messages", config=config)
    project.up()
    project.edit_config(lambda c: c["gcp-training-jobs:guardrails"].update(protectJobs=False))  # not yet recorded
    done = project.pulumi("destroy", "--yes", "--skip-preview", ok=False)
    text = done.stdout + done.stderr
    assert done.returncode != 0, text
    assert "gcp-training-jobs:guardrails.protectJobs: deleting job l4 (QUEUED" in text, text
    assert "set gcp-training-jobs:guardrails.protectJobs to false (every job), or gcp-training-jobs:jobs.l4.protect " \
        "to false (this job; in a program, TrainingJob's protect argument), then run `pulumi up` to record that: a " \
        "replace or destroy reads the protection the last `pulumi up` recorded" in text, text
    assert len(emulator.live()) == 1
    project.up()  # records protectJobs: false
    project.pulumi("destroy", "--yes", "--skip-preview")
    assert emulator.live() == {}
