"""The diff of a stack's persistent resources (`gcp-training-jobs:persistentResources`), like a job's: each added,
removed, replaced (its region moved), resized (only its replicas moved) or changed, what changed in words (its
region; each pool's machine, disk and replicas; a pool added or removed; its labels; its display name), and its cost
per hour at the least and at the most on each side (plan --json's `cost.persistentResources.NAME.atLeast`,
`atMost`). A resource has no worst case (it is billed while it exists): its worst-case figures are 0, as the plan's
stack worst case leaves it out.

A change pulumi-gcp cannot make in place replaces the resource: the next `up` deletes it and makes it again, and the
jobs on it fail. Google's definition of the resource, which the provider is generated from
(GoogleCloudPlatform/magic-modules, mmv1/products/vertexai/PersistentResource.yaml at commit
076e8db895f45921c2d3e3ba46e20a8e4acbe29e, read 2026-11-26), marks `location`, each pool's `machineSpec`, `diskSpec`
and `autoscalingSpec`, and `labels` `immutable: true`; a pool's `replicaCount` and the `displayName` are updated
in place (a resize).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gcp_training_jobs.jobspec.translate.persistent import ResourceFacts
from gcp_training_jobs.jobspec.translate.pools import Pool

ARROW = "->"
#: What replaces the resource when it changes (the immutable fields of the definition named above).
REPLACING = ("region", "machines", "disks", "autoscaling", "labels")


def _figures(side: Any, name: str) -> dict[str, float | None] | None:
    if side is None or name not in side.settings.resources:
        return None
    cost = side.document["cost"].get("persistentResources", {}).get(name)
    if cost is None:
        return {"usdPerHour": None, "usdPerHourAtLeast": None, "worstCaseUsd": 0.0}
    most, least = cost["atMost"], cost["atLeast"]
    return {"usdPerHour": most["knownUsdPerHour"] if most["complete"] else None,
            "usdPerHourAtLeast": least["knownUsdPerHour"] if least["complete"] else None, "worstCaseUsd": 0.0}


def _delta(new: float | None, old: float | None) -> float | None:
    return None if new is None or old is None else round(new - old, 6)


def _machine(pool: Pool) -> str:
    """`a3-highgpu-8g + 8 NVIDIA_H100_80GB`."""
    held = f" + {pool.accelerator_count} {pool.accelerator_type}" if pool.accelerator_type else ""
    return f"{pool.machine_type}{held}"


def _disk(pool: Pool) -> str:
    if pool.disk_type is None and pool.disk_size_gb is None:
        return "the default"
    return " ".join(str(v) for v in (pool.disk_type, f"{pool.disk_size_gb} GB" if pool.disk_size_gb else None) if v)


def _replicas(facts: ResourceFacts, index: int) -> str:
    """`2`, or `1 to 3` under autoscaling."""
    most, least = facts.pools[index].replica_count, facts.least[index]
    return str(most) if most == least else f"{least} to {most}"


def _labels(labels: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "none"


def changes(old: ResourceFacts, new: ResourceFacts) -> list[tuple[str, str]]:
    """What changed, as (aspect, words): `region`, `machines`, `disks`, `replicas` (a fixed replicaCount),
    `autoscaling` (an autoscaling pool's bounds), `pools`, `labels`, `display name`."""
    found: list[tuple[str, str]] = []
    if old.region != new.region:
        found.append(("region", f"region {old.region} {ARROW} {new.region}"))
    for i in range(max(len(old.pools), len(new.pools))):
        if i >= len(old.pools):
            found.append(("pools", f"pool {i} added: {_machine(new.pools[i])} x{_replicas(new, i)}"))
            continue
        if i >= len(new.pools):
            found.append(("pools", f"pool {i} removed (was {_machine(old.pools[i])} x{_replicas(old, i)})"))
            continue
        was, now = old.pools[i], new.pools[i]
        if _machine(was) != _machine(now):
            found.append(("machines", f"pool {i} machine {_machine(was)} {ARROW} {_machine(now)}"))
        if _disk(was) != _disk(now):
            found.append(("disks", f"pool {i} disk {_disk(was)} {ARROW} {_disk(now)}"))
        if _replicas(old, i) != _replicas(new, i):
            scales = old.least[i] != was.replica_count or new.least[i] != now.replica_count
            found.append(("autoscaling" if scales else "replicas",
                          f"pool {i} replicas {_replicas(old, i)} {ARROW} {_replicas(new, i)}"))
    if dict(old.labels) != dict(new.labels):
        found.append(("labels", f"labels {_labels(old.labels)} {ARROW} {_labels(new.labels)}"))
    shown = (old.spec.display_name if old.spec else None, new.spec.display_name if new.spec else None)
    if shown[0] != shown[1]:
        found.append(("display name", f"display name {shown[0] or 'none'} {ARROW} {shown[1] or 'none'}"))
    return found


def _change(old: ResourceFacts, new: ResourceFacts) -> dict[str, Any]:
    found = changes(old, new)
    aspects = list(dict.fromkeys(aspect for aspect, _ in found))
    said = [words for _, words in found]
    if not found:
        return {"change": "unchanged"}
    replacing = [aspect for aspect in aspects if aspect in REPLACING]
    if replacing:
        where = f" in {new.region}" if "region" in replacing else ""
        return {"change": "replaced", "changes": said,
                "note": f"its {', '.join(replacing)} change{'s' if len(replacing) == 1 else ''}, which it cannot "
                        f"change in place: the next `up` deletes it and makes it again{where}; the jobs on it fail"}
    if aspects == ["replicas"]:
        return {"change": "resized", "changes": said, "note": "its replicas change"}
    return {"change": "changed", "changes": said, "note": f"its {', '.join(aspects)} change"}


def compare_resources(before: Any, after: Any) -> dict[str, dict[str, Any]]:
    """Each persistent resource of either side (a diff.Planned, or None): its change, what changed, its figures and
    their deltas."""
    names = list(after.settings.resources if after else ()) + [
        n for n in (before.settings.resources if before else ()) if after is None or n not in after.settings.resources]
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        old, new = _figures(before, name), _figures(after, name)
        zero = {"usdPerHour": 0.0, "usdPerHourAtLeast": 0.0, "worstCaseUsd": 0.0}
        item: dict[str, Any] = {
            "before": old, "after": new,
            "deltaUsdPerHour": _delta((new or zero)["usdPerHour"], (old or zero)["usdPerHour"]),
            "deltaUsdPerHourAtLeast": _delta((new or zero)["usdPerHourAtLeast"], (old or zero)["usdPerHourAtLeast"]),
            "deltaWorstCaseUsd": 0.0}
        if old is None:
            item.update(change="added", note="the next `up` makes it; billed while it exists")
        elif new is None:
            item.update(change="removed", note="the next `up` deletes it; jobs still on it fail")
        else:
            item.update(_change(before.settings.resources[name], after.settings.resources[name]))
        found[name] = item
    return found
