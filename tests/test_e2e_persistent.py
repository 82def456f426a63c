"""A job on an existing Vertex AI persistent resource under the real Pulumi engine, against the emulator: the
resource made through the REST API as `gcloud ai persistent-resources create` makes it, a stack whose job names it
(`jobSpec.persistentResourceId`, a resource the stack does not declare) comes up with the job made on it, and a job
that does not fit its pools is refused by the provider's check before anything is sent, naming its pool and the
resource's pools; the job already on it is left as it was.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing engine skips
these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from tests.e2e_support import (  # noqa: F401 (the emulator fixture)
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

PARENT = "projects/local-project/locations/us-central1"
IMAGE = "us-docker.pkg.dev/local-project/trainers/example:0.1"
T4 = {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 2}


def on_pool(workers: int) -> dict[str, Any]:
    pool = {"machineSpec": T4, "replicaCount": 1, "containerSpec": {"imageUri": IMAGE}}
    return {"labels": {"team": "vision"}, "jobSpec": {
        "persistentResourceId": "team-pool", "scheduling": {"timeout": "3600s"},
        "workerPoolSpecs": [pool, {**pool, "replicaCount": workers}]}}


CONFIG: dict[str, Any] = offline_config("local", {"on-pool": on_pool(1)}, buckets=LOCAL_BUCKETS,
                                        tpuAccess={"grant": False})


def make_resource(emulator: Emulator) -> None:
    """POST .../persistentResources?persistentResourceId=team-pool (2 machines of n1-standard-8 + 2 T4), then the
    emulator's clock moved on until it is RUNNING."""
    body = {"displayName": "team-pool", "resourcePools": [{"machineSpec": T4, "replicaCount": "2"}]}
    request = urllib.request.Request(f"{emulator.url.rstrip('/')}/v1/{PARENT}/persistentResources"
                                     "?persistentResourceId=team-pool", data=json.dumps(body).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.status == 200
    emulator.control("phase", {"seconds": 60})
    emulator.control("advance", {"seconds": 120})
    emulator.control("phase", {"seconds": 1000000})


project = project_fixture("persistent", CONFIG)


def test_a_job_on_an_existing_resource_is_made_on_it(project: Project, emulator: Emulator) -> None:
    emulator.control("reset", {})
    make_resource(emulator)
    project.up()
    (job,) = emulator.live().values()
    assert job["jobSpec"]["persistentResourceId"] == "team-pool"
    assert job["name"].startswith(f"{PARENT}/customJobs/")
    assert len(emulator.calls("persistentResources.get")) >= 1, "the provider's check asked Vertex AI"


def test_a_job_that_does_not_fit_is_refused_before_anything_is_sent(project: Project, emulator: Emulator) -> None:
    before = emulator.live()
    creates = len(emulator.calls("customJobs.create"))
    project.edit_config(lambda config: config["gcp-training-jobs:jobs"].update({"too-big": on_pool(3)}))
    done = project.pulumi("up", "--yes", "--skip-preview", ok=False)
    shown = done.stdout + done.stderr
    assert done.returncode != 0, shown
    assert "job.jobSpec.workerPoolSpecs[1]: n1-standard-8 x3 + 2 NVIDIA_TESLA_T4, disk pd-ssd 100 GB does not fit " \
           "persistent resource team-pool (its replicaCount is more than the matching pool's)" in shown, shown
    assert "its pools are resourcePools[0] n1-standard-8 x2 + 2 NVIDIA_TESLA_T4, disk pd-ssd 100 GB" in shown, shown
    assert len(emulator.calls("customJobs.create")) == creates
    assert emulator.live() == before
    assert [r["inputs"]["name"] for r in project.resources()] == ["on-pool"]
