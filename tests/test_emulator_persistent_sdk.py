"""Google's Vertex AI SDK drives the emulator's persistent resources unchanged: the high-level
`PersistentResource` (create, get, list, delete) and a `CustomJob(persistent_resource_id=...)`, and the typed
`PersistentResourceServiceClient`, whose long-running operation the SDK polls. Its polling sleeps move the emulator's
clock (the `/_emulator/advance` control endpoint) instead of the wall clock, so no test waits in real time.
"""

from __future__ import annotations

import json
import time
import urllib.request
from types import ModuleType
from typing import Any

import pytest
from google.api_core import exceptions
from google.api_core.retry import retry_unary
from google.cloud.aiplatform.persistent_resource import PersistentResource
from google.cloud.aiplatform_v1 import types

from gcp_training_jobs.testing import VertexEmulator

IMAGE = "us-docker.pkg.dev/my-project/trainers/resnet:1"
L4 = {"machine_type": "g2-standard-8", "accelerator_type": "NVIDIA_L4", "accelerator_count": 1}


class EmulatedSleep:
    """What google.api_core's retries call `time`: sleeping advances the emulator's clock over HTTP."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.slept = 0.0

    def sleep(self, seconds: float) -> None:
        request = urllib.request.Request(f"{self.endpoint}/_emulator/advance", method="POST",
                                         data=json.dumps({"seconds": seconds}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200
        self.slept += seconds

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@pytest.fixture
def aiplatform(vertex_emulator: VertexEmulator) -> ModuleType:
    return vertex_emulator.aiplatform()


def resource_pool(replicas: int = 2, **machine: Any) -> dict[str, Any]:
    return {"machine_spec": machine or dict(L4), "replica_count": replicas}


def worker_pools(replicas: int = 1, **machine: Any) -> list[dict[str, Any]]:
    return [{"machine_spec": machine or dict(L4), "replica_count": replicas, "container_spec": {"image_uri": IMAGE}}]


def test_create_get_list_delete(vertex_emulator: VertexEmulator, aiplatform: ModuleType) -> None:
    made = PersistentResource.create(persistent_resource_id="team-l4", resource_pools=[resource_pool()],
                                                display_name="team L4s", labels={"team": "vision"})
    assert made.state == types.PersistentResource.State.RUNNING  # the fixture's phases last 0 s
    assert made.resource_name == f"{vertex_emulator.parent}/persistentResources/team-l4"
    pool = made.gca_resource.resource_pools[0]
    assert pool.machine_spec.accelerator_type == types.AcceleratorType.NVIDIA_L4 and pool.replica_count == 2
    assert (made.display_name, dict(made.labels), made.start_time is not None) == ("team L4s", {"team": "vision"}, True)

    got = PersistentResource("team-l4")
    assert got.state == types.PersistentResource.State.RUNNING and got.display_name == "team L4s"
    PersistentResource.create(persistent_resource_id="other", resource_pools=[resource_pool(1)])
    assert sorted(r.display_name or r.resource_name.rsplit("/", 1)[-1] for r in PersistentResource.list()) \
        == ["other", "team L4s"]
    (create, _) = vertex_emulator.state.requests("persistentResources.create")
    assert create["query"]["persistentResourceId"] == "team-l4"

    got.delete()
    with pytest.raises(exceptions.NotFound):
        PersistentResource("team-l4")
    assert [r.resource_name.rsplit("/", 1)[-1] for r in PersistentResource.list()] == ["other"]


def test_a_custom_job_runs_on_it_and_one_that_does_not_fit_is_refused(aiplatform: ModuleType) -> None:
    PersistentResource.create(persistent_resource_id="l4s", resource_pools=[resource_pool()])
    job = aiplatform.CustomJob(display_name="on-l4s", worker_pool_specs=worker_pools(), persistent_resource_id="l4s")
    job.run()
    assert job.state == types.JobState.JOB_STATE_SUCCEEDED and job.job_spec.persistent_resource_id == "l4s"

    too_big = aiplatform.CustomJob(display_name="too-big", worker_pool_specs=worker_pools(
        machine_type="g2-standard-24", accelerator_type="NVIDIA_L4", accelerator_count=2), persistent_resource_id="l4s")
    with pytest.raises(exceptions.BadRequest) as caught:
        too_big.run()
    assert "matches no resource pool of PersistentResource" in caught.value.message
    nowhere = aiplatform.CustomJob(display_name="nowhere", worker_pool_specs=worker_pools(),
                                   persistent_resource_id="missing")
    with pytest.raises(exceptions.NotFound):
        nowhere.run()


def test_the_typed_client_s_operation_waits_while_the_resource_provisions(
        vertex_emulator: VertexEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    vertex_emulator.state.set_phase_seconds(30)
    sleep = EmulatedSleep(vertex_emulator.endpoint)
    monkeypatch.setattr(retry_unary, "time", sleep)
    client = vertex_emulator.persistent_resource_client()
    resource = types.PersistentResource(resource_pools=[types.ResourcePool(
        machine_spec=types.MachineSpec(machine_type="g2-standard-8", accelerator_type=types.AcceleratorType.NVIDIA_L4,
                                       accelerator_count=1),
        replica_count=1, autoscaling_spec=types.ResourcePool.AutoscalingSpec(min_replica_count=1,
                                                                             max_replica_count=3))])
    operation = client.create_persistent_resource(parent=vertex_emulator.parent, persistent_resource=resource,
                                                  persistent_resource_id="elastic")
    assert not operation.done()
    assert client.get_persistent_resource(name=operation.operation.name.split("/operations/")[0]).state \
        == types.PersistentResource.State.PROVISIONING
    made = operation.result(timeout=None)
    assert made.state == types.PersistentResource.State.RUNNING and sleep.slept >= 30
    assert made.resource_pools[0].autoscaling_spec.max_replica_count == 3
    assert vertex_emulator.state.requests("persistentResources.operations.get")

    with pytest.raises(exceptions.Conflict):
        client.create_persistent_resource(parent=vertex_emulator.parent, persistent_resource=resource,
                                          persistent_resource_id="elastic")
