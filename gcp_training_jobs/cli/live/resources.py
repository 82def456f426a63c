"""`status`'s persistent resources: the ones the stack declares and the ones its jobs run on, listed from the API
(backends.persistent_resources: persistentResources.list in each region where one is), each with its state, its
pools and the jobs found on it (a job's `persistentResourceId`, from its facts). `stack_resources` is the one read:
`spend` prices what it finds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gcp_training_jobs.backends import persistent_resources
from gcp_training_jobs.cli.live.jobs import FoundJob, Stack


def _wanted(stack: Stack, jobs: Iterable[FoundJob]) -> dict[str, set[str]]:
    """region -> the resource ids to show there: declared, named by a job of the stack file, or by a job found."""
    settings = stack.settings
    wanted: dict[str, set[str]] = {}
    for resource_id, held in settings.resources.items():
        wanted.setdefault(held.region or settings.region, set()).add(resource_id)
    for job in settings.jobs.values():
        if job.facts.on_persistent_resource:
            wanted.setdefault(job.facts.region or settings.region, set()).add(job.facts.on_persistent_resource)
    for found in jobs:
        if found.facts.on_persistent_resource:
            wanted.setdefault(found.target.region, set()).add(found.facts.on_persistent_resource)
    return wanted


def _pool(pool: Mapping[str, Any]) -> dict[str, Any]:
    machine = pool.get("machineSpec") or {}
    scaling = pool.get("autoscalingSpec") or {}
    return {"machineType": machine.get("machineType"), "acceleratorType": machine.get("acceleratorType"),
            "acceleratorCount": machine.get("acceleratorCount"), "replicaCount": pool.get("replicaCount"),
            "usedReplicaCount": pool.get("usedReplicaCount"),
            "minReplicaCount": scaling.get("minReplicaCount"), "maxReplicaCount": scaling.get("maxReplicaCount")}


@dataclass(frozen=True)
class HeldResource:
    """One persistent resource of the stack (declared, or named by a job) as the API holds it (None: it holds none,
    deleted or never made), with the jobs found on it."""

    id: str
    region: str
    resource: dict[str, Any] | None
    declared: bool
    jobs: tuple[str, ...]

    @property
    def state(self) -> str:
        return str(self.resource.get("state")) if self.resource else "NOT_FOUND"


def stack_resources(stack: Stack, jobs: list[FoundJob]) -> list[HeldResource]:
    """Each persistent resource of the stack, read from the API (persistentResources.list in each region where
    one is): what `status` shows and `spend` prices."""
    held: list[HeldResource] = []
    for region, ids in sorted(_wanted(stack, jobs).items()):
        listed = {str(r.get("name", "")).rsplit("/", 1)[-1]: r
                  for r in persistent_resources.list_resources(stack.settings.project, region, stack.endpoint)}
        for resource_id in sorted(ids):
            on = tuple(sorted(j.name or j.job_id for j in jobs
                              if j.facts.on_persistent_resource == resource_id and j.target.region == region))
            held.append(HeldResource(resource_id, region, listed.get(resource_id),
                                     resource_id in stack.settings.resources, on))
    return held


def resources_status(stack: Stack, jobs: list[FoundJob]) -> list[dict[str, Any]]:
    """Each persistent resource of the stack as the API holds it (or `state: NOT_FOUND` when it holds none)."""
    return [{"id": r.id, "region": r.region, "state": r.state, "declared": r.declared,
             "pools": [_pool(p) for p in (r.resource or {}).get("resourcePools") or []], "jobs": list(r.jobs)}
            for r in stack_resources(stack, jobs)]


def resource_lines(resources: list[dict[str, Any]]) -> list[str]:
    """`  persistent resource team-pool: RUNNING (us-central1; declared); jobs on it: train`, then its pools."""
    lines = []
    for item in resources:
        where = item["region"] + ("; declared" if item["declared"] else "")
        jobs = ", ".join(item["jobs"]) or "none"
        lines.append(f"  persistent resource {item['id']}: {item['state']} ({where}); jobs on it: {jobs}")
        for index, pool in enumerate(item["pools"]):
            kind = f" + {pool['acceleratorCount']} {pool['acceleratorType']}" if pool["acceleratorType"] else ""
            scale = (f", autoscaling {pool['minReplicaCount']}..{pool['maxReplicaCount']}"
                     if pool["maxReplicaCount"] else "")
            lines.append(f"      pool {index}: {pool['machineType']} x{pool['replicaCount']}{kind}{scale}")
    return lines
