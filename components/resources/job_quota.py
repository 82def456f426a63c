"""The quota check of a TrainingJob's `check` (at `pulumi preview` and before `up` creates it): will Google run it?

For a job the preview creates or replaces, on Vertex AI: what it needs (components.jobspec.review.quotas, from the
body judged once), plus what the stack's other jobs that are not deployed yet need (the `stackQuota` input: each
job's region, needs and `pulumi-resource` label, computed by stack.py from the settings), plus what the project's
live jobs hold in that region, against Service Usage's limits. Over a limit at every placement (the job as written,
then each of `fallbacks`): the check fails, naming the metric, the region, the need, the usage, the limit and how to
ask for more. Over at the first placement only: a warning says which fallback `up` will use. Quotas that cannot be
read (no credentials, permission denied): a warning, never a failure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components.backends import quotas
from components.jobspec.review.quotas import Needs, needs_of


@dataclass(frozen=True)
class Peer:
    """Another job of the stack: its `pulumi-resource` label, name, region and what it needs."""

    resource: str
    name: str
    region: str
    needs: Mapping[str, int]


def peers_of(value: Any, own_resource: str) -> list[Peer]:
    """The `stackQuota` input ({"jobs": [{resource, name, region, needs}]}) without this job itself."""
    jobs = value.get("jobs") if isinstance(value, Mapping) else None
    found = []
    for entry in jobs if isinstance(jobs, list) else []:
        if not isinstance(entry, Mapping) or entry.get("resource") == own_resource:
            continue
        given = entry.get("needs")
        needs: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        counts = {str(k): int(v) for k, v in needs.items() if isinstance(v, int | float) and not isinstance(v, bool)}
        if counts and isinstance(entry.get("region"), str):
            found.append(Peer(str(entry.get("resource") or ""), str(entry.get("name") or "?"), entry["region"], counts))
    return found


def stack_entry(resource: str, name: str, region: str | None, body: Mapping[str, Any]) -> dict[str, Any] | None:
    """One job's entry of the `stackQuota` input (stack.py), or None when it needs nothing that has a metric."""
    needs = needs_of(body)
    if not needs or not region:
        return None
    return {"resource": resource, "name": name, "region": region, "needs": dict(needs.units)}


@dataclass
class Outcome:
    """What the check reports: failures (the check fails), warnings and notes (logged)."""

    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    debug: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def check(project: str, name: str, resource: str, tries: Sequence[tuple[int, str, Mapping[str, Any]]],
          peers: Sequence[Peer], endpoint: str | None) -> Outcome:
    """Review each placement (index, region, body) in order with the peers; the first that fits ends the review."""
    out = Outcome()
    first: list[str] = []
    failures: list[str] = []
    limits: quotas.Limits | None = None
    for index, region, body in tries:
        own = quotas.Candidate(name, region, needs_of(body), resource)
        others = [quotas.Candidate(p.name, p.region, Needs(dict(p.needs)), p.resource, sure=False) for p in peers
                  if p.region == region]  # the others where this placement is: what it competes with
        try:
            if limits is None and (own.needs or any(o.needs for o in others)):
                limits = quotas.read_limits(project, endpoint)
            found = quotas.review(project, [own, *others], endpoint=endpoint, limits=limits or {})
        except quotas.QuotaUnreadable as error:
            (out.skipped if error.offline else out.warnings).append(f"job {name}: quota check skipped: {error}")
            return out
        if index == 0:
            out.notes += [n for n in found.notes if "no limit found" not in n]
            out.debug += [n for n in found.notes if "no limit found" in n]
        if found.ok:
            if index:
                out.warnings.append(f"job {name}: over quota as written ({'; '.join(first)}); `pulumi up` will "
                                    f"create it at fallbacks[{index - 1}] ({region}), which fits")
            return out
        if index == 0:
            first = [e.short() for e in found.excesses]
        where = f"fallbacks[{index - 1}]: " if index else ""
        failures += [f"job {name}: {where}{e.message(project)}" for e in found.excesses]
    out.failures = failures
    return out
