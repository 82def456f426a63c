"""The library in a team's own Pulumi project, under the real engine against the emulator (a separate process): a
project named otherwise than `gcp-training-jobs` still has its settings read under `gcp-training-jobs:` (as
pulumi-gcp reads `gcp:`), so `gcp-training-jobs:apiEndpoint` sends its jobs to the emulator, never silently to
Google's endpoint; the same key under the project's own name is refused, naming the key to set; and an argument
TrainingJob cannot take fails the program naming the field.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing engine skips
these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e_support import Emulator, Project, process_emulator, require_pulumi  # noqa: F401 (the fixture)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()

PROGRAM = '''"""A team's program that uses the library."""
import pulumi

from gcp_training_jobs import TrainingJob, TrainingJobArgs

IMAGE = "us-central1-docker.pkg.dev/team-project/trainers/example:0.1"
job = TrainingJob("l4-trial", TrainingJobArgs(
    project="team-project",
    retries=RETRIES,
    job={"region": "us-central1", "labels": {"team": "vision"}, "jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": IMAGE}}]}},
))
pulumi.export("jobId", job.jobId)
'''


def program(retries: str = "1") -> str:
    return PROGRAM.replace("RETRIES", retries)


def test_a_project_of_another_name_reads_the_endpoint_under_the_librarys_namespace(
        tmp_path: Path, emulator: Emulator) -> None:
    emulator.control("reset", {})
    project = Project.consumer(tmp_path, PULUMI, emulator, "team-training", program())
    preview = project.pulumi("preview")
    cost = [line for line in preview.stdout.splitlines() if "job l4-trial: $0.98/h on demand, Spot $0.61/h" in line]
    assert len(cost) == 1, preview.stdout  # said once (ephemeral: not repeated in the summary), in full:
    assert cost[0].rstrip().endswith("+ Vertex 15% (inferred, rule a2-g2-g4)"), cost
    project.up()
    (job_id,) = emulator.jobs()
    assert project.outputs()["jobId"] == job_id
    project.pulumi("destroy", "--yes", "--skip-preview")


def test_the_endpoint_under_the_projects_own_name_is_refused_naming_the_key(tmp_path: Path,
                                                                           emulator: Emulator) -> None:
    emulator.control("reset", {})
    project = Project.consumer(tmp_path, PULUMI, emulator, "team-training", program())
    project.pulumi("config", "rm", "gcp-training-jobs:apiEndpoint")
    project.pulumi("config", "set", "apiEndpoint", emulator.url)  # team-training:apiEndpoint
    done = project.pulumi("up", "--yes", "--skip-preview", ok=False)
    text = done.stdout + done.stderr
    assert done.returncode != 0
    assert "team-training:apiEndpoint is set, but this library reads its settings under gcp-training-jobs:" \
        in text, text
    assert "set gcp-training-jobs:apiEndpoint instead" in text and "Application Default Credentials" not in text
    assert emulator.jobs() == {}


def test_an_argument_trainingjob_cannot_take_fails_the_program_naming_the_field(tmp_path: Path,
                                                                                emulator: Emulator) -> None:
    project = Project.consumer(tmp_path, PULUMI, emulator, "team-training", program('"three"'))
    done = project.pulumi("preview", ok=False)
    text = done.stdout + done.stderr
    assert done.returncode != 0
    assert "TrainingJob l4-trial: retries: 'three'; allowed: a whole number from 0 to 10" in text, text
    assert "unhandled exception" not in text
