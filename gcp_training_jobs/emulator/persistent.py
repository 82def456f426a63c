"""The Vertex AI v1 persistent resources surface: projects.locations.persistentResources create (a long-running
operation; the resource PROVISIONING, then RUNNING on the emulator's clock: `persistent_store`), get, list (paged as
the job lists), delete (an operation; STOPPING, then gone) and the operations' get; and the check Vertex makes of a
CustomJobSpec that names one (`check_job`: a custom job's jobSpec, a tuning job's trialJobSpec).

Create checks, every field problem at once as for a CustomJob (`vertex_checks.Found`): the schema, the id
(`vertex_limits.PERSISTENT_RESOURCE_ID`), a display name of at most 128 characters and Google's labels, at least one
resource pool, each with a machine and disk as a worker pool's and replicas (a count, or an autoscaling spec); then
the machines Vertex can provide, in its words; an id in use answers 409 ALREADY_EXISTS; the resource's machines count
against the quota limits (a 429 as a job's).

A job on a resource (`vertex_limits.PERSISTENT_RESOURCE_SOURCES`, "Run training jobs on a persistent resource"):
the resource exists in the job's project and location (else 404 NOT_FOUND), is RUNNING (else 400
FAILED_PRECONDITION), and each worker pool matches one resource pool exactly (machine type, accelerator type and
count, TPU topology; boot disk type and size, Vertex's defaults where unset) with a replica count at most that
pool's replica count, or its maxReplicaCount under autoscaling (else 400 INVALID_ARGUMENT naming the pool's field).
No real answer was found for these refusals: the words are the emulator's, in Google's style.
"""

from __future__ import annotations

import re
from typing import Any

from gcp_training_jobs.emulator import capacity, proto_json, vertex_checks
from gcp_training_jobs.emulator import vertex_limits as limits
from gcp_training_jobs.emulator.errors import ApiError, failed_precondition, refused
from gcp_training_jobs.emulator.jobs import rfc3339, same_project
from gcp_training_jobs.emulator.listing import decode_token, encode_token, page_size
from gcp_training_jobs.emulator.persistent_store import ERROR, RUNNING, STOPPING, Operation, Resource
from gcp_training_jobs.emulator.routing import Request, Route, resource_pattern
from gcp_training_jobs.emulator.state import EmulatorState
from gcp_training_jobs.emulator.validation import int_value, label_problem, vertex_fields

SCHEMA = "GoogleCloudAiplatformV1PersistentResource"
_LIST_SCHEMA = "GoogleCloudAiplatformV1ListPersistentResourcesResponse"
_TYPE = "type.googleapis.com/google.cloud.aiplatform.v1."
_PAGE_SIZES = (100, 1000)
#: Cancelled before it ran: the error of a create whose resource was deleted while PROVISIONING.
_DELETED_WHILE_PROVISIONING = "The PersistentResource was deleted before it was running."


def _name(project: str, location: str, resource_id: str) -> str:
    return f"projects/{project}/locations/{location}/persistentResources/{resource_id}"


def _not_found(project: str, location: str, resource_id: str) -> ApiError:
    return ApiError(404, f"PersistentResource {_name(project, location, resource_id)} not found.", "NOT_FOUND")


def _found(state: EmulatorState, project: str, location: str, resource_id: str) -> Resource:
    state.settle_resources()
    resource = state.persistent.find(project, location, resource_id)
    if resource is None:
        raise _not_found(project, location, resource_id)
    return resource


def _answer(resource: Resource) -> dict[str, Any]:
    """The resource's JSON with its int64 fields as strings (what an operation's response carries too)."""
    answer: dict[str, Any] = proto_json.int64_strings("aiplatform", SCHEMA, resource.render())
    return answer


# ----------------------------------------------------------------------------------------------------- methods


def create(state: EmulatorState, project: str, location: str, resource_id: Any, body: Any) -> dict[str, Any]:
    """persistentResources.create: the checks above, then the resource PROVISIONING and its create operation."""
    user, judged = vertex_fields(body, SCHEMA, strict_int64=state.strict_int64)
    found = vertex_checks.Found()
    vertex_checks.check_resource_id(resource_id, found)
    display_name = judged.get("displayName")
    if display_name and len(display_name) > 128:
        found.add("display_name", "Display name must be at most 128 characters.")  # GOOGLE-STYLE
    problem = label_problem(judged.get("labels"))
    if problem:
        found.add("labels", problem)  # GOOGLE-STYLE (the emulator's wording of Google's label rules)
    pools = judged.get("resourcePools") or []
    if not pools:
        found.add("resource_pools", "At least one resource pool is required.")  # GOOGLE-STYLE
    for index, pool in enumerate(pools):
        vertex_checks.check_resource_pool(pool, f"resource_pools[{index}]", found)
    found.raise_if_any()
    for index, pool in enumerate(pools):
        vertex_checks.check_hardware(pool["machineSpec"], f"resource_pools[{index}].machine_spec")
    rid = str(resource_id)
    with state.lock:
        state.settle_resources()
        if state.persistent.find(project, location, rid) is not None:
            # GOOGLE-STYLE: google.rpc.Code ALREADY_EXISTS (6) on HTTP 409, as Google answers a taken id.
            raise ApiError(409, f"PersistentResource {_name(project, location, rid)} already exists.",
                           "ALREADY_EXISTS")
        over = state.quota_refusal(project, location, capacity.resource_needs(user))
        if over is not None:
            raise ApiError(429, over, "RESOURCE_EXHAUSTED")
        now = state.now()
        resource = state.persistent.add(project, location, rid, user, judged, now)
        state.settle_resources()
        return _operation(state, resource, "create", now)


def get(state: EmulatorState, project: str, location: str, resource_id: str) -> dict[str, Any]:
    with state.lock:
        return _answer(_found(state, project, location, resource_id))


def list_resources(state: EmulatorState, project: str, location: str, size: int | None,
                   token: str | None) -> dict[str, Any]:
    """persistentResources.list: newest first, one page and the next page's token (as the job lists)."""
    with state.lock:
        state.settle_resources()
        every = sorted(state.persistent.in_location(project, location), key=lambda r: r.seq, reverse=True)
        if token:
            after = decode_token(token)
            every = [r for r in every if r.seq < after]
        count = page_size(size, *_PAGE_SIZES)
        page = every[:count]
        out: dict[str, Any] = {}
        if page:
            out["persistentResources"] = [_answer(r) for r in page]
        if len(every) > count:
            out["nextPageToken"] = encode_token(page[-1].seq)
        return out


def delete(state: EmulatorState, project: str, location: str, resource_id: str) -> dict[str, Any]:
    """persistentResources.delete: STOPPING for one phase, then gone; a resource already stopping answers 400
    FAILED_PRECONDITION."""
    with state.lock:
        resource = _found(state, project, location, resource_id)
        if resource.state == STOPPING:
            raise failed_precondition(f"PersistentResource {resource.name} is already being deleted (STOPPING).")
        now = state.now()
        state.persistent.stop(resource, now)
        state.settle_resources()
        return _operation(state, resource, "delete", now)


def get_operation(state: EmulatorState, project: str, location: str, resource_id: str,
                  operation_id: str) -> dict[str, Any]:
    """projects.locations.persistentResources.operations.get: done once the resource is RUNNING or ERROR (create) or
    gone (delete)."""
    name = f"{_name(project, location, resource_id)}/operations/{operation_id}"
    with state.lock:
        state.settle_resources()
        operation = next((o for o in state.persistent.operations.values() if o.name.rsplit("/", 1)[-1] == operation_id
                          and o.resource.resource_id == resource_id and o.resource.location == location
                          and same_project(project, o.resource.project)), None)
        if operation is None:
            raise ApiError(404, f"Operation {name} not found.", "NOT_FOUND")
        return _render_operation(operation)


def _operation(state: EmulatorState, resource: Resource, kind: str, now: float) -> dict[str, Any]:
    name = f"{resource.name}/operations/{state.next_id()}"
    operation = Operation(name, kind, resource, now)
    state.persistent.operations[name] = operation
    return _render_operation(operation)


def _render_operation(operation: Operation) -> dict[str, Any]:
    resource = operation.resource
    kind = "CreatePersistentResourceOperationMetadata" if operation.kind == "create" else "DeleteOperationMetadata"
    out: dict[str, Any] = {"name": operation.name, "metadata": {
        "@type": _TYPE + kind,
        "genericMetadata": {"createTime": rfc3339(operation.created), "updateTime": rfc3339(resource.updated)},
    }}
    if operation.kind == "delete":
        if resource.gone:
            out.update(done=True, response={"@type": "type.googleapis.com/google.protobuf.Empty"})
        return out
    if resource.start is not None:
        out.update(done=True, response={"@type": _TYPE + "PersistentResource", **_answer(resource)})
    elif resource.state == ERROR and resource.error is not None:
        out.update(done=True, error=dict(resource.error))
    elif resource.gone:
        out.update(done=True, error={"code": 1, "message": _DELETED_WHILE_PROVISIONING})
    return out


# ------------------------------------------------------------------------------------------ a job on a resource


def check_job(state: EmulatorState, project: str, location: str, spec: dict[str, Any], at: str) -> None:
    """A CustomJobSpec at `at` (its proto3 reading) that names a persistent resource: it exists here, is RUNNING,
    and each worker pool fits one of its resource pools (first refusal only). Called under the state's lock."""
    resource_id = spec.get("persistentResourceId")
    if not resource_id:
        return
    resource = _found(state, project, location, str(resource_id))
    if resource.state != RUNNING:
        # GOOGLE-STYLE
        raise failed_precondition(f"PersistentResource {resource.name} is in state {resource.state}: jobs can only "
                                  "be created on a RUNNING persistent resource.")
    shown = "; ".join(_shown(i, p) for i, p in enumerate(resource.judged.get("resourcePools") or []))
    for index, pool in enumerate(spec.get("workerPoolSpecs") or []):
        if pool:
            _fit(pool, f"{at}.worker_pool_specs[{index}]", resource, shown)


def _machine(pool: dict[str, Any]) -> tuple[str, str, int, str]:
    """What of a machine spec must match: type, accelerator type and count, TPU topology."""
    machine = pool.get("machineSpec") or {}
    return (str(machine.get("machineType") or ""), str(machine.get("acceleratorType") or ""),
            int_value(machine.get("acceleratorCount")) or 0, str(machine.get("tpuTopology") or ""))


def _disk(pool: dict[str, Any]) -> tuple[str, int]:
    return limits.boot_disk(_machine(pool)[0], pool.get("diskSpec"))


def _capacity(pool: dict[str, Any]) -> tuple[int, str]:
    """How many replicas a resource pool takes (its replica count, or maxReplicaCount under autoscaling)."""
    scaling = pool.get("autoscalingSpec")
    if isinstance(scaling, dict) and int_value(scaling.get("maxReplicaCount")):
        return int_value(scaling.get("maxReplicaCount")) or 0, "max_replica_count"
    return int_value(pool.get("replicaCount")) or 0, "replica_count"


def _shown(index: int, pool: dict[str, Any]) -> str:
    disk_type, disk_size = _disk(pool)
    replicas, field = _capacity(pool)
    named = f" ({pool['id']})" if pool.get("id") else ""
    return (f"resource_pools[{index}]{named}: {_spec(_machine(pool))}, {disk_type} {disk_size} GB, "
            f"{field} {replicas}")


def _fit(pool: dict[str, Any], where: str, resource: Resource, shown: str) -> None:
    pools = resource.judged.get("resourcePools") or []
    machine = _machine(pool)
    same_machine = [p for p in pools if _machine(p) == machine]
    if not same_machine:
        # GOOGLE-STYLE
        raise refused(f"The machine_spec of {where} ({_spec(machine)}) matches no resource pool of "
                      f"PersistentResource {resource.name} ({shown}).", f"{where}.machine_spec")
    disk = _disk(pool)
    same_disk = [p for p in same_machine if _disk(p) == disk]
    if not same_disk:
        # GOOGLE-STYLE
        raise refused(f"The disk_spec of {where} ({disk[0]} {disk[1]} GB) matches no resource pool of "
                      f"PersistentResource {resource.name} with its machine_spec ({shown}).", f"{where}.disk_spec")
    replicas = int_value(pool.get("replicaCount")) or 0
    if all(replicas > _capacity(p)[0] for p in same_disk):
        top, field = max(_capacity(p) for p in same_disk)
        # GOOGLE-STYLE
        raise refused(f"The replica_count of {where} ({replicas}) is greater than the {field} ({top}) of the "
                      f"matching resource pool of PersistentResource {resource.name}.", f"{where}.replica_count")


def _spec(machine: tuple[str, str, int, str]) -> str:
    machine_type, accelerator, count, topology = machine
    gpus = f", {count} {accelerator}" if accelerator else ""
    return machine_type + gpus + (f", topology {topology}" if topology else "")


# ------------------------------------------------------------------------------------------------------ routes

_COLLECTION = resource_pattern("projects/{project}/locations/{location}") + "/persistentResources"
_ITEM = _COLLECTION + r"/(?P<r>[^/:]+)"


def _list(state: EmulatorState, r: Request) -> dict[str, Any]:
    return list_resources(state, r.project, r.location, r.page_size(), r.query.get("pageToken") or None)


ROUTES: list[Route] = [
    Route("POST", re.compile(_COLLECTION + "$"), "persistentResources.create",
          lambda s, r: create(s, r.project, r.location, r.query.get("persistentResourceId"), r.body)),
    Route("GET", re.compile(_COLLECTION + "$"), "persistentResources.list", _list, ("aiplatform", _LIST_SCHEMA)),
    Route("GET", re.compile(_ITEM + "$"), "persistentResources.get",
          lambda s, r: get(s, r.project, r.location, r.params["r"]), ("aiplatform", SCHEMA)),
    Route("DELETE", re.compile(_ITEM + "$"), "persistentResources.delete",
          lambda s, r: delete(s, r.project, r.location, r.params["r"])),
    *(Route("GET", re.compile(prefix + _ITEM.removeprefix("^/v1") + r"/operations/(?P<o>[^/:]+)$"),
            "persistentResources.operations.get",
            lambda s, r: get_operation(s, r.project, r.location, r.params["r"], r.params["o"]))
      # The SDK's REST transport asks the /ui/ binding of GetOperation first (google-api-core operations_v1 takes the
      # first http rule that matches; aiplatform_v1's persistent_resource_service rest_base lists /ui/ before /v1/).
      for prefix in ("^/v1", "^/ui")),
]
