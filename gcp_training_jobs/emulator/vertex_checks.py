"""The checks Vertex AI makes of a CustomJobSpec at create (a custom job's jobSpec, a tuning job's trialJobSpec),
in two stages, on the proto3 view of the body (`proto_json.unset_defaults`: "", 0 and false are unset):

1. field checks, every problem at once in Vertex's "List of found errors" shape (`errors.found_errors`): what is
   required, replica counts, a type and a count of accelerators together or neither, TPU topology placement and
   form, reservations, boot disks, code (a Python package or a container), durations, a persistent resource id;
2. the machine Vertex must provide, in the sentences it answers on its own (`errors.refused`), first problem
   only: a known machine type, an accelerator the type takes, in a number it takes, a TPU topology the type
   offers, a TPU Pod in a region that runs it, TPUs in a single pool of one replica. Judged against `vertex_limits`,
   the emulator's own transcription.

Field paths are snake_case and relative to the resource, as Vertex names them for a CustomJob
("job_spec.worker_pool_specs[0].machine_spec.accelerator_type": prefect-gcp#175 and generative-ai#151, both
CreateCustomJob). Wording from real answers is marked REAL with where it was read; the rest is written in
Google's style because no real answer was found for that refusal (marked GOOGLE-STYLE).
"""

from __future__ import annotations

import re
from typing import Any

from gcp_training_jobs.emulator import vertex_limits as limits
from gcp_training_jobs.emulator.errors import found_errors, refused
from gcp_training_jobs.emulator.validation import int_value, label_problem

_TOPOLOGY = re.compile(r"[1-9][0-9]*(x[1-9][0-9]*){1,2}")
_RESOURCE_ID = re.compile(limits.PERSISTENT_RESOURCE_ID)
_DISK_TYPES = ("pd-ssd", "pd-standard", "hyperdisk-balanced")
_DISK_SIZE_GB = (100, 64_000)
_TPU_VMS = ", ".join(sorted({t.rsplit("-", 1)[0] + "-*" for t in limits.TPU_VM_TOPOLOGIES}))

# GOOGLE-STYLE (no real answer found for these refusals).
REQUIRED = "Required field is not set."
# REAL: the id rule of persistentResources.create (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/
# projects.locations.persistentResources/create, persistentResourceId), in the words of its 400.
RESOURCE_ID_WORDS = ("persistent_resource_id can only contain numbers, lower case letters and hyphens. The first "
                     "character must be a letter, and the last character must be a letter or number.")
# REAL: prefect-gcp#175 (2023-04-24), CreateCustomJob with acceleratorType and no acceleratorCount.
BOTH_OR_NONE = "Both `accelerator_type` and `accelerator_count` should be specified or none."


class Found:
    """The field violations of one request, raised together as Vertex lists them."""

    def __init__(self) -> None:
        self.violations: list[tuple[str, str]] = []

    def add(self, field: str, message: str) -> None:
        self.violations.append((field, message))

    def required(self, field: str) -> None:
        self.add(field, REQUIRED)

    def raise_if_any(self) -> None:
        if self.violations:
            raise found_errors(self.violations)


def join(at: str, name: str) -> str:
    """A field path below `at` ("" for the resource itself)."""
    return f"{at}.{name}" if at else name


def check_named(user: dict[str, Any], at: str, found: Found) -> None:
    """A display name of 1 to 128 characters and labels by Google's rules (`at`: "" for a CustomJob,
    "hyperparameter_tuning_job" for a tuning job)."""
    display_name = user.get("displayName")
    if not display_name:
        found.required(join(at, "display_name"))
    elif len(display_name) > 128:
        found.add(join(at, "display_name"), "Display name must be at most 128 characters.")  # GOOGLE-STYLE
    problem = label_problem(user.get("labels"))
    if problem:
        found.add(join(at, "labels"), problem)  # GOOGLE-STYLE (the emulator's wording of Google's label rules)


def check_job_spec(spec: Any, at: str, found: Found) -> None:
    """Stage 1 of a CustomJobSpec at `at` (job_spec, hyperparameter_tuning_job.trial_job_spec)."""
    pools = spec.get("workerPoolSpecs") if isinstance(spec, dict) else None
    if not pools:
        found.add(f"{at}.worker_pool_specs", "At least one worker pool spec is required.")  # GOOGLE-STYLE
        return
    for index, pool in enumerate(pools):
        where = f"{at}.worker_pool_specs[{index}]"
        if not pool:
            if index == 0:
                found.add(where, "The first worker pool spec must not be empty.")  # GOOGLE-STYLE
            continue
        machine = pool.get("machineSpec") or {}
        if not machine.get("machineType"):
            found.required(f"{where}.machine_spec.machine_type")
        replicas = int_value(pool.get("replicaCount"))
        if replicas is None or replicas < 1:
            found.add(f"{where}.replica_count", "The replica count must be at least 1.")  # GOOGLE-STYLE
        elif index == 0 and replicas != 1:
            # GOOGLE-STYLE
            found.add(f"{where}.replica_count", "The first worker pool must have exactly one replica.")
        _check_machine(machine, f"{where}.machine_spec", found)
        _check_disk(pool.get("diskSpec"), f"{where}.disk_spec", found, machine.get("machineType"))
        _check_code(pool, where, found)
    _check_scheduling(spec.get("scheduling"), f"{at}.scheduling", found)
    resource = spec.get("persistentResourceId")
    if resource is not None and not _RESOURCE_ID.fullmatch(str(resource)):
        found.add(f"{at}.persistent_resource_id", RESOURCE_ID_WORDS)


def check_resource_id(resource_id: Any, found: Found) -> None:
    """persistentResources.create's persistentResourceId (the query parameter): set, and by Vertex's rule."""
    if not resource_id:
        found.required("persistent_resource_id")
    elif not _RESOURCE_ID.fullmatch(str(resource_id)):
        found.add("persistent_resource_id", RESOURCE_ID_WORDS)


def check_resource_pool(pool: dict[str, Any], where: str, found: Found) -> None:
    """Stage 1 of a PersistentResource's ResourcePool: its machine and boot disk as a worker pool's, and its replicas:
    a replica count of at least 1, or an autoscaling spec whose min_replica_count is greater than 0, at most the
    replica count and less than max_replica_count (vertex_limits.PERSISTENT_RESOURCE_SOURCES, autoscaling)."""
    machine = pool.get("machineSpec") or {}
    if not machine.get("machineType"):
        found.required(f"{where}.machine_spec.machine_type")
    _check_machine(machine, f"{where}.machine_spec", found)
    _check_disk(pool.get("diskSpec"), f"{where}.disk_spec", found, machine.get("machineType"))
    replicas, scaling = int_value(pool.get("replicaCount")), pool.get("autoscalingSpec")
    if not isinstance(scaling, dict):
        if replicas is None or replicas < 1:
            found.add(f"{where}.replica_count", "The replica count must be at least 1.")  # GOOGLE-STYLE
        return
    at = f"{where}.autoscaling_spec"
    low, high = int_value(scaling.get("minReplicaCount")), int_value(scaling.get("maxReplicaCount"))
    # GOOGLE-STYLE below: the rules of the field descriptions, in their words where they have some.
    if low is None or low < 1:
        found.add(f"{at}.min_replica_count", "min_replica_count must be > 0 for a PersistentResource.")
    if high is None or (low is not None and high <= low):
        found.add(f"{at}.max_replica_count", "max_replica_count must be > min_replica_count.")
    if replicas is not None and low is not None and replicas < low:
        found.add(f"{at}.min_replica_count", "min_replica_count must be <= replica_count.")
    if replicas is not None and high is not None and high < replicas:
        found.add(f"{at}.max_replica_count", "max_replica_count must be >= replica_count.")


def check_hardware(machine: dict[str, Any], where: str) -> None:
    """Stage 2 of one machine spec: what Vertex can provide, in its words (first refusal only)."""
    _check_hardware(machine, where)


def _check_code(pool: dict[str, Any], where: str, found: Found) -> None:
    python, container = pool.get("pythonPackageSpec") or {}, pool.get("containerSpec") or {}
    if bool(python) == bool(container):
        found.add(where, "Exactly one of python_package_spec or container_spec must be set.")  # GOOGLE-STYLE
    elif python:
        for key, snake in (("executorImageUri", "executor_image_uri"), ("packageUris", "package_uris"),
                           ("pythonModule", "python_module")):
            if not python.get(key):
                found.required(f"{where}.python_package_spec.{snake}")
    elif not container.get("imageUri"):
        found.required(f"{where}.container_spec.image_uri")


def _check_machine(machine: dict[str, Any], where: str, found: Found) -> None:
    """MachineSpec fields: a topology only (and always) on TPU VMs and well formed; an accelerator type and count
    together or neither; a reservation affinity with a usable type and, for a specific one, its key and values."""
    machine_type = str(machine.get("machineType") or "")
    tpu_vm = machine_type in limits.TPU_VM_TOPOLOGIES
    topology = machine.get("tpuTopology")
    if topology is not None and not tpu_vm:
        found.add(f"{where}.tpu_topology", f"tpu_topology is only supported for TPU VM machine types ({_TPU_VMS}), "
                  f"not {machine_type}.")  # GOOGLE-STYLE
    elif tpu_vm and topology is None:
        found.required(f"{where}.tpu_topology")
    elif topology is not None and not _TOPOLOGY.fullmatch(str(topology)):
        # GOOGLE-STYLE
        found.add(f"{where}.tpu_topology", f"Invalid TPU topology {topology!r} (e.g. 2x2 or 2x2x1).")
    if (machine.get("acceleratorType") is None) != (machine.get("acceleratorCount") is None):
        found.add(f"{where}.accelerator_type", BOTH_OR_NONE)
    affinity = machine.get("reservationAffinity")
    if affinity is None:
        return
    at = f"{where}.reservation_affinity"
    kind = affinity.get("reservationAffinityType")
    if kind is None:
        found.required(f"{at}.reservation_affinity_type")
    elif kind == "SPECIFIC_RESERVATION":
        if not affinity.get("key"):
            found.required(f"{at}.key")
        if not affinity.get("values"):
            found.required(f"{at}.values")
    elif affinity.get("key") or affinity.get("values"):
        found.add(at, f"key and values may only be set with SPECIFIC_RESERVATION, not {kind}.")  # GOOGLE-STYLE


def _check_disk(disk: Any, where: str, found: Found, machine_type: Any = None) -> None:
    if not isinstance(disk, dict):
        return
    kind = disk.get("bootDiskType")
    if kind is not None and kind not in _DISK_TYPES:
        found.add(f"{where}.boot_disk_type", f"Invalid boot disk type {kind!r}; supported: "
                  f"{', '.join(_DISK_TYPES)}.")  # GOOGLE-STYLE
    elif kind is not None and machine_type in limits.HYPERDISK_ONLY_MACHINES \
            and kind != limits.BOOT_DISK_TYPE_HYPERDISK:
        # Vertex's words, as its INVALID_ARGUMENT answers a3-ultragpu-8g with pd-ssd (no Google page prints them)
        found.add(f"{where}.boot_disk_type", f"The machine type '{machine_type}' requires the boot disk type to be "
                  f"'{limits.BOOT_DISK_TYPE_HYPERDISK}'.")
    size = int_value(disk.get("bootDiskSizeGb"))
    low, high = _DISK_SIZE_GB
    if size is not None and not low <= size <= high:
        # GOOGLE-STYLE
        found.add(f"{where}.boot_disk_size_gb", f"The boot disk size must be between {low} and {high} GB.")


def _check_scheduling(scheduling: Any, at: str, found: Found) -> None:
    """Durations that are not negative (the schema check already refuses an unknown strategy)."""
    if not isinstance(scheduling, dict):
        return
    for key, snake in (("timeout", "timeout"), ("maxWaitDuration", "max_wait_duration")):
        value = scheduling.get(key)
        if isinstance(value, str) and value.startswith("-"):
            found.add(f"{at}.{snake}", "The duration must not be negative.")  # GOOGLE-STYLE


# ----------------------------------------------------------------------------------------- stage 2: machines


def check_machines(spec: dict[str, Any], at: str, location: str) -> None:
    """Stage 2 of a CustomJobSpec that passed stage 1: what Vertex can run in `location`, first refusal only."""
    pools = [(i, p) for i, p in enumerate(spec.get("workerPoolSpecs") or []) if p]
    for index, pool in pools:
        where = f"{at}.worker_pool_specs[{index}].machine_spec"
        machine = pool.get("machineSpec") or {}
        _check_hardware(machine, where)
        machine_type = machine.get("machineType")
        accelerator, count = machine.get("acceleratorType"), int_value(machine.get("acceleratorCount"))
        if not limits.pod_offered(str(machine_type), str(accelerator), count, location):
            # GOOGLE-STYLE, modelled on the REAL accelerator refusal (vertex-ai-samples#213) with the region.
            raise refused(f'TPU Pod of {count} "{accelerator}" cores is not supported in region "{location}".',
                          f"{where}.accelerator_count")
        if machine_type == limits.CLOUD_TPU or machine_type in limits.TPU_VM_TOPOLOGIES:
            replicas = int_value(pool.get("replicaCount"))
            if len(pools) > 1 or replicas != 1:
                # GOOGLE-STYLE, the page's rule in its own words ("TPUs": configure-compute, vertex_limits.SOURCE).
                raise refused("When you use a TPU VM, you must only use a single worker pool for custom training, "
                              "and you must configure this worker pool to use only one replica.",
                              f"{at}.worker_pool_specs")


def _check_hardware(machine: dict[str, Any], where: str) -> None:
    machine_type = str(machine.get("machineType"))
    accelerator, count = machine.get("acceleratorType"), int_value(machine.get("acceleratorCount"))
    if machine_type not in limits.MACHINE_TYPES:
        # GOOGLE-STYLE: 'Machine type "X" is not supported', Vertex's refusal as users quote it (no Google page
        # states the words); the real list also differs by region.
        raise refused(f'Machine type "{machine_type}" is not supported.', f"{where}.machine_type")
    if accelerator is not None and accelerator not in limits.accelerators(machine_type):
        # REAL: vertex-ai-samples#213 (2022-01-14) and python-docs-samples#13233 (2025-03-14).
        raise refused(f'Accelerator "{accelerator}" is not supported for machine type "{machine_type}"',
                      f"{where}.accelerator_type")
    if accelerator is not None and count is not None and not limits.counts_allowed(machine_type, accelerator, count):
        # REAL: vertex-ai-samples#3372 (2024-07-31).
        raise refused(f'The accelerator count "{count}" is not allowed. The allowed numbers of accelerator '
                      f'"{accelerator}" to use with machine type "{machine_type}" are: '
                      f"[{limits.counts_shown(machine_type, accelerator)}].", f"{where}.accelerator_count")
    if machine_type == limits.CLOUD_TPU and accelerator is None:
        # GOOGLE-STYLE, modelled on the page ("must be used with certain GPUs or TPUs").
        choices = " or ".join(f'"{a}"' for a in limits.CLOUD_TPU_COUNTS)
        raise refused(f'Machine type "{machine_type}" must be used with accelerator {choices}.',
                      f"{where}.accelerator_type")
    host = limits.TPU_VM_TOPOLOGIES.get(machine_type)
    topology = machine.get("tpuTopology")
    if host is not None and topology not in host[1]:
        # GOOGLE-STYLE, modelled on the REAL accelerator count refusal above.
        raise refused(f'The TPU topology "{topology}" is not allowed. The allowed TPU topologies to use with '
                      f'machine type "{machine_type}" are: [{", ".join(host[1])}].', f"{where}.tpu_topology")
