"""The one reader of a rendered request body's worker pools: what the cost, the plan's text and the guardrails
read of a job (machines, replicas, accelerators), whatever vocabulary it was written in and whatever backend it
goes to, because every one of them ends as a body (load.Judged.body).

Three bodies: a Vertex AI `CustomJob` (`jobSpec.workerPoolSpecs`), a Vertex AI `HyperparameterTuningJob`
(`trialJobSpec`, run `parallelTrialCount` trials at once, `maxTrialCount` in all) and an ml v1 `Job`
(`trainingInput`: a predefined tier's machines as catalog.TIER_MACHINES states them, or the CUSTOM roles as
written, legacy GPU types with their built-in GPUs, cloud_tpu workers with their TPU cores; with
`hyperparameters`, `maxParallelTrials` trials at once, `maxTrials` in all). A TPU VM pool is a slice: its
`tpuTopology` sets its chips and VMs (catalog.TPU_SLICES), not replicaCount.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from components.jobspec import catalog
from components.jobspec.core.names import DURATION


@dataclass(frozen=True)
class BodyPool:
    """One worker pool of a rendered body: `replicas` machines, each with `accelerator_count` accelerators."""

    path: str
    """Where the pool is in the body, e.g. jobSpec.workerPoolSpecs[1] or trainingInput.workerType."""
    machine_type: str | None
    """None where the body does not say (ml v1 STANDARD_1 / PREMIUM_1: the service chooses)."""
    replicas: int
    accelerator_type: str | None = None
    accelerator_count: int = 0
    role: str = ""
    """The task role (ml v1: master, worker, ...; Vertex: pool N), for the plan's lines."""
    note: str = ""
    """How the pool came about, where the body does not say it ("BASIC_TPU tier", "built in")."""
    tpu_topology: str | None = None
    """A TPU VM slice's shape (machineSpec.tpuTopology), e.g. 4x4."""
    hosts: int = 1
    """VMs per replica: a TPU slice's VMs (catalog.TPU_SLICES: ct5lp-hightpu-4t 4x4 is 4), else 1."""

    @property
    def accelerators(self) -> int:
        """Accelerators of the whole pool (TPU cores for cloud_tpu / cloud-tpu, as the body counts them; a TPU
        slice's chips)."""
        return self.accelerator_count * self.replicas if self.accelerator_type else 0

    @property
    def machines(self) -> int:
        """The VMs of the whole pool: replicas times the VMs of each (a TPU slice's hosts)."""
        return self.replicas * self.hosts


def as_int(value: Any, default: int = 0) -> int:
    """int64 values travel as text ("9") and Pulumi turns 8 into 8.0."""
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return default


def job_spec(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The Vertex CustomJobSpec of a body (a CustomJob's jobSpec, a tuning job's trialJobSpec), or None."""
    for key in ("jobSpec", "trialJobSpec"):
        spec = body.get(key)
        if isinstance(spec, Mapping):
            return spec
    return None


def _hyperparameters(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    ti = body.get("trainingInput")
    hp = ti.get("hyperparameters") if isinstance(ti, Mapping) else None
    return hp if isinstance(hp, Mapping) else None


def parallel_runs(body: Mapping[str, Any]) -> int:
    """How many copies of the job's cluster run at once: a tuning job's parallel trials (Vertex
    parallelTrialCount, ml v1 hyperparameters.maxParallelTrials, unset: 1), else 1."""
    if "trialJobSpec" in body:
        return max(1, as_int(body.get("parallelTrialCount"), 1))
    hp = _hyperparameters(body)
    return max(1, as_int(hp.get("maxParallelTrials"), 1)) if hp is not None else 1


def trial_count(body: Mapping[str, Any]) -> int:
    """How many times the job's cluster runs in all: a tuning job's trials (Vertex maxTrialCount, ml v1
    hyperparameters.maxTrials, unset: 1; never fewer than run at once), else 1."""
    if "trialJobSpec" in body:
        total = as_int(body.get("maxTrialCount"), 1)
    else:
        hp = _hyperparameters(body)
        total = as_int(hp.get("maxTrials"), 1) if hp is not None else 1
    return max(total, parallel_runs(body))


def timeout_of(body: Mapping[str, Any]) -> tuple[float, str] | None:
    """The longest the job may run, in seconds, and the body field that says so; None when the body sets none.

    Vertex AI: `scheduling.timeout` of the jobSpec (a tuning job's trialJobSpec: each trial's); ml v1:
    `trainingInput.scheduling.maxRunningTime` (the whole job's). Both are protobuf Durations ("7200s")."""
    spec = job_spec(body)
    if spec is not None:
        key = "jobSpec" if "jobSpec" in body else "trialJobSpec"
        scheduling, field = spec.get("scheduling"), f"{key}.scheduling.timeout"
        value = scheduling.get("timeout") if isinstance(scheduling, Mapping) else None
    else:
        ti = body.get("trainingInput")
        scheduling = ti.get("scheduling") if isinstance(ti, Mapping) else None
        field = "trainingInput.scheduling.maxRunningTime"
        value = scheduling.get("maxRunningTime") if isinstance(scheduling, Mapping) else None
    if not isinstance(value, str) or not DURATION.fullmatch(value) or float(value[:-1]) <= 0:
        return None  # unset (a malformed or zero value is refused by the rules before a body is made)
    return float(value[:-1]), field


def pools(body: Mapping[str, Any]) -> tuple[BodyPool, ...]:
    """The worker pools of a rendered body (empty pools `{}` left out)."""
    spec = job_spec(body)
    if spec is not None:
        key = "jobSpec" if "jobSpec" in body else "trialJobSpec"
        found = []
        for i, pool in enumerate(spec.get("workerPoolSpecs") or []):
            machine = pool.get("machineSpec") if isinstance(pool, Mapping) else None
            if not isinstance(machine, Mapping) or not machine:
                continue
            machine_type = machine.get("machineType")
            acc_type = machine.get("acceleratorType") or None
            count = as_int(machine.get("acceleratorCount")) if acc_type else 0
            host = catalog.TPU_HOSTS.get(str(machine_type))
            topology = machine.get("tpuTopology") or None
            hosts = 1
            if host is not None and not count:
                # A TPU VM host carries its chips (TPU v6e and TPU7x have no acceleratorType value at all:
                # they are named by their machine type); a slice of several VMs, as its topology says.
                acc_type, count = acc_type or host.accelerator or str(machine_type), host.chips_per_host
                count, hosts = catalog.TPU_SLICES.get((str(machine_type), str(topology)), (count, 1))
            found.append(BodyPool(f"{key}.workerPoolSpecs[{i}]", machine_type, as_int(pool.get("replicaCount"), 1),
                                  acc_type, count, role=f"pool {i}", tpu_topology=topology, hosts=hosts))
        return tuple(found)
    ti = body.get("trainingInput")
    return _ml_pools(ti) if isinstance(ti, Mapping) else ()


def _ml_pools(ti: Mapping[str, Any]) -> tuple[BodyPool, ...]:
    tier = ti.get("scaleTier") or catalog.DEFAULT_SCALE_TIER
    where = "trainingInput.scaleTier"
    if tier != "CUSTOM":
        machines = catalog.TIER_MACHINES.get(tier)
        if machines is None:  # the service chooses the machines
            return (BodyPool(where, None, 1, role="cluster", note=f"{tier} tier: machines chosen by the service"),)
        return tuple(BodyPool(where, machine, 1, acc[0] if acc else None, acc[1] if acc else 0, role=role,
                              note=f"{tier} tier") for role, machine, acc in machines)
    found = []
    for role in catalog.ROLES:
        machine = ti.get(f"{role}Type")
        replicas = 1 if role == "master" else as_int(ti.get(f"{role}Count"))
        if not machine or replicas <= 0:
            continue
        config = ti.get(f"{role}Config")
        acc = config.get("acceleratorConfig") if isinstance(config, Mapping) else None
        acc = acc if isinstance(acc, Mapping) else {}
        builtin = catalog.LEGACY_GPUS.get(machine)
        acc_type: str | None
        note = ""
        if builtin:
            (acc_type, count), note = builtin, "built in"
        elif machine == catalog.CLOUD_TPU:
            acc_type, count = acc.get("type") or catalog.TPU_V2, catalog.TPU_CORES
        else:
            acc_type, count = acc.get("type") or None, as_int(acc.get("count"))
        found.append(BodyPool(f"trainingInput.{role}Type", machine, replicas, acc_type, count if acc_type else 0,
                              role=role, note=note))
    return tuple(found)


def accelerators(body: Mapping[str, Any]) -> int:
    """Accelerators the job holds at once (all pools, all replicas, all parallel trials)."""
    return sum(p.accelerators for p in pools(body)) * parallel_runs(body)


def accelerator_totals(body: Mapping[str, Any]) -> dict[str, int]:
    """Accelerator type -> how many the job holds at once (all pools, replicas and parallel trials)."""
    totals: dict[str, int] = {}
    for pool in pools(body):
        if pool.accelerators:
            totals[str(pool.accelerator_type)] = totals.get(str(pool.accelerator_type), 0) + pool.accelerators
    runs = parallel_runs(body)
    return {kind: n * runs for kind, n in sorted(totals.items())}


def strategy(body: Mapping[str, Any]) -> str | None:
    """A Vertex job's scheduling strategy (None: STANDARD, on demand); None for ml v1 bodies."""
    spec = job_spec(body)
    scheduling = spec.get("scheduling") if spec is not None else None
    return scheduling.get("strategy") if isinstance(scheduling, Mapping) else None


def region_of(body: Mapping[str, Any], region: str | None = None) -> str | None:
    """The job's region: given (Vertex puts it in the URL, not the body), else trainingInput.region."""
    ti = body.get("trainingInput")
    return region or (ti.get("region") if isinstance(ti, Mapping) else None)
