"""The Vertex AI v1 (aiplatform.googleapis.com) custom jobs surface: projects.locations.customJobs
create / get / list / cancel / delete and the operations.get of the delete operations it answers; and what
the hyperparameter tuning jobs surface (vertex_tuning) shares with it: the JSON, the display name, the
CustomJobSpec checks (a tuning job's trialJobSpec is one) and delete."""

from __future__ import annotations

import copy
import re
from typing import Any

from components.emulator.errors import ApiError, failed_precondition, invalid
from components.emulator.jobs import Job, Vocabulary, rfc3339, same_project
from components.emulator.routing import ITEM, Handler, Route, collection_path, job_routes, resource_pattern
from components.emulator.state import EmulatorState
from components.emulator.validation import check_labels, int_value, user_fields

_SCHEMA = "GoogleCloudAiplatformV1CustomJob"


def render(job: Job) -> dict[str, Any]:
    """The job's JSON as the real API answers it (user fields echoed as received)."""
    out: dict[str, Any] = {"name": job.name}
    out.update(copy.deepcopy(job.body))
    out.update(job.status(update_time=True))
    if job.state in ("JOB_STATE_FAILED", "JOB_STATE_CANCELLED") and job.error_message:
        out["error"] = {"code": job.error_code, "message": job.error_message}
    return out


def _display_name(job: Job) -> str | None:
    value = job.body.get("displayName")
    return value if isinstance(value, str) else None


VERTEX = Vocabulary(
    api="aiplatform", parent="projects/{project}/locations/{location}", collection="customJobs",
    prefix="JOB_STATE_", phases=("QUEUED", "PENDING", "RUNNING"), page_sizes=(100, 1000),
    messages=("The replica workerpool0-0 exited with a non-zero status of 1.", "CANCELED"),
    not_found="CustomJob {name} not found.",
    filter_fields={"display_name": _display_name, "displayName": _display_name}, render=render, kind="CustomJob",
)


def create(state: EmulatorState, project: str, location: str, body: Any) -> dict[str, Any]:
    """projects.locations.customJobs.create: server-assigned id, QUEUED job answered."""
    user = user_fields(body, "aiplatform", _SCHEMA, strict_int64=state.strict_int64)
    check_named(user, "custom_job")
    check_job_spec(user.get("jobSpec"), "custom_job.job_spec")
    with state.lock:
        return render(state.add_job(VERTEX, project, location, state.next_id(), user))


def check_named(user: dict[str, Any], resource: str) -> None:
    """A display name of 1 to 128 characters, and labels by Google's rules (`resource`: custom_job, ...)."""
    display_name = user.get("displayName")
    if not display_name:
        raise required(f"{resource}.display_name")
    if len(display_name) > 128:
        raise invalid(
            f"Field: {resource}.display_name Error: Display name must be at most 128 characters.",
            f"{resource}.display_name",
        )
    check_labels(user.get("labels"), f"{resource}.labels")


def delete(state: EmulatorState, vocab: Vocabulary, project: str, location: str, job_id: str) -> dict[str, Any]:
    """projects.locations.{customJobs,hyperparameterTuningJobs}.delete: a done Operation; unfinished jobs must
    be cancelled first."""
    with state.lock:
        job = state.find_job(vocab, project, location, job_id)
        if job.state not in vocab.finished:
            raise failed_precondition(
                f"{vocab.kind} {job.name} is in state {job.state} and cannot be deleted: it must be "
                "cancelled first (only finished jobs can be deleted)."
            )
        state.remove_job(job)
        now = rfc3339(state.now())
        return state.save_operation(
            {
                "name": f"projects/{project}/locations/{location}/operations/{state.next_id()}",
                "metadata": {
                    "@type": "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata",
                    "genericMetadata": {"createTime": now, "updateTime": now},
                },
                "done": True,
                "response": {"@type": "type.googleapis.com/google.protobuf.Empty"},
            }
        )


def get_operation(state: EmulatorState, project: str, location: str, operation_id: str) -> dict[str, Any]:
    """projects.locations.operations.get (the operations returned by delete)."""

    def match(name: str) -> bool:
        _, p, _, loc, _, op_id = name.split("/")
        return op_id == operation_id and loc == location and same_project(project, p)

    operation = state.find_operation(match)
    if operation is None:
        raise ApiError(
            404, f"Operation projects/{project}/locations/{location}/operations/{operation_id} not found.", "NOT_FOUND"
        )
    return operation


def vertex_routes(vocab: Vocabulary, create: Handler) -> list[Route]:
    """create, list, get, cancel and delete of a Vertex AI job collection (create is the collection's own)."""
    return [
        *job_routes(vocab, create),
        Route(
            "DELETE",
            re.compile(collection_path(vocab) + ITEM + "$"),
            f"{vocab.collection}.delete",
            lambda s, r: delete(s, vocab, r.project, r.location, r.job),
        ),
    ]


ROUTES: list[Route] = [
    *vertex_routes(VERTEX, lambda s, r: create(s, r.project, r.location, r.body)),
    Route(
        "GET",
        re.compile(resource_pattern(VERTEX.parent) + r"/operations/(?P<o>[^/:]+)$"),
        "operations.get",
        lambda s, r: get_operation(s, r.project, r.location, r.params["o"]),
    ),
]


def check_job_spec(spec: Any, at: str) -> None:
    """Vertex CustomJobSpec checks: non-empty worker pools with machine, replicas and code. `at` is the spec's
    field in error messages (custom_job.job_spec, hyperparameter_tuning_job.trial_job_spec)."""
    pools = spec.get("workerPoolSpecs") if isinstance(spec, dict) else None
    if not pools:
        raise invalid(
            f"Field: {at}.worker_pool_specs Error: At least one worker pool spec is required.",
            f"{at}.worker_pool_specs",
        )
    for index, pool in enumerate(pools):
        where = f"{at}.worker_pool_specs[{index}]"
        if not pool:
            if index == 0:
                raise invalid(f"Field: {where} Error: The first worker pool spec must not be empty.", where)
            continue
        machine = pool.get("machineSpec") or {}
        if not machine.get("machineType"):
            raise required(f"{where}.machine_spec.machine_type")
        replicas = int_value(pool.get("replicaCount"))
        if replicas is None or replicas < 1:
            raise invalid(f"Field: {where}.replica_count Error: The replica count must be at least 1.",
                          f"{where}.replica_count")
        if index == 0 and replicas != 1:
            raise invalid(f"Field: {where}.replica_count Error: The first worker pool must have exactly "
                          "one replica.", f"{where}.replica_count")
        _check_machine(machine, f"{where}.machine_spec")
        _check_disk(pool.get("diskSpec"), f"{where}.disk_spec")
        python, container = pool.get("pythonPackageSpec"), pool.get("containerSpec")
        if bool(python) == bool(container):
            raise invalid(
                f"Field: {where} Error: Exactly one of python_package_spec or container_spec must be set.",
                where,
            )
        if python:
            for key, snake in (("executorImageUri", "executor_image_uri"), ("packageUris", "package_uris"),
                               ("pythonModule", "python_module")):
                if not python.get(key):
                    raise required(f"{where}.python_package_spec.{snake}")
        elif not container.get("imageUri"):
            raise required(f"{where}.container_spec.image_uri")
    _check_scheduling(spec.get("scheduling"), f"{at}.scheduling")
    resource = spec.get("persistentResourceId")
    if resource is not None and not _RESOURCE_ID.fullmatch(resource):
        raise invalid(f"Field: {at}.persistent_resource_id Error: Invalid persistent resource id "
                      f"{resource!r}: it must match ^[a-z]([a-z0-9-]{{0,61}}[a-z0-9])?$.",
                      f"{at}.persistent_resource_id")


#: Machine types of TPU VM hosts, the only ones that take a tpuTopology (Vertex AI: TPU v5e ct5lp-hightpu-*,
#: v6e ct6e-standard-*, TPU7x tpu7x-standard-*).
_TPU_VM_PREFIXES = ("ct5lp-", "ct6e-", "tpu7x-")
_TOPOLOGY = re.compile(r"[1-9][0-9]*(x[1-9][0-9]*){1,2}")
_RESOURCE_ID = re.compile(r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?")
_DISK_TYPES = ("pd-ssd", "pd-standard", "hyperdisk-balanced")


def _check_machine(machine: dict[str, Any], where: str) -> None:
    """MachineSpec checks Vertex makes: accelerators need a type, a topology only (and always) on TPU VMs, a
    reservation affinity with a usable type and, for a specific reservation, its key and values."""
    machine_type = str(machine.get("machineType") or "")
    tpu_vm = machine_type.startswith(_TPU_VM_PREFIXES)
    topology = machine.get("tpuTopology")
    if topology is not None and not tpu_vm:
        raise invalid(f"Field: {where}.tpu_topology Error: tpu_topology is only supported for TPU VM machine types "
                      f"(ct5lp-hightpu-*, ct6e-standard-*, tpu7x-standard-*), not {machine_type}.",
                      f"{where}.tpu_topology")
    if tpu_vm and not topology:
        raise required(f"{where}.tpu_topology")
    if topology is not None and not _TOPOLOGY.fullmatch(str(topology)):
        raise invalid(f"Field: {where}.tpu_topology Error: Invalid TPU topology {topology!r} (e.g. 2x2 or 2x2x1).",
                      f"{where}.tpu_topology")
    count = int_value(machine.get("acceleratorCount"))
    if count and machine.get("acceleratorType") in (None, "ACCELERATOR_TYPE_UNSPECIFIED"):
        raise invalid(f"Field: {where}.accelerator_type Error: accelerator_type must be set when "
                      "accelerator_count is greater than 0.", f"{where}.accelerator_type")
    affinity = machine.get("reservationAffinity")
    if affinity is None:
        return
    at = f"{where}.reservation_affinity"
    kind = affinity.get("reservationAffinityType")
    if kind in (None, "TYPE_UNSPECIFIED"):
        raise required(f"{at}.reservation_affinity_type")
    if kind == "SPECIFIC_RESERVATION":
        if not affinity.get("key"):
            raise required(f"{at}.key")
        if not affinity.get("values"):
            raise required(f"{at}.values")
    elif affinity.get("key") or affinity.get("values"):
        raise invalid(f"Field: {at} Error: key and values may only be set with SPECIFIC_RESERVATION, not {kind}.", at)


def _check_disk(disk: Any, where: str) -> None:
    if not isinstance(disk, dict):
        return
    kind = disk.get("bootDiskType")
    if kind is not None and kind not in _DISK_TYPES:
        raise invalid(f"Field: {where}.boot_disk_type Error: Invalid boot disk type {kind!r}; supported: "
                      f"{', '.join(_DISK_TYPES)}.", f"{where}.boot_disk_type")
    size = int_value(disk.get("bootDiskSizeGb"))
    if size is not None and not 100 <= size <= 64000:
        raise invalid(f"Field: {where}.boot_disk_size_gb Error: The boot disk size must be between 100 and 64000 "
                      "GB.", f"{where}.boot_disk_size_gb")


def _check_scheduling(scheduling: Any, at: str) -> None:
    """Scheduling checks Vertex makes beyond the schema: durations that are not negative (the schema's
    enum check already refuses an unknown strategy)."""
    if not isinstance(scheduling, dict):
        return
    for key, snake in (("timeout", "timeout"), ("maxWaitDuration", "max_wait_duration")):
        value = scheduling.get(key)
        if isinstance(value, str) and value.startswith("-"):
            raise invalid(f"Field: {at}.{snake} Error: The duration must not be negative.", f"{at}.{snake}")


def required(field_name: str) -> ApiError:
    return invalid(f"Field: {field_name} Error: Required field is not set.", field_name)
