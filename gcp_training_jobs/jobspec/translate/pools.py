"""Worker pools in one form, whichever vocabulary a job is written in, so one set of rules judges both.

A `Pool` is one Vertex AI worker pool: its machine, accelerators, replicas, TPU topology, reservation, disk
and code, each value with the path the user wrote it at (`workerPoolSpecs[1].machineSpec.acceleratorCount`,
or `trainingInput.workerConfig.acceleratorConfig.count`; a GPU built into a legacy type is named at the
type, a tier's at `trainingInput.scaleTier`). A CustomJobSpec's pools are read as written (`spec_pools`); a
trainingInput's machines as AI Platform ran them (`ml_pools`, from `written_machine`, the one reading of a role's
machine), or translated as Vertex AI would run them (translate.training_input). `machine_text` is the one wording of
a machine and its accelerators.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.names import JOB_SPEC, TRAINING_INPUT
from gcp_training_jobs.jobspec.io.vocabulary import TRIAL, pool_path
from gcp_training_jobs.jobspec.vocab.jobs import VertexJob
from gcp_training_jobs.jobspec.vocab.training_input import ReplicaConfig, TrainingInput

if TYPE_CHECKING:
    from gcp_training_jobs.jobspec.vocab.custom_job import ReservationAffinity

TI = TRAINING_INPUT  # where a trainingInput's fields are, in problems


class Held(NamedTuple):
    """What each replica of a pool holds: its accelerator type (None: none), how many per replica, and its VMs."""

    kind: str | None
    per_replica: int
    vms: int

#: Where a Vertex AI body holds its CustomJobSpec: a CustomJob's jobSpec, a HyperparameterTuningJob's trials'.
VERTEX_SPEC_KEYS = (JOB_SPEC, TRIAL)


def scale_tier(ti: TrainingInput) -> str:
    """The job's scale tier, as AI Platform reads it (BASIC when unset)."""
    return ti.scale_tier or catalog.DEFAULT_SCALE_TIER


#: Image kinds: an executorImageUri (must be prebuilt), a custom container (judged only if it is a prebuilt
#: image), the prebuilt container a trainingInput's runtime version translates to.
EXECUTOR, CONTAINER, RUNTIME = "executor", "container", "runtime"


def machine_text(machine_type: str | None, accelerator_type: str | None, count: int | None,
                 replicas: int | None = None) -> str:
    """The one wording of a machine and its accelerators: `n1-standard-8 + 2 NVIDIA_TESLA_T4` (`?` for a count
    not given; `(no machine type)` for none), with its replicas when given: `n1-standard-8 x3 + 2 NVIDIA_TESLA_T4`."""
    text = machine_type or "(no machine type)"
    if replicas is not None:
        text += f" x{replicas}"
    if accelerator_type:
        text += f" + {count if count is not None else '?'} {accelerator_type}"
    return text


@dataclass(frozen=True)
class Pool:
    """One worker pool as Vertex AI runs it, and where the user wrote each of its values."""

    index: int
    where: str  # the pool as written: "workerPoolSpecs[1]", "trainingInput.workerType"
    machine_type: str | None = None
    accelerator_type: str | None = None
    accelerator_count: int | None = None
    replicas: int | None = None
    tpu_topology: str | None = None
    reservation: ReservationAffinity | None = None
    gpu_partition_size: str | None = None
    disk_type: str | None = None
    disk_size_gb: int | None = None
    code: tuple[str, ...] = ()  # "containerSpec" / "pythonPackageSpec", as given
    images: tuple[tuple[str, str, str], ...] = ()  # (path, image URI, EXECUTOR | CONTAINER | RUNTIME)
    empty: bool = False  # a placeholder `{}` (Vertex skips it)
    paths: Mapping[str, str] = field(default_factory=dict)
    role: str | None = None  # trainingInput: the task role
    config: ReplicaConfig | None = None  # trainingInput: the role's config, for the body
    custom_container_field: str = "containerSpec.imageUri"  # where a custom container goes, in this vocabulary
    note: str = ""  # how an ml v1 pool came about, where its fields do not say ("BASIC_TPU tier", "built in")
    chosen_by_service: bool = False  # ml v1 STANDARD_1 / PREMIUM_1: the service chooses the machines

    def at(self, key: str) -> str:
        """The path of one value of the pool (machineType, acceleratorCount, replicaCount, ...)."""
        return self.paths.get(key, self.where)

    @property
    def machine(self) -> str:
        """machineType, and accelerators as given, for messages: "n1-standard-8 + 2 NVIDIA_TESLA_T4"."""
        return machine_text(self.machine_type, self.accelerator_type, self.accelerator_count)

    @property
    def implied_accelerator(self) -> str | None:
        """The accelerator the pool runs with: the one given, else the one its machine type comes with."""
        if self.accelerator_type:
            return self.accelerator_type
        fixed = catalog.FIXED_ACCELERATOR_MACHINES.get(self.machine_type or "")
        if fixed:
            return fixed.accelerator
        host = catalog.TPU_HOSTS.get(self.machine_type or "")
        return host.accelerator or None if host else None

    @property
    def is_tpu(self) -> bool:
        return self.machine_type == catalog.CLOUD_TPU_MACHINE or self.machine_type in catalog.TPU_HOSTS

    @property
    def tpu_pod(self) -> bool:
        """Whether the pool is a TPU Pod: cloud-tpu with more cores than one device's (catalog.CLOUD_TPU_SINGLE_COUNT;
        a TPU v2 or v3 Pod slice, "32 or multiple of 32 for TPU Pods")."""
        return self.machine_type == catalog.CLOUD_TPU_MACHINE \
            and (self.accelerator_count or 0) > catalog.CLOUD_TPU_SINGLE_COUNT

    @property
    def runs(self) -> bool:
        """Whether the pool holds machines (not a placeholder `{}`, nor a pool without a machine)."""
        return not self.empty and (self.machine_type is not None or self.chosen_by_service)

    @property
    def held(self) -> Held:
        """What each replica holds (Held: accelerator type, accelerators per replica, VMs per replica): its
        accelerators as given; a TPU VM host without them holds its chips (TPU v6e and TPU7x have no
        acceleratorType value at all: they are named by their machine type), a slice of several VMs as its topology
        says
        (catalog.TPU_SLICES)."""
        kind = self.accelerator_type or None
        count = (self.accelerator_count or 0) if kind else 0
        host = catalog.TPU_HOSTS.get(self.machine_type or "")
        if host is None or count:
            return Held(kind, count, 1)
        chips, hosts = catalog.TPU_SLICES.get((str(self.machine_type), str(self.tpu_topology)),
                                              (host.chips_per_host, 1))
        return Held(kind or host.accelerator or self.machine_type, chips, hosts)

    @property
    def replica_count(self) -> int:
        """Replicas, as the API counts them (unset: 1)."""
        return self.replicas if self.replicas is not None else 1

    @property
    def accelerators(self) -> int:
        """Accelerators of the whole pool (TPU cores for Cloud TPU; a TPU slice's chips)."""
        held = self.held
        return held.per_replica * self.replica_count if held.kind else 0

    @property
    def machines(self) -> int:
        """The VMs of the whole pool: replicas times the VMs of each (a TPU slice's hosts)."""
        return self.replica_count * self.held.vms


# --- CustomJobSpec -----------------------------------------------------------------------------------------


def spec_pools(job: VertexJob) -> list[Pool]:
    """The pools of a CustomJobSpec, read as written."""
    pools: list[Pool] = []
    for index, wp in enumerate(job.spec.worker_pool_specs or []):
        base = pool_path(index, job.single_pool)
        if wp.is_placeholder:
            pools.append(Pool(index, base, empty=True))
            continue
        ms, disk = wp.machine_spec, wp.disk_spec
        images: list[tuple[str, str, str]] = []
        if wp.python_package_spec and wp.python_package_spec.executor_image_uri:
            images.append((f"{base}.pythonPackageSpec.executorImageUri", wp.python_package_spec.executor_image_uri,
                           EXECUTOR))
        if wp.container_spec and wp.container_spec.image_uri:
            images.append((f"{base}.containerSpec.imageUri", wp.container_spec.image_uri, CONTAINER))
        machine = f"{base}.machineSpec"
        pools.append(Pool(
            index, base,
            machine_type=ms.machine_type if ms else None,
            accelerator_type=ms.accelerator_type if ms and ms.accelerator_type != catalog.NO_ACCELERATOR else None,
            accelerator_count=ms.accelerator_count if ms else None,
            replicas=wp.replica_count,
            tpu_topology=ms.tpu_topology if ms else None,
            reservation=ms.reservation_affinity if ms else None,
            gpu_partition_size=ms.gpu_partition_size if ms else None,
            disk_type=disk.boot_disk_type if disk else None,
            disk_size_gb=disk.boot_disk_size_gb if disk else None,
            code=tuple(k for k, v in (("containerSpec", wp.container_spec),
                                      ("pythonPackageSpec", wp.python_package_spec)) if v is not None),
            images=tuple(images),
            paths={
                "machineSpec": machine, "machineType": f"{machine}.machineType",
                "acceleratorType": f"{machine}.acceleratorType", "acceleratorCount": f"{machine}.acceleratorCount",
                "tpuTopology": f"{machine}.tpuTopology", "reservationAffinity": f"{machine}.reservationAffinity",
                "gpuPartitionSize": f"{machine}.gpuPartitionSize", "replicaCount": f"{base}.replicaCount",
                "bootDiskType": f"{base}.diskSpec.bootDiskType", "bootDiskSizeGb": f"{base}.diskSpec.bootDiskSizeGb",
            },
        ))
    return pools


# --- trainingInput, translated -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RoleMachine:
    machine_type: str | None  # None: the service chooses (STANDARD_1, PREMIUM_1)
    accelerator_type: str | None
    accelerator_count: int | None
    replicas: int
    where: str  # the field the machine was written in
    accelerator_at: str  # where its accelerators were written (or come from)
    count_at: str
    replicas_at: str  # where its replica count was written (or comes from)
    note: str = ""


def written_machine(role: str, ti: TrainingInput) -> RoleMachine | None:
    """The machine of one role as AI Platform Training runs it, by the names it was written with (a legacy type
    with its built-in GPUs, a Cloud TPU worker with its cores); None where the role has no replicas. The one
    reading of what a scale tier runs (catalog.TIER_MACHINES)."""
    tier = scale_tier(ti)
    if tier != "CUSTOM":
        where = f"{TI}.scaleTier"
        shape = catalog.TIER_MACHINES.get(tier)
        if shape is None:  # STANDARD_1, PREMIUM_1: no documented composition
            return RoleMachine(None, None, None, 1, where, where, where, where,
                            f"{tier} tier: machines chosen by the service") if role == "master" else None
        for tier_role, tier_type, accelerators in shape:
            if tier_role == role:
                if tier_type == catalog.CLOUD_TPU:
                    accelerators = accelerators or (catalog.TPU_V2, catalog.TPU_CORES)
                kind, count = accelerators or (None, None)
                return RoleMachine(tier_type, kind, count, 1, where, where, where, where, f"{tier} tier")
        return None
    config = ti.role_config(role)
    mt, count = ti.role_type(role), ti.role_count(role) or 0
    if mt is None or count <= 0:
        return None
    where = f"{TI}.{role}Type"
    replicas_at = where if role == "master" else f"{TI}.{role}Count"
    acc = config.accelerator_config if config else None
    acc_path = f"{TI}.{role}Config.acceleratorConfig"
    if mt == catalog.CLOUD_TPU:
        kind = acc.type if acc and acc.type else catalog.TPU_V2
        cores = acc.count if acc and acc.count is not None else catalog.TPU_CORES
        return RoleMachine(mt, kind, cores, count, where, f"{acc_path}.type" if acc and acc.type else where,
                        f"{acc_path}.count" if acc and acc.count is not None else where, replicas_at)
    builtin = catalog.LEGACY_GPUS.get(mt)
    if builtin:
        return RoleMachine(mt, builtin[0], builtin[1], count, where, where, where, replicas_at, "built in")
    return RoleMachine(mt, acc.type if acc else None, acc.count if acc else None, count, where, f"{acc_path}.type",
                    f"{acc_path}.count", replicas_at)


def ml_pools(ti: TrainingInput) -> list[Pool]:
    """The pools AI Platform Training runs a trainingInput on, untranslated: each role's machine by the names
    it was written with (a tier's as catalog.TIER_MACHINES states them; STANDARD_1 and PREMIUM_1 one pool of
    machines the service chooses). What cost, quotas, guardrails and the plan read of an ml v1 job."""
    pools: list[Pool] = []
    for role in catalog.ROLES:
        m = written_machine(role, ti)
        if m is None:
            continue
        pools.append(Pool(
            len(pools), m.where, machine_type=m.machine_type, accelerator_type=m.accelerator_type,
            accelerator_count=m.accelerator_count, replicas=m.replicas,
            paths={"machineType": m.where, "acceleratorType": m.accelerator_at, "acceleratorCount": m.count_at,
                   "replicaCount": m.replicas_at},
            role=role if m.machine_type is not None else "cluster", config=ti.role_config(role), note=m.note,
            chosen_by_service=m.machine_type is None, custom_container_field="masterConfig.imageUri",
        ))
    return pools
