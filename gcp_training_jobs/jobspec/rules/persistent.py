"""Rules on persistent resources: a declared resource's pools judged by the same pool rules as a job's (machine and
accelerator pairs, what its region offers, disks) and held to VMs and GPUs (no TPU), and Vertex's rule for a job on
one (catalog.SOURCE_PERSISTENT_RESOURCE): each of the job's worker pools matches one resource pool exactly (machineSpec,
and diskSpec with Vertex's defaults filled in), with a replicaCount at most that pool's replicaCount or
maxReplicaCount."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import date

from gcp_training_jobs.jobspec.catalog.vertex_jobspec import (
    SOURCE_PERSISTENT_RESOURCE,
    SOURCE_PERSISTENT_RESOURCE_OVERVIEW,
    boot_disk_of,
)
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.rules.vertex_hardware import Setting, rule_machines
from gcp_training_jobs.jobspec.rules.vertex_hardware import rule_region as rule_vertex_region
from gcp_training_jobs.jobspec.rules.vertex_pools import rule_disks
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.jobspec.translate.persistent import ResourceFacts
from gcp_training_jobs.jobspec.translate.pools import Pool


def rule_no_tpus(pools: Sequence[Pool], s: Setting) -> Iterator[Problem]:
    """A persistent resource holds VMs and GPUs only (catalog.SOURCE_PERSISTENT_RESOURCE_OVERVIEW): no TPU machine
    (pulumi-gcp's resource pool has no tpuTopology to describe one either)."""
    for pool in pools:
        if pool.is_tpu:
            yield Problem(pool.at("machineType"), f"{pool.machine_type} is a TPU machine; allowed: the VMs and GPUs "
                          "custom training jobs take (a persistent resource holds no TPU: "
                          f"{SOURCE_PERSISTENT_RESOURCE_OVERVIEW.url}); run a TPU job on its own machines")


#: The pool rules that apply to a resource's pools (a job's structure, code, images and strategy do not; a job's
#: TPU rules neither: a resource holds no TPU).
RESOURCE_POOL_RULES = (rule_machines, rule_vertex_region, rule_no_tpus, rule_disks)


def resource_problems(resource: ResourceFacts, *, region_at: str, today: date) -> list[Problem]:
    """What the pool rules and the replica rule find in a declared resource's pools, each named at its key."""
    setting = Setting(resource.region, region_at, today)
    problems = [problem for rule in RESOURCE_POOL_RULES for problem in rule(resource.pools, setting)]
    return list(dict.fromkeys(problems + list(replica_problems(resource))))


def replica_problems(resource: ResourceFacts) -> Iterator[Problem]:
    """Each pool's replicas as Vertex takes them: a replicaCount, or an autoscalingSpec whose maxReplicaCount is above
    its minReplicaCount (with a replicaCount, if given, between them: the count it starts with). Google's definition
    of the resource says so of minReplicaCount: "must be ≤ replica_count and < max_replica_count or will throw error"
    (GoogleCloudPlatform/magic-modules, mmv1/products/vertexai/PersistentResource.yaml at commit
    076e8db895f45921c2d3e3ba46e20a8e4acbe29e, read 2026-11-26)."""
    written = resource.spec.resource_pools if resource.spec else ()
    for pool, least, given in zip(resource.pools, resource.least, written, strict=False):
        scaling, count = given.autoscaling_spec, given.replica_count
        if least > pool.replica_count:
            yield Problem(pool.at("replicaCount"), f"{pool.replica_count} is below minReplicaCount {least}; "
                          "allowed: maxReplicaCount at least minReplicaCount")
        if scaling is None and count is None:
            yield Problem(pool.where, "no replicaCount; allowed: a replicaCount (its machines), or an "
                          "autoscalingSpec (minReplicaCount, maxReplicaCount)")
        elif scaling is not None and scaling.min_replica_count == scaling.max_replica_count:
            yield Problem(f"{pool.where}.autoscalingSpec.maxReplicaCount", f"{scaling.max_replica_count} equals "
                          "minReplicaCount; allowed: more than minReplicaCount (Vertex refuses an equal pair), or a "
                          "replicaCount without autoscalingSpec")
        elif scaling is not None and count is not None and not (
                scaling.min_replica_count <= count <= scaling.max_replica_count):
            yield Problem(f"{pool.where}.replicaCount", f"{count} is outside its autoscalingSpec "
                          f"{scaling.min_replica_count}..{scaling.max_replica_count}; allowed: from minReplicaCount "
                          "to maxReplicaCount, or unset (it starts at minReplicaCount)")


def _shape(pool: Pool) -> tuple[str | None, str | None, int, str, int]:
    """What must match exactly: machine type, accelerator type and count, boot disk type and size (defaults in)."""
    disk_type, disk_size = boot_disk_of(pool.machine_type, pool.disk_type, pool.disk_size_gb)
    kind = pool.accelerator_type or None
    return pool.machine_type, kind, (pool.accelerator_count or 0) if kind else 0, disk_type, disk_size


def pool_text(pool: Pool, replicas: str | None = None) -> str:
    """`n1-standard-8 x2 + 1 NVIDIA_TESLA_T4, disk pd-ssd 100 GB` (the wording of translate.pools.machine_text, with
    the disk; `replicas`: `1..4` for an autoscaling pool)."""
    machine, kind, count, disk_type, disk_size = _shape(pool)
    held = f" + {count} {kind}" if kind else ""
    return f"{machine or '(no machine type)'} x{replicas or pool.replica_count}{held}, disk {disk_type} {disk_size} GB"


def resource_pools_text(resource: ResourceFacts) -> str:
    """The resource's pools, each as `resourcePools[0] n1-standard-8 x1..4 + 1 NVIDIA_TESLA_T4, disk ...`."""
    parts = []
    for index, (pool, least) in enumerate(zip(resource.pools, resource.least, strict=True)):
        replicas = f"{least}..{pool.replica_count}" if least != pool.replica_count else None
        parts.append(f"resourcePools[{index}] {pool_text(pool, replicas)}")
    return "; ".join(parts)


def fit_problems(job: JobFacts, resource: ResourceFacts, prefix: str) -> Iterator[Problem]:
    """Each worker pool of a job on `resource` that fits none of its pools, named at `prefix` + the pool's path."""
    for pool in job.running:
        shape = _shape(pool)
        same = [r for r in resource.pools if _shape(r) == shape]
        if any(pool.replica_count <= r.replica_count for r in same):
            continue
        why = ("its replicaCount is more than the matching pool's" if same
               else "its machineSpec and diskSpec match none of its pools")
        yield Problem(f"{prefix}.{job.pool_path(pool)}",
                      f"{pool_text(pool)} does not fit persistent resource {resource.name} ({why}): its pools are "
                      f"{resource_pools_text(resource)}; allowed: a pool whose machineSpec and diskSpec match one "
                      "of the resource's pools exactly (unset disks are pd-ssd 100 GB), with replicaCount at most "
                      f"that pool's replicaCount or maxReplicaCount ({SOURCE_PERSISTENT_RESOURCE.url})")


__all__ = ["RESOURCE_POOL_RULES", "fit_problems", "pool_text", "replica_problems", "resource_pools_text",
           "resource_problems", "rule_no_tpus"]
