"""Vertex AI's persistent resources on the emulator, through google-api-python-client's `aiplatform` v1 client (as
gcloud and the REST API reach them): create as a long-running operation, PROVISIONING then RUNNING on an injected
clock, get, list in pages, delete (STOPPING, then gone); a CustomJob or a tuning job made on one, and each of
Vertex's refusals of a job that names one; the quota the resource's machines hold and the job on it does not.
The Vertex SDK's calls are in test_emulator_persistent_sdk.py."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from googleapiclient.errors import HttpError

from gcp_training_jobs.emulator import Emulator
from tests.conftest_emulator import build_client
from tests.helpers import container_pool, custom_job_spec

PROJECT, REGION = "my-proj", "us-central1"
PARENT = f"projects/{PROJECT}/locations/{REGION}"
PHASE = 60.0
L4 = {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1}
L4_QUOTA = "custom_model_training_nvidia_l4_gpus"


@pytest.fixture
def emu(frozen_emulator: Emulator) -> Iterator[Emulator]:
    """The emulator whose clock moves only when a test advances it; each phase lasts PHASE seconds."""
    frozen_emulator.state.set_phase_seconds(PHASE)
    yield frozen_emulator


@pytest.fixture
def vertex(emu: Emulator) -> Any:
    return build_client("aiplatform", emu.url)


def resource_pool(machine: dict[str, Any] | None = None, replicas: int | None = 2, **extra: Any) -> dict[str, Any]:
    pool: dict[str, Any] = {"machineSpec": dict(machine or L4), **extra}
    if replicas is not None:
        pool["replicaCount"] = str(replicas)
    return pool


def create(vertex: Any, resource_id: str, *pools: dict[str, Any], **body: Any) -> dict[str, Any]:
    collection = vertex.projects().locations().persistentResources()
    sent = {"displayName": resource_id, "resourcePools": list(pools) or [resource_pool()], **body}
    answer: dict[str, Any] = collection.create(parent=PARENT, persistentResourceId=resource_id, body=sent).execute()
    return answer


def get(vertex: Any, resource_id: str) -> dict[str, Any]:
    found: dict[str, Any] = vertex.projects().locations().persistentResources().get(
        name=f"{PARENT}/persistentResources/{resource_id}").execute()
    return found


def operation(vertex: Any, name: str) -> dict[str, Any]:
    found: dict[str, Any] = vertex.projects().locations().persistentResources().operations().get(name=name).execute()
    return found


def running(emu: Emulator, vertex: Any, resource_id: str, *pools: dict[str, Any]) -> dict[str, Any]:
    create(vertex, resource_id, *pools)
    emu.state.advance(PHASE)
    return get(vertex, resource_id)


def job_on(resource_id: str, *pools: dict[str, Any]) -> dict[str, Any]:
    spec = custom_job_spec(*(pools or (container_pool(dict(L4)),)))
    spec["persistentResourceId"] = resource_id
    return {"displayName": "on-a-resource", "jobSpec": spec}


def create_job(vertex: Any, body: dict[str, Any]) -> dict[str, Any]:
    made: dict[str, Any] = vertex.projects().locations().customJobs().create(parent=PARENT, body=body).execute()
    return made


def refusal(call: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(HttpError) as caught:
        call()
    error: dict[str, Any] = json.loads(caught.value.content)["error"]
    return caught.value.resp.status, error


def violations(error: dict[str, Any]) -> list[str]:
    return [v["field"] for d in error.get("details", []) for v in d.get("fieldViolations", [])]


# ----------------------------------------------------------------------------------------------- the resource


def test_create_provisions_then_runs_on_the_clock_and_its_operation_ends(emu: Emulator, vertex: Any) -> None:
    started = create(vertex, "train-pool", labels={"team": "vision"})
    assert started["name"].startswith(f"{PARENT}/persistentResources/train-pool/operations/")
    assert not started.get("done")
    assert started["metadata"]["@type"].endswith("CreatePersistentResourceOperationMetadata")
    provisioning = get(vertex, "train-pool")
    assert provisioning["name"] == f"{PARENT}/persistentResources/train-pool"
    assert provisioning["state"] == "PROVISIONING" and "startTime" not in provisioning
    assert provisioning["labels"] == {"team": "vision"} and provisioning["resourcePools"][0]["replicaCount"] == "2"

    emu.state.advance(PHASE - 1)
    assert get(vertex, "train-pool")["state"] == "PROVISIONING"
    emu.state.advance(1)
    resource = get(vertex, "train-pool")
    assert resource["state"] == "RUNNING" and resource["startTime"] == resource["updateTime"]
    done = operation(vertex, started["name"])
    assert done["done"] is True and done["response"]["state"] == "RUNNING"
    assert done["response"]["@type"] == "type.googleapis.com/google.cloud.aiplatform.v1.PersistentResource"


def test_list_pages_newest_first(emu: Emulator, vertex: Any) -> None:
    for name in ("first", "second", "third"):
        create(vertex, name)
    collection = vertex.projects().locations().persistentResources()
    page = collection.list(parent=PARENT, pageSize=2).execute()
    assert [r["name"].rsplit("/", 1)[-1] for r in page["persistentResources"]] == ["third", "second"]
    rest = collection.list(parent=PARENT, pageSize=2, pageToken=page["nextPageToken"]).execute()
    assert [r["name"].rsplit("/", 1)[-1] for r in rest["persistentResources"]] == ["first"]
    assert "nextPageToken" not in rest
    assert collection.list(parent=f"projects/{PROJECT}/locations/europe-west4").execute() == {}


def test_delete_stops_then_the_resource_is_gone_and_its_id_free(emu: Emulator, vertex: Any) -> None:
    running(emu, vertex, "short-lived")
    collection = vertex.projects().locations().persistentResources()
    stopping = collection.delete(name=f"{PARENT}/persistentResources/short-lived").execute()
    assert not stopping.get("done") and stopping["metadata"]["@type"].endswith("DeleteOperationMetadata")
    assert get(vertex, "short-lived")["state"] == "STOPPING"
    status, error = refusal(collection.delete(name=f"{PARENT}/persistentResources/short-lived").execute)
    assert (status, error["status"]) == (400, "FAILED_PRECONDITION")

    emu.state.advance(PHASE)
    status, error = refusal(lambda: get(vertex, "short-lived"))
    assert (status, error["status"]) == (404, "NOT_FOUND")
    assert error["message"] == f"PersistentResource {PARENT}/persistentResources/short-lived not found."
    assert operation(vertex, stopping["name"])["done"] is True
    assert create(vertex, "short-lived")["name"]  # the id may be used again


def test_a_taken_id_is_409_already_exists(emu: Emulator, vertex: Any) -> None:
    create(vertex, "taken")
    status, error = refusal(lambda: create(vertex, "taken"))
    assert (status, error["status"]) == (409, "ALREADY_EXISTS")
    assert error["message"] == f"PersistentResource {PARENT}/persistentResources/taken already exists."


@pytest.mark.parametrize(("resource_id", "pool", "field"), [
    ("Train", resource_pool(), "persistent_resource_id"),
    ("train-", resource_pool(), "persistent_resource_id"),
    ("x" * 64, resource_pool(), "persistent_resource_id"),
    ("ok", resource_pool(replicas=0), "resource_pools[0].replica_count"),
    ("ok", resource_pool(replicas=None, autoscalingSpec={"minReplicaCount": "0", "maxReplicaCount": "2"}),
     "resource_pools[0].autoscaling_spec.min_replica_count"),
    ("ok", resource_pool(replicas=3, autoscalingSpec={"minReplicaCount": "1", "maxReplicaCount": "2"}),
     "resource_pools[0].autoscaling_spec.max_replica_count"),
    ("ok", resource_pool({"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4"}),
     "resource_pools[0].machine_spec.accelerator_type"),
    ("ok", resource_pool(diskSpec={"bootDiskType": "pd-fast"}), "resource_pools[0].disk_spec.boot_disk_type"),
])
def test_a_bad_resource_is_refused_naming_the_field(vertex: Any, resource_id: str, pool: dict[str, Any],
                                                    field: str) -> None:
    status, error = refusal(lambda: create(vertex, resource_id, pool))
    assert (status, error["status"]) == (400, "INVALID_ARGUMENT")
    assert violations(error) == [field]


def test_a_machine_vertex_cannot_provide_is_refused_in_its_words(vertex: Any) -> None:
    pool = resource_pool({"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 3})
    status, error = refusal(lambda: create(vertex, "three-l4", pool))
    assert status == 400 and violations(error) == ["resource_pools[0].machine_spec.accelerator_count"]
    assert error["message"].startswith('The accelerator count "3" is not allowed.')


def test_a_resource_labelled_to_fail_ends_in_error_and_so_does_its_create(emu: Emulator, vertex: Any) -> None:
    started = create(vertex, "doomed", labels={"emulator-outcome": "failed"})
    emu.state.advance(PHASE)
    resource = get(vertex, "doomed")
    assert resource["state"] == "ERROR" and resource["error"]["code"] == 13 and "startTime" not in resource
    done = operation(vertex, started["name"])
    assert done["done"] is True and done["error"] == resource["error"] and "response" not in done


def test_a_stockout_fails_the_resource_with_vertex_s_words(emu: Emulator, vertex: Any) -> None:
    emu.state.add_stockout(REGION, "g2-standard-8")
    create(vertex, "no-l4")
    emu.state.advance(PHASE)
    assert get(vertex, "no-l4")["error"] == {"code": 8, "message": f"Resources are insufficient in region: {REGION}"}


def test_the_state_is_its_number_when_asked(emu: Emulator, vertex: Any) -> None:
    running(emu, vertex, "numbers")
    url = f"{emu.url}v1/{PARENT}/persistentResources/numbers?%24alt=json%3Benum-encoding%3Dint"
    with urllib.request.urlopen(url, timeout=10) as answer:
        found = json.loads(answer.read())
    assert found["state"] == 3 and found["resourcePools"][0]["machineSpec"]["acceleratorType"] == 11


# ----------------------------------------------------------------------------------------- a job on a resource


def test_a_job_that_fits_is_made_on_it_and_runs_on_the_clock(emu: Emulator, vertex: Any) -> None:
    running(emu, vertex, "fits")
    made = create_job(vertex, job_on("fits"))
    assert made["state"] == "JOB_STATE_QUEUED" and made["jobSpec"]["persistentResourceId"] == "fits"
    emu.state.advance(3 * PHASE)
    job = vertex.projects().locations().customJobs().get(name=made["name"]).execute()
    assert job["state"] == "JOB_STATE_SUCCEEDED"


def test_vertex_s_default_disk_is_the_pool_s_written_disk(emu: Emulator, vertex: Any) -> None:
    running(emu, vertex, "disks", resource_pool(diskSpec={"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100}))
    assert create_job(vertex, job_on("disks"))["state"] == "JOB_STATE_QUEUED"


def test_within_max_replica_count_under_autoscaling_is_accepted(emu: Emulator, vertex: Any) -> None:
    scaling = {"minReplicaCount": "1", "maxReplicaCount": "4"}
    running(emu, vertex, "elastic", resource_pool(replicas=1, autoscalingSpec=scaling))
    chief, workers = container_pool(dict(L4)), {**container_pool(dict(L4)), "replicaCount": "4"}
    assert create_job(vertex, job_on("elastic", chief, workers))["state"] == "JOB_STATE_QUEUED"
    too_many = {**container_pool(dict(L4)), "replicaCount": "5"}
    status, error = refusal(lambda: create_job(vertex, job_on("elastic", chief, too_many)))
    assert status == 400 and violations(error) == ["job_spec.worker_pool_specs[1].replica_count"]
    assert "max_replica_count (4)" in error["message"]


def test_an_unknown_resource_is_404(emu: Emulator, vertex: Any) -> None:
    running(emu, vertex, "elsewhere")
    status, error = refusal(lambda: create_job(vertex, job_on("nowhere")))
    assert (status, error["status"]) == (404, "NOT_FOUND")
    assert error["message"] == f"PersistentResource {PARENT}/persistentResources/nowhere not found."
    other = f"projects/{PROJECT}/locations/europe-west4"
    status, _ = refusal(vertex.projects().locations().customJobs().create(parent=other,
                                                                          body=job_on("elsewhere")).execute)
    assert status == 404  # the resource is in another location


def test_a_resource_not_running_is_a_failed_precondition(emu: Emulator, vertex: Any) -> None:
    create(vertex, "warming")
    status, error = refusal(lambda: create_job(vertex, job_on("warming")))
    assert (status, error["status"]) == (400, "FAILED_PRECONDITION")
    assert "is in state PROVISIONING" in error["message"]


@pytest.mark.parametrize(("pool", "field"), [
    (container_pool({"machineType": "g2-standard-16", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1}),
     "machine_spec"),
    (container_pool({"machineType": "g2-standard-8"}), "machine_spec"),
    ({**container_pool(dict(L4)), "diskSpec": {"bootDiskType": "pd-standard"}}, "disk_spec"),
    ({**container_pool(dict(L4)), "diskSpec": {"bootDiskSizeGb": 200}}, "disk_spec"),
])
def test_a_job_that_does_not_fit_is_refused_naming_its_pool(emu: Emulator, vertex: Any, pool: dict[str, Any],
                                                            field: str) -> None:
    running(emu, vertex, "l4-pool")
    status, error = refusal(lambda: create_job(vertex, job_on("l4-pool", pool)))
    assert (status, error["status"]) == (400, "INVALID_ARGUMENT")
    assert violations(error) == [f"job_spec.worker_pool_specs[0].{field}"]
    assert "resource_pools[0]: g2-standard-8, 1 NVIDIA_L4, pd-ssd 100 GB, replica_count 2" in error["message"]


def test_more_replicas_than_the_pool_is_refused(emu: Emulator, vertex: Any) -> None:
    running(emu, vertex, "two")
    chief, workers = container_pool(dict(L4)), {**container_pool(dict(L4)), "replicaCount": "3"}
    status, error = refusal(lambda: create_job(vertex, job_on("two", chief, workers)))
    assert status == 400 and violations(error) == ["job_spec.worker_pool_specs[1].replica_count"]
    assert "(3) is greater than the replica_count (2)" in error["message"]


def test_a_tuning_job_s_trials_are_judged_on_the_resource(emu: Emulator, vertex: Any) -> None:
    running(emu, vertex, "tuning")
    study = {"metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
             "parameters": [{"parameterId": "lr", "doubleValueSpec": {"minValue": 0.001, "maxValue": 0.1}}]}
    tuning = vertex.projects().locations().hyperparameterTuningJobs()

    def body(machine: dict[str, Any]) -> dict[str, Any]:
        trial = job_on("tuning", container_pool(machine))["jobSpec"]
        return {"displayName": "sweep", "studySpec": study, "maxTrialCount": 4, "parallelTrialCount": 2,
                "trialJobSpec": trial}

    assert tuning.create(parent=PARENT, body=body(dict(L4))).execute()["state"] == "JOB_STATE_QUEUED"
    status, error = refusal(tuning.create(parent=PARENT, body=body({"machineType": "n1-standard-4"})).execute)
    assert status == 400
    assert violations(error) == ["hyperparameter_tuning_job.trial_job_spec.worker_pool_specs[0].machine_spec"]


# ------------------------------------------------------------------------------------------------------- quota


def test_the_resource_holds_the_quota_and_the_job_on_it_does_not(emu: Emulator, vertex: Any) -> None:
    emu.state.set_quota(L4_QUOTA, REGION, 4)
    running(emu, vertex, "four", resource_pool(replicas=4))
    job = job_on("four", container_pool(dict(L4)), {**container_pool(dict(L4)), "replicaCount": "3"})
    assert create_job(vertex, job)["state"] == "JOB_STATE_QUEUED"  # 4 more L4s, on the resource: no new quota
    plain = {"displayName": "plain", "jobSpec": custom_job_spec(container_pool(dict(L4)))}
    status, error = refusal(lambda: create_job(vertex, plain))
    assert (status, error["status"]) == (429, "RESOURCE_EXHAUSTED")
    assert error["message"].endswith(L4_QUOTA)
    status, _ = refusal(lambda: create(vertex, "one-more", resource_pool(replicas=1)))
    assert status == 429

    vertex.projects().locations().persistentResources().delete(name=f"{PARENT}/persistentResources/four").execute()
    emu.state.advance(PHASE)
    assert create_job(vertex, plain)["state"] == "JOB_STATE_QUEUED"  # the resource is gone: its quota is free


def test_under_autoscaling_the_resource_holds_its_max_replica_count(emu: Emulator, vertex: Any) -> None:
    emu.state.set_quota(L4_QUOTA, REGION, 5)
    scaling = {"minReplicaCount": "1", "maxReplicaCount": "6"}
    status, error = refusal(lambda: create(vertex, "elastic", resource_pool(replicas=2, autoscalingSpec=scaling)))
    assert (status, error["status"]) == (429, "RESOURCE_EXHAUSTED")
    scaling["maxReplicaCount"] = "5"
    assert create(vertex, "elastic", resource_pool(replicas=2, autoscalingSpec=scaling))["name"]
    emu.state.set_quota(L4_QUOTA, "europe-west4", 0)  # another region's limit: the resource holds none there
    other = f"projects/{PROJECT}/locations/europe-west4"
    plain = {"displayName": "plain", "jobSpec": custom_job_spec(container_pool(dict(L4)))}
    status, _ = refusal(vertex.projects().locations().customJobs().create(parent=other, body=plain).execute)
    assert status == 429
    emu.state.set_quota(L4_QUOTA, "europe-west4", 1)
    assert vertex.projects().locations().customJobs().create(parent=other, body=plain).execute()["name"]


def test_a_tpu_slice_fits_only_its_topology(emu: Emulator, vertex: Any) -> None:
    slice_4x4 = {"machineType": "ct5lp-hightpu-4t", "tpuTopology": "4x4"}
    running(emu, vertex, "v5e", resource_pool(slice_4x4, replicas=1))
    assert create_job(vertex, job_on("v5e", container_pool(dict(slice_4x4))))["state"] == "JOB_STATE_QUEUED"
    status, error = refusal(lambda: create_job(vertex, job_on("v5e", container_pool({**slice_4x4, "tpuTopology":
                                                                                      "2x2"}))))
    assert status == 400 and violations(error) == ["job_spec.worker_pool_specs[0].machine_spec"]


def test_a_stockout_does_not_stop_a_job_on_machines_already_there(emu: Emulator, vertex: Any) -> None:
    running(emu, vertex, "held")
    emu.state.add_stockout(REGION, "g2-standard-8")
    made = create_job(vertex, job_on("held"))
    emu.state.advance(3 * PHASE)
    assert vertex.projects().locations().customJobs().get(name=made["name"]).execute()["state"] \
        == "JOB_STATE_SUCCEEDED"
