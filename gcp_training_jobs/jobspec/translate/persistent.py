"""A declared persistent resource in the one Pool form (translate.pools.Pool), so the pool rules judge it, and the
facts every later stage asks of it (cost, quotas, guardrails, the plan): `ResourceFacts`.

A resource pool becomes a Pool at `resourcePools[i]`, its replicas the most it may hold (`replicaCount`, or
`autoscalingSpec.maxReplicaCount`); `least` is what it holds at the least (`minReplicaCount` under autoscaling).
Its machines are billed while it exists (not per job): `as_job` gives it as JobFacts (kind PERSISTENT_RESOURCE,
no timeout of its own) at the most or the least, so the one pricing and the one quota count take it as they take
a job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError

from gcp_training_jobs.jobspec.core.names import VERTEX
from gcp_training_jobs.jobspec.translate.facts import PERSISTENT_RESOURCE, JobFacts, Timeout
from gcp_training_jobs.jobspec.translate.pools import Pool
from gcp_training_jobs.jobspec.vocab.persistent import PersistentResourceSpec, ResourcePool

#: pulumi-gcp's type of a persistent resource, as the engine, the diff and the policy pack see it.
RESOURCE_TYPE = "gcp:vertex/aiPersistentResource:AiPersistentResource"
#: The AiPersistentResource inputs that say what it holds, by the PersistentResourceSpec key they are read as (the
#: others, its project, name, network and encryption, hold no machines).
REGISTERED_KEYS = {"location": "region", "labels": "labels", "displayName": "displayName",
                   "resourcePools": "resourcePools"}


@dataclass(frozen=True)
class ResourceFacts:
    """One declared persistent resource: its name, region, labels and pools (replicas at the most), and each pool's
    replicas at the least (the same as at the most without autoscaling)."""

    name: str
    region: str | None
    labels: Mapping[str, str] = field(default_factory=dict)
    pools: tuple[Pool, ...] = ()
    least: tuple[int, ...] = ()
    spec: PersistentResourceSpec | None = None
    """The resource as written (parsed once): what the stack renders its AiPersistentResource from."""

    @property
    def autoscales(self) -> bool:
        """Whether it holds fewer machines at the least than at the most (spend prices both)."""
        return any(pool.replica_count != low for pool, low in zip(self.pools, self.least, strict=True))

    def as_job(self, at_least: bool = False) -> JobFacts:
        """Its machines as a job's facts (the most it holds, or the least): what cost and quotas take."""
        pools = (tuple(replace(p, replicas=low) for p, low in zip(self.pools, self.least, strict=True)) if at_least
                 else self.pools)
        return JobFacts(VERTEX, PERSISTENT_RESOURCE, self.region, None, Timeout(0.0, None, "a persistent resource"),
                        1, 1, dict(self.labels), pools)

    @property
    def accelerator_totals(self) -> dict[str, int]:
        """Accelerator type -> how many it holds at the most."""
        return self.as_job().accelerator_totals

    @property
    def accelerators(self) -> int:
        return self.as_job().accelerators


def _pool(index: int, pool: ResourcePool, at: str) -> tuple[Pool, int]:
    base = f"{at}.resourcePools[{index}]"
    ms, disk, scaling = pool.machine_spec, pool.disk_spec, pool.autoscaling_spec
    most = scaling.max_replica_count if scaling else pool.replica_count or 1
    least = scaling.min_replica_count if scaling else most
    machine = f"{base}.machineSpec"
    replicas_at = f"{base}.autoscalingSpec.maxReplicaCount" if scaling else f"{base}.replicaCount"
    return Pool(
        index, base, machine_type=ms.machine_type, accelerator_type=ms.accelerator_type,
        accelerator_count=ms.accelerator_count, replicas=most,
        disk_type=disk.boot_disk_type if disk else None, disk_size_gb=disk.boot_disk_size_gb if disk else None,
        paths={"machineSpec": machine, "machineType": f"{machine}.machineType",
               "acceleratorType": f"{machine}.acceleratorType", "acceleratorCount": f"{machine}.acceleratorCount",
               "replicaCount": replicas_at, "bootDiskType": f"{base}.diskSpec.bootDiskType",
               "bootDiskSizeGb": f"{base}.diskSpec.bootDiskSizeGb"},
    ), least


def resource_facts(name: str, spec: PersistentResourceSpec, *, region: str | None, labels: Mapping[str, str],
                   at: str) -> ResourceFacts:
    """A declared resource's facts; `at`: where it is declared (`gcp-training-jobs:persistentResources.NAME`), which
    every pool's paths start with; `region` and `labels`: the stack's filled in."""
    read = [_pool(i, pool, at) for i, pool in enumerate(spec.resource_pools)]
    return ResourceFacts(name, spec.region or region, {**labels, **(spec.labels or {})},
                         tuple(p for p, _ in read), tuple(low for _, low in read), spec)


#: What a resource pool's fit is read from, in a PersistentResource as the API answers it (the rest of a pool, its
#: id and usedReplicaCount, says nothing of what a job may ask).
POOL_FIELDS = {"machineSpec": ("machineType", "acceleratorType", "acceleratorCount"), "replicaCount": None,
               "autoscalingSpec": ("minReplicaCount", "maxReplicaCount"),
               "diskSpec": ("bootDiskType", "bootDiskSizeGb")}


def _pool_as_written(pool: Any) -> Any:
    if not isinstance(pool, Mapping):
        return pool
    out: dict[str, Any] = {}
    for key, fields in POOL_FIELDS.items():
        value = pool.get(key)
        if value is not None:
            out[key] = ({k: value[k] for k in fields if value.get(k) is not None}
                        if fields and isinstance(value, Mapping) else value)
    return out


def api_facts(name: str, resource: Mapping[str, Any], region: str) -> ResourceFacts | None:
    """An existing resource's facts from persistentResources.get's answer (its pools' machines, replicas and disks;
    None when they cannot be read): what the check of a job on it holds the job's pools to."""
    pools = resource.get("resourcePools")
    return _read(name, {"resourcePools": [_pool_as_written(p) for p in pools] if isinstance(pools, list) else pools},
                 region=region)


def registered_facts(name: str, inputs: Mapping[str, Any]) -> ResourceFacts | None:
    """A registered AiPersistentResource's facts, from its inputs as the engine receives them (camelCase, int64 as
    text): what the policy pack counts. None when they cannot be read as a PersistentResource (a value unknown at
    preview, or a resource this project did not write: it is judged where it is declared, not here)."""
    written = {key: inputs[field] for field, key in REGISTERED_KEYS.items() if inputs.get(field) is not None}
    return _read(str(inputs.get("name") or name), written, region=None, at=name)


def _read(name: str, written: Mapping[str, Any], *, region: str | None, at: str | None = None) -> ResourceFacts | None:
    """A resource as written (its spec's keys) into its facts, its own labels only; None when it is not one."""
    try:
        spec = PersistentResourceSpec.model_validate(written)
    except ValidationError:
        return None
    return resource_facts(name, spec, region=region, labels={}, at=at or name)
