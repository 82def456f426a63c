"""`status`'s persistent resources: the ones the stack declares and the ones its jobs run on, listed from the API
(backends.persistent_resources: persistentResources.list in each region where one is), each with its state, its
pools and the jobs found on it (a job's `persistentResourceId`, from its facts)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


def resources_status(stack: Stack, jobs: list[FoundJob]) -> list[dict[str, Any]]:
    """Each persistent resource of the stack as the API holds it (or `state: NOT_FOUND` when it holds none)."""
    shown: list[dict[str, Any]] = []
    for region, ids in sorted(_wanted(stack, jobs).items()):
        listed = {str(r.get("name", "")).rsplit("/", 1)[-1]: r
                  for r in persistent_resources.list_resources(stack.settings.project, region, stack.endpoint)}
        for resource_id in sorted(ids):
            found = listed.get(resource_id)
            on = sorted(j.name or j.job_id for j in jobs
                        if j.facts.on_persistent_resource == resource_id and j.target.region == region)
            shown.append({"id": resource_id, "region": region,
                          "state": str(found.get("state")) if found else "NOT_FOUND",
                          "declared": resource_id in stack.settings.resources,
                          "pools": [_pool(p) for p in (found or {}).get("resourcePools") or []], "jobs": on})
    return shown


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
