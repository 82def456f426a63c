"""The emulator's Vertex AI surface with the CustomJobSpec fields of today: it accepts and returns them as sent
(bodies rendered by the project included), and makes Vertex's own checks of them, answering Google's error shape
(400 INVALID_ARGUMENT with a google.rpc.BadRequest field violation)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from googleapiclient.errors import HttpError

from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.jobspec.load import load_custom_job, render_body
from tests.conftest_emulator import FROZEN_PHASE_SECONDS, build_client
from tests.helpers import FULL, container_pool, custom_job_spec

PARENT = "projects/demo-project/locations/us-central1"


def customjobs(client: Any) -> Any:
    return client.projects().locations().customJobs()


def body(spec: dict[str, Any]) -> dict[str, Any]:
    return {"displayName": "today", "labels": {"team": "ml"}, "jobSpec": spec}


def tpu_v5e() -> dict[str, Any]:
    return custom_job_spec(container_pool({"machineType": "ct5lp-hightpu-4t", "tpuTopology": "4x4"}),
                           scheduling={"strategy": "SPOT", "maxWaitDuration": "3600s", "timeout": "7200s",
                                       "restartJobOnWorkerRestart": True, "disableRetries": False},
                           persistentResourceId="my-cluster")


def rejected(client: Any, spec: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(HttpError) as caught:
        customjobs(client).create(parent=PARENT, body=body(spec)).execute()
    assert caught.value.status_code == 400
    error: dict[str, Any] = json.loads(caught.value.content)["error"]
    assert error["status"] == "INVALID_ARGUMENT" and error["code"] == 400
    return error


def running_cluster(emulator: Emulator, client: Any) -> None:
    """The RUNNING persistent resource "my-cluster" a TPU v5e 4x4 job fits (phases of 0 s while it is made)."""
    emulator.state.set_phase_seconds(0)
    pool = {"machineSpec": {"machineType": "ct5lp-hightpu-4t", "tpuTopology": "4x4"}, "replicaCount": "1"}
    client.projects().locations().persistentResources().create(
        parent=PARENT, persistentResourceId="my-cluster", body={"resourcePools": [pool]}).execute()
    emulator.state.set_phase_seconds(FROZEN_PHASE_SECONDS)


def full_reservation(emulator: Emulator) -> None:
    """The reservation FULL's first pool consumes (projects/my-proj/zones/us-central1-a/reservations/h100s), shared
    with the jobs' project and open to Vertex AI, inserted as Compute Engine's REST API takes it."""
    compute = build_client("compute", emulator.url + "compute/v1/")
    compute.reservations().insert(project="my-proj", zone="us-central1-a", body={
        "name": "h100s", "reservationSharingPolicy": {"serviceShareType": "ALLOW_ALL"},
        "shareSettings": {"shareType": "SPECIFIC_PROJECTS",
                          "projectMap": {"demo-project": {"projectId": "demo-project"}}},
        "specificReservation": {"count": "1", "instanceProperties": {"machineType": "a3-highgpu-8g"}}}).execute()


@pytest.mark.parametrize("spec", [tpu_v5e(), FULL], ids=["tpu-v5e-spot", "every-field"])
def test_new_fields_are_accepted_and_returned_as_sent(emulator: Emulator, vertex_client: Any,
                                                      spec: dict[str, Any]) -> None:
    running_cluster(emulator, vertex_client)
    full_reservation(emulator)
    sent = body(copy.deepcopy(spec))
    created = customjobs(vertex_client).create(parent=PARENT, body=sent).execute()
    expected = copy.deepcopy(sent["jobSpec"])
    for pool in expected["workerPoolSpecs"]:  # replicaCount is an int64: sent either way, answered as text
        pool.update({"replicaCount": str(pool["replicaCount"])} if "replicaCount" in pool else {})
    assert created["jobSpec"] == expected
    got = customjobs(vertex_client).get(name=created["name"]).execute()
    assert got["jobSpec"] == expected and got["state"] == "JOB_STATE_QUEUED"


def test_a_body_rendered_by_the_project_is_created(emulator: Emulator, vertex_client: Any) -> None:
    emulator.state.strict_int64 = True
    full_reservation(emulator)
    job = load_custom_job(FULL, region="us-central1")
    rendered = render_body(job, "vertex", "llm_run")
    created = customjobs(vertex_client).create(parent=PARENT, body=rendered).execute()
    assert created["jobSpec"] == rendered["jobSpec"] and created["displayName"] == "llm_run"


@pytest.mark.parametrize(("machine", "field", "words"), [
    ({"machineType": "n1-standard-8", "tpuTopology": "2x2"}, "machine_spec.tpu_topology",
     "tpu_topology is only supported for TPU VM machine types"),
    ({"machineType": "ct5lp-hightpu-4t"}, "machine_spec.tpu_topology", "Required field is not set"),
    ({"machineType": "ct5lp-hightpu-4t", "tpuTopology": "four"}, "machine_spec.tpu_topology", "Invalid TPU topology"),
    ({"machineType": "n1-standard-8", "acceleratorCount": 2}, "machine_spec.accelerator_type",
     "Both `accelerator_type` and `accelerator_count` should be specified or none"),
    ({"machineType": "n1-standard-8", "reservationAffinity": {"reservationAffinityType": "SPECIFIC_RESERVATION"}},
     "machine_spec.reservation_affinity.key", "Required field is not set"),
    ({"machineType": "n1-standard-8", "reservationAffinity": {"key": "k"}},
     "machine_spec.reservation_affinity.reservation_affinity_type", "Required field is not set"),
    ({"machineType": "n1-standard-8", "reservationAffinity": {"reservationAffinityType": "ANY_RESERVATION",
                                                             "values": ["x"]}},
     "machine_spec.reservation_affinity", "only be set with SPECIFIC_RESERVATION"),
])
def test_vertex_s_machine_checks(emulator: Emulator, vertex_client: Any, machine: dict[str, Any], field: str,
                                 words: str) -> None:
    error = rejected(vertex_client, custom_job_spec(container_pool(machine)))
    assert words in error["message"]
    violation = error["details"][0]["fieldViolations"][0]
    assert violation["field"] == f"job_spec.worker_pool_specs[0].{field}"  # relative to the CustomJob, as Vertex
    assert emulator.state.jobs() == []


@pytest.mark.parametrize(("spec", "words"), [
    (custom_job_spec(container_pool({"machineType": "n1-standard-8"}), scheduling={"strategy": "SPOTTY"}),
     'scheduling.strategy: invalid value "SPOTTY"'),
    (custom_job_spec(container_pool({"machineType": "n1-standard-8"}), scheduling={"timeout": "-5s"}),
     "The duration must not be negative"),
    (custom_job_spec(container_pool({"machineType": "n1-standard-8"}), scheduling={"maxWaitDuration": "1h"}),
     "invalid duration"),
    (custom_job_spec(container_pool({"machineType": "n1-standard-8"}, diskSpec={"bootDiskType": "pd-fast"})),
     "Invalid boot disk type"),
    (custom_job_spec(container_pool({"machineType": "n1-standard-8"}, diskSpec={"bootDiskSizeGb": 10})),
     "between 100 and 64000"),
    (custom_job_spec(container_pool({"machineType": "n1-standard-8"}), persistentResourceId="My_Cluster"),
     "persistent_resource_id can only contain numbers, lower case letters and hyphens"),
], ids=["strategy", "negative-timeout", "duration", "disk-type", "disk-size", "persistent-resource"])
def test_vertex_s_spec_checks(emulator: Emulator, vertex_client: Any, spec: dict[str, Any], words: str) -> None:
    assert words in rejected(vertex_client, spec)["message"]


def test_int64_fields_are_answered_as_text_whichever_way_they_came(emulator: Emulator, vertex_client: Any) -> None:
    """Google's JSON mapping writes int64 as strings (the discovery document's format: replicaCount); int32 fields
    (acceleratorCount, bootDiskSizeGb) stay numbers. A request may send either."""
    for replicas in (2, "2"):
        spec = custom_job_spec(container_pool({"machineType": "n1-standard-4"}),
                               container_pool({"machineType": "n1-standard-4", "acceleratorType": "NVIDIA_TESLA_T4",
                                               "acceleratorCount": 1}, replicaCount=replicas,
                                              diskSpec={"bootDiskSizeGb": 100}))
        created = customjobs(vertex_client).create(parent=PARENT, body=body(spec)).execute()
        pool = created["jobSpec"]["workerPoolSpecs"][1]
        assert pool["replicaCount"] == "2" and pool["machineSpec"]["acceleratorCount"] == 1
        assert pool["diskSpec"]["bootDiskSizeGb"] == 100
    for listed in customjobs(vertex_client).list(parent=PARENT).execute()["customJobs"]:
        assert listed["jobSpec"]["workerPoolSpecs"][1]["replicaCount"] == "2"


def test_the_emulator_pauses_a_vertex_job_until_it_is_cancelled(emulator: Emulator, vertex_client: Any) -> None:
    import urllib.error
    import urllib.request

    def pause(job: str) -> tuple[int, dict[str, Any]]:
        request = urllib.request.Request(f"{emulator.url}_emulator/pause", data=json.dumps({"job": job}).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    created = customjobs(vertex_client).create(parent=PARENT, body=body(custom_job_spec(
        container_pool({"machineType": "n1-standard-4"})))).execute()
    status, paused = pause(created["name"])
    assert status == 200 and paused["state"] == "JOB_STATE_PAUSED"
    emulator.state.advance(1e10)  # it stays paused, whatever the clock
    assert customjobs(vertex_client).get(name=created["name"]).execute()["state"] == "JOB_STATE_PAUSED"
    assert pause(created["name"])[0] == 400  # only a queued, pending or running job
    customjobs(vertex_client).cancel(name=created["name"], body={}).execute()
    assert customjobs(vertex_client).get(name=created["name"]).execute()["state"] == "JOB_STATE_CANCELLED"
    assert pause("no-such-job")[0] == 404
