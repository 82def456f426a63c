"""The diff of a stack's persistent resources (`gcp-training-jobs:persistentResources`), like a job's: each added,
removed, resized (only its replicas moved) or changed, with its cost per hour at the most on each side (plan --json's
`cost.persistentResources.NAME.atMost`) and at the least. A resource has no worst case (it is billed while it
exists): its worst-case figures are 0, as the plan's stack worst case leaves it out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Where a resource pool's replicas are: what a resize changes.
REPLICA_KEYS = ("replicaCount", "autoscalingSpec")


def _figures(side: Any, name: str) -> dict[str, float | None] | None:
    if side is None or name not in side.settings.resources:
        return None
    cost = side.document["cost"].get("persistentResources", {}).get(name)
    if cost is None:
        return {"usdPerHour": None, "usdPerHourAtLeast": None, "worstCaseUsd": 0.0}
    most, least = cost["atMost"], cost["atLeast"]
    return {"usdPerHour": most["knownUsdPerHour"] if most["complete"] else None,
            "usdPerHourAtLeast": least["knownUsdPerHour"] if least["complete"] else None, "worstCaseUsd": 0.0}


def _written(side: Any, name: str) -> Mapping[str, Any]:
    return side.settings.persistent_resources.get(name) or {}


def _without_replicas(written: Mapping[str, Any]) -> Any:
    pools = written.get("resourcePools")
    if not isinstance(pools, list):
        return dict(written)
    return {**written, "resourcePools": [{k: v for k, v in p.items() if k not in REPLICA_KEYS}
                                         if isinstance(p, dict) else p for p in pools]}


def _delta(new: float | None, old: float | None) -> float | None:
    return None if new is None or old is None else round(new - old, 6)


def compare_resources(before: Any, after: Any) -> dict[str, dict[str, Any]]:
    """Each persistent resource of either side (a diff.Planned, or None): its change, figures and their deltas."""
    names = list(after.settings.resources if after else ()) + [
        n for n in (before.settings.resources if before else ()) if after is None or n not in after.settings.resources]
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        old, new = _figures(before, name), _figures(after, name)
        zero = {"usdPerHour": 0.0, "worstCaseUsd": 0.0}
        item: dict[str, Any] = {"before": old, "after": new,
                                "deltaUsdPerHour": _delta((new or zero)["usdPerHour"], (old or zero)["usdPerHour"]),
                                "deltaWorstCaseUsd": 0.0}
        if old is None:
            item.update(change="added", note="the next `up` makes it; billed while it exists")
        elif new is None:
            item.update(change="removed", note="the next `up` deletes it; jobs still on it fail")
        elif _written(before, name) == _written(after, name):
            item.update(change="unchanged")
        elif _without_replicas(_written(before, name)) == _without_replicas(_written(after, name)):
            item.update(change="resized", note="its replicas change")
        else:
            item.update(change="changed", note="its pools, region or labels change")
        found[name] = item
    return found
