"""Google's Vertex AI SDK (google-cloud-aiplatform) drives the emulator: the typed `JobServiceClient` over REST,
anonymous, pointed at the loopback endpoint, exactly as a user's code would build it.

What the SDK does that the project's own client does not: it sends enums as numbers (`"acceleratorType": 11`)
and asks `$alt=json;enum-encoding=int` on every call, and `to_json()` writes every unset scalar ("" / 0 / false).
Covered: create, get, list (label filters, pages), cancel, delete; GPUs on SPOT and FLEX_START, TPU v5e slices;
Vertex's refusals in its words; injected faults. The high-level `aiplatform.CustomJob` and
`HyperparameterTuningJob` are in test_emulator_sdk_aiplatform.py.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest
from google.api_core import exceptions
from google.api_core.retry import Retry, if_exception_type
from google.cloud.aiplatform_v1 import types

from gcp_training_jobs.testing import VertexEmulator

#: A phase no test outlives: created jobs stay QUEUED until a test moves the clock.
FROZEN = 1e9
IMAGE = "us-docker.pkg.dev/my-project/trainers/resnet:1"


def pool(replicas: int = 1, **machine: Any) -> types.WorkerPoolSpec:
    return types.WorkerPoolSpec(machine_spec=types.MachineSpec(**machine), replica_count=replicas,
                                container_spec=types.ContainerSpec(image_uri=IMAGE))


def custom_job(*pools: types.WorkerPoolSpec, name: str = "resnet", labels: dict[str, str] | None = None,
               **spec: Any) -> types.CustomJob:
    return types.CustomJob(display_name=name, labels=labels or {},
                           job_spec=types.CustomJobSpec(worker_pool_specs=list(pools), **spec))


def l4(count: int = 1, machine_type: str = "g2-standard-8") -> types.WorkerPoolSpec:
    return pool(machine_type=machine_type, accelerator_type=types.AcceleratorType.NVIDIA_L4, accelerator_count=count)


def raw_get(vertex_emulator: VertexEmulator, name: str, query: str = "") -> dict[str, Any]:
    """The emulator's JSON answer itself, as the SDK's transport reads it before parsing."""
    with urllib.request.urlopen(f"{vertex_emulator.endpoint}/v1/{name}{query}", timeout=10) as answer:
        found: dict[str, Any] = json.loads(answer.read())
        return found


# ------------------------------------------------------------------------------------------- enums as numbers


def test_a_gpu_job_on_spot_goes_and_comes_back_with_numeric_enums(vertex_emulator: VertexEmulator) -> None:
    client = vertex_emulator.job_client()
    sent = custom_job(l4(), scheduling=types.Scheduling(strategy=types.Scheduling.Strategy.SPOT))
    created = client.create_custom_job(parent=vertex_emulator.parent, custom_job=sent)

    machine = created.job_spec.worker_pool_specs[0].machine_spec
    assert machine.accelerator_type == types.AcceleratorType.NVIDIA_L4 and machine.accelerator_count == 1
    assert created.job_spec.scheduling.strategy == types.Scheduling.Strategy.SPOT
    assert created.state == types.JobState.JOB_STATE_SUCCEEDED  # the fixture's jobs finish at once
    (create,) = vertex_emulator.state.requests("customJobs.create")
    assert create["query"] == {"$alt": "json;enum-encoding=int"}  # what the SDK asks, every call

    as_numbers = raw_get(vertex_emulator, created.name, "?%24alt=json%3Benum-encoding%3Dint")
    assert as_numbers["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorType"] == 11
    assert as_numbers["jobSpec"]["scheduling"]["strategy"] == 4
    assert as_numbers["state"] == 4
    as_names = raw_get(vertex_emulator, created.name)  # no enum-encoding asked: names, as stored
    assert as_names["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorType"] == "NVIDIA_L4"
    assert as_names["jobSpec"]["scheduling"]["strategy"] == "SPOT" and as_names["state"] == "JOB_STATE_SUCCEEDED"


def test_flex_start_is_6_on_the_wire_and_flex_start_in_the_job(vertex_emulator: VertexEmulator) -> None:
    a100 = pool(machine_type="a2-highgpu-1g", accelerator_type=types.AcceleratorType.NVIDIA_TESLA_A100,
                accelerator_count=1)
    scheduling = types.Scheduling(strategy=types.Scheduling.Strategy.FLEX_START, max_wait_duration={"seconds": 7200})
    created = vertex_emulator.job_client().create_custom_job(parent=vertex_emulator.parent,
                                                             custom_job=custom_job(a100, scheduling=scheduling))
    assert created.job_spec.scheduling.strategy == types.Scheduling.Strategy.FLEX_START
    assert created.job_spec.scheduling.max_wait_duration.total_seconds() == 7200
    assert vertex_emulator.state.jobs()[0]["job"]["jobSpec"]["scheduling"]["strategy"] == "FLEX_START"


def test_to_json_s_empty_strings_zeros_and_numbers_are_read_as_proto3(vertex_emulator: VertexEmulator) -> None:
    """The SDK's own to_json() writes "tpuTopology": "", "persistentResourceId": "", "state": 0, enums as numbers:
    unset values, as the real API reads them, so any client may send that JSON."""
    sent = json.loads(types.CustomJob.to_json(custom_job(l4(), labels={"team": "vision"})))
    machine = sent["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]
    assert machine["tpuTopology"] == "" and sent["jobSpec"]["persistentResourceId"] == "" and sent["state"] == 0
    assert machine["acceleratorType"] == 11
    api = vertex_emulator.discovery_client().projects().locations().customJobs()
    created = api.create(parent=vertex_emulator.parent, body=sent).execute()
    assert created["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorType"] == "NVIDIA_L4"
    assert created["state"] == "JOB_STATE_SUCCEEDED" and created["labels"] == {"team": "vision"}


def test_an_unknown_enum_number_is_refused(vertex_emulator: VertexEmulator) -> None:
    sent = json.loads(types.CustomJob.to_json(custom_job(l4())))
    sent["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorType"] = 99
    api = vertex_emulator.discovery_client().projects().locations().customJobs()
    with pytest.raises(Exception) as caught:
        api.create(parent=vertex_emulator.parent, body=sent).execute()
    error = json.loads(caught.value.content)["error"]  # type: ignore[attr-defined]
    assert error["code"] == 400 and "acceleratorType: invalid value 99 (expected one of: 0 (" in error["message"]
    assert vertex_emulator.state.jobs() == []


# ------------------------------------------------------------------------------------ get, list, cancel, delete


def test_get_list_by_label_and_page_cancel_and_delete(vertex_emulator: VertexEmulator) -> None:
    vertex_emulator.state.set_phase_seconds(FROZEN)
    client = vertex_emulator.job_client()
    names = [client.create_custom_job(parent=vertex_emulator.parent,
                                      custom_job=custom_job(l4(), name=f"job-{i}", labels={"team": team})).name
             for i, team in enumerate(["a", "b", "a"])]
    assert client.get_custom_job(name=names[0]).state == types.JobState.JOB_STATE_QUEUED

    team_a = client.list_custom_jobs(request={"parent": vertex_emulator.parent, "filter": 'labels.team="a"'})
    assert [j.display_name for j in team_a] == ["job-2", "job-0"]  # newest first
    pages = client.list_custom_jobs(request={"parent": vertex_emulator.parent, "page_size": 1}).pages
    assert [[j.display_name for j in page.custom_jobs] for page in pages] == [["job-2"], ["job-1"], ["job-0"]]
    tokens = [r["query"].get("pageToken") for r in vertex_emulator.state.requests("customJobs.list")]
    assert tokens[1] is None and all(tokens[2:])  # the pager sent the emulator's tokens back

    with pytest.raises(exceptions.BadRequest, match="must be cancelled first") as refused:  # REST: by HTTP status
        client.delete_custom_job(name=names[1])
    assert refused.value.response.json()["error"]["status"] == "FAILED_PRECONDITION"
    client.cancel_custom_job(name=names[1])
    cancelled = client.get_custom_job(name=names[1])
    assert cancelled.state == types.JobState.JOB_STATE_CANCELLED and cancelled.error.code == 1
    client.delete_custom_job(name=names[1]).result()  # the long-running operation, done
    with pytest.raises(exceptions.NotFound):
        client.get_custom_job(name=names[1])
    assert [j.display_name for j in client.list_custom_jobs(parent=vertex_emulator.parent)] == ["job-2", "job-0"]


def test_a_job_waited_for_on_the_emulator_clock(vertex_emulator: VertexEmulator) -> None:
    """Wait as a caller polls: each poll moves the emulated clock (never the wall clock) by one phase."""
    vertex_emulator.state.set_phase_seconds(60)
    client = vertex_emulator.job_client()
    name = client.create_custom_job(parent=vertex_emulator.parent, custom_job=custom_job(l4())).name
    seen = []
    while (state := client.get_custom_job(name=name).state) != types.JobState.JOB_STATE_SUCCEEDED:
        seen.append(state.name)
        vertex_emulator.state.advance(60)
    assert seen == ["JOB_STATE_QUEUED", "JOB_STATE_PENDING", "JOB_STATE_RUNNING"]
    done = client.get_custom_job(name=name)
    assert (done.end_time - done.start_time).total_seconds() == 60


# ------------------------------------------------------------------------------------------------ TPU v5e


@pytest.mark.parametrize(("machine_type", "topology"), [
    ("ct5lp-hightpu-1t", "1x1"), ("ct5lp-hightpu-4t", "2x2"), ("ct5lp-hightpu-4t", "4x4"),
    ("ct5lp-hightpu-4t", "16x16"), ("ct5lp-hightpu-8t", "2x4"),
])
def test_tpu_v5e_slices_are_created(vertex_emulator: VertexEmulator, machine_type: str, topology: str) -> None:
    created = vertex_emulator.job_client().create_custom_job(
        parent=vertex_emulator.parent, custom_job=custom_job(pool(machine_type=machine_type, tpu_topology=topology)))
    assert created.job_spec.worker_pool_specs[0].machine_spec.tpu_topology == topology


# ------------------------------------------------------------------------------------- refusals, Vertex's words

AT = "job_spec.worker_pool_specs[0].machine_spec"
REFUSALS: list[tuple[types.CustomJob, str, str]] = [
    (custom_job(l4(3)), f"{AT}.accelerator_count",
     'The accelerator count "3" is not allowed. The allowed numbers of accelerator "NVIDIA_L4" to use with machine '
     'type "g2-standard-8" are: [1].'),
    (custom_job(l4(1, "g2-standard-24")), f"{AT}.accelerator_count",
     'The accelerator count "1" is not allowed. The allowed numbers of accelerator "NVIDIA_L4" to use with machine '
     'type "g2-standard-24" are: [2].'),
    (custom_job(pool(machine_type="n1-standard-8", accelerator_type=types.AcceleratorType.NVIDIA_TESLA_T4,
                     accelerator_count=3)), f"{AT}.accelerator_count",
     'The accelerator count "3" is not allowed. The allowed numbers of accelerator "NVIDIA_TESLA_T4" to use with '
     'machine type "n1-standard-8" are: [1, 2, 4].'),
    (custom_job(pool(machine_type="n1-standard-4", accelerator_type=types.AcceleratorType.NVIDIA_TESLA_K80,
                     accelerator_count=1)), f"{AT}.accelerator_type",
     'Accelerator "NVIDIA_TESLA_K80" is not supported for machine type "n1-standard-4"'),
    (custom_job(pool(machine_type="e2-standard-8", accelerator_type=types.AcceleratorType.NVIDIA_TESLA_T4,
                     accelerator_count=1)), f"{AT}.accelerator_type",
     'Accelerator "NVIDIA_TESLA_T4" is not supported for machine type "e2-standard-8"'),
    (custom_job(pool(machine_type="g2-standard-8", accelerator_type=types.AcceleratorType.NVIDIA_L4)),
     f"{AT}.accelerator_type", "List of found errors:\t1.Field: job_spec.worker_pool_specs[0].machine_spec."
     "accelerator_type; Message: Both `accelerator_type` and `accelerator_count` should be specified or none.\t"),
    (custom_job(pool(machine_type="n1-standard-2")), f"{AT}.machine_type",
     'Machine type "n1-standard-2" is not supported.'),
    (custom_job(pool(machine_type="cloud-tpu", accelerator_type=types.AcceleratorType.TPU_V2, accelerator_count=16)),
     f"{AT}.accelerator_count", 'The accelerator count "16" is not allowed. The allowed numbers of accelerator '
     '"TPU_V2" to use with machine type "cloud-tpu" are: [8, 32, 64, ...].'),
    (custom_job(pool(machine_type="ct5lp-hightpu-4t", tpu_topology="3x3")), f"{AT}.tpu_topology",
     'The TPU topology "3x3" is not allowed. The allowed TPU topologies to use with machine type "ct5lp-hightpu-4t" '
     "are: [2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16]."),
    (custom_job(pool(machine_type="ct5lp-hightpu-8t", tpu_topology="4x4")), f"{AT}.tpu_topology",
     'The TPU topology "4x4" is not allowed. The allowed TPU topologies to use with machine type "ct5lp-hightpu-8t" '
     "are: [2x4]."),
    (custom_job(pool(machine_type="ct5lp-hightpu-4t")), f"{AT}.tpu_topology",
     f"List of found errors:\t1.Field: {AT}.tpu_topology; Message: Required field is not set.\t"),
    (custom_job(pool(machine_type="ct5lp-hightpu-4t", tpu_topology="2x2"), pool(2, machine_type="n1-standard-8")),
     "job_spec.worker_pool_specs", "When you use a TPU VM, you must only use a single worker pool for custom "
     "training, and you must configure this worker pool to use only one replica."),
]


@pytest.mark.parametrize(("job", "field", "message"), REFUSALS,
                         ids=[f"{i}-{f.rsplit('.', 1)[-1]}" for i, (_, f, _) in enumerate(REFUSALS)])
def test_vertex_s_refusals_in_vertex_s_words(vertex_emulator: VertexEmulator, job: types.CustomJob, field: str,
                                             message: str) -> None:
    with pytest.raises(exceptions.BadRequest) as caught:
        vertex_emulator.job_client().create_custom_job(parent=vertex_emulator.parent, custom_job=job)
    error = caught.value
    assert error.code == 400 and error.message.endswith(f": {message}")  # after the SDK's "POST <url>"
    (detail,) = error.details
    assert detail["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    assert detail["fieldViolations"][0]["field"] == field
    assert vertex_emulator.state.jobs() == []


def test_every_field_problem_is_listed_at_once(vertex_emulator: VertexEmulator) -> None:
    job = custom_job(pool(machine_type="g2-standard-8", accelerator_type=types.AcceleratorType.NVIDIA_L4),
                     pool(0, machine_type="ct5lp-hightpu-4t"), name="")
    with pytest.raises(exceptions.BadRequest) as caught:
        vertex_emulator.job_client().create_custom_job(parent=vertex_emulator.parent, custom_job=job)
    (detail,) = caught.value.details
    assert [v["field"] for v in detail["fieldViolations"]] == [
        "display_name", f"{AT}.accelerator_type", "job_spec.worker_pool_specs[1].replica_count",
        "job_spec.worker_pool_specs[1].machine_spec.tpu_topology",
    ]
    assert "\t4.Field: job_spec.worker_pool_specs[1].machine_spec.tpu_topology; Message: " in caught.value.message


# ------------------------------------------------------------------------------------------------- faults


def test_an_injected_503_reaches_the_sdk_and_a_retry_gets_through(vertex_emulator: VertexEmulator) -> None:
    client = vertex_emulator.job_client()
    vertex_emulator.state.inject_faults(503, count=1, method="customJobs.create")
    with pytest.raises(exceptions.ServiceUnavailable, match="injected by the emulator"):
        client.create_custom_job(parent=vertex_emulator.parent, custom_job=custom_job(l4()))
    assert vertex_emulator.state.jobs() == []  # the fault answered before anything was done

    name = client.create_custom_job(parent=vertex_emulator.parent, custom_job=custom_job(l4())).name
    vertex_emulator.state.inject_faults(503, count=2, method="customJobs.get")
    retry = Retry(predicate=if_exception_type(exceptions.ServiceUnavailable), initial=0.01, maximum=0.01)
    assert client.get_custom_job(name=name, retry=retry).name == name
    assert len(vertex_emulator.state.requests("customJobs.get")) == 3


def test_an_injected_429_is_resource_exhausted(vertex_emulator: VertexEmulator) -> None:
    vertex_emulator.state.inject_faults(429, method="customJobs.list")
    with pytest.raises(exceptions.TooManyRequests, match="Quota exceeded"):
        list(vertex_emulator.job_client().list_custom_jobs(parent=vertex_emulator.parent))


def test_a_paused_job_reads_paused_and_its_replicas_as_int64_text(vertex_emulator: VertexEmulator) -> None:
    """The SDK reads JOB_STATE_PAUSED (a job paused with POST /_emulator/pause), and its replica counts, answered as
    int64 text like Google's, as numbers."""
    vertex_emulator.state.set_phase_seconds(FROZEN)
    client = vertex_emulator.job_client()
    workers = pool(replicas=3, machine_type="n1-standard-4")
    created = client.create_custom_job(parent=vertex_emulator.parent, custom_job=custom_job(l4(), workers))
    assert [p.replica_count for p in created.job_spec.worker_pool_specs] == [1, 3]
    assert raw_get(vertex_emulator, created.name)["jobSpec"]["workerPoolSpecs"][1]["replicaCount"] == "3"
    vertex_emulator.state.pause_job(created.name)
    assert client.get_custom_job(name=created.name).state == types.JobState.JOB_STATE_PAUSED
    client.cancel_custom_job(name=created.name)
    assert client.get_custom_job(name=created.name).state == types.JobState.JOB_STATE_CANCELLED
