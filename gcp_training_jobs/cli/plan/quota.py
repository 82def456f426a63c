"""`plan --online`: the quota check of `pulumi preview`, for the whole stack at once, from the plan's judged settings.

Every Vertex AI job of the stack counts as new (the plan shows the stack as `up` would make it from nothing): its
needs (jobspec.review.quotas, from the facts judged once) are added region by region and metric by metric to what
the project's live jobs hold, and compared with the limits (Cloud Quotas, else Service Usage: backends.quotas).
An excess of jobs that all have fallbacks is a warning (`up` tries them); any other excess fails the plan. Quotas
that cannot be read (no credentials, permission denied, no answer) are a warning: the plan goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gcp_training_jobs.backends import persistent_resources, quotas, transport
from gcp_training_jobs.jobspec.core.env import env_settings
from gcp_training_jobs.jobspec.core.names import NAMESPACE, VERTEX
from gcp_training_jobs.jobspec.review.quotas import needs_of
from gcp_training_jobs.resources.settings import StackSettings


@dataclass
class OnlineReview:
    """What `plan --online` prints: lines to show, and the excesses that fail the plan."""

    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def candidates_of(settings: StackSettings) -> list[quotas.Candidate]:
    """Each job of the stack with its region and what it counts against the quotas (from its facts, judged once; a
    job on a persistent resource counts none), and each persistent resource its machines at the most, in its region;
    `diff` sums them per region on each side."""
    return [*(quotas.Candidate(name, job.facts.region or settings.region, needs_of(job.facts))
              for name, job in settings.jobs.items()),
            *(quotas.Candidate(f"persistent resource {name}", held.region or settings.region, needs_of(held.as_job()))
              for name, held in settings.resources.items())]


def quota_asked(settings: StackSettings) -> dict[str, dict[str, dict[str, Any]]]:
    """What the stack asks of Vertex AI's custom training quotas once `up` is done, offline: region -> metric ->
    `units` in all and `by` job (or `persistent resource NAME`), from candidates_of: a job on a persistent resource
    asks none, the resource its machines at the most. What `plan` shows, `plan --online` checks against the
    project's limits and `diff` compares side by side. Empty on ai-platform (no such quotas are read)."""
    if settings.backend != VERTEX:
        return {}
    by: dict[str, dict[str, dict[str, int]]] = {}
    for candidate in candidates_of(settings):
        for metric, units in candidate.needs.units.items():
            who = by.setdefault(candidate.region, {}).setdefault(metric, {})
            who[candidate.name] = who.get(candidate.name, 0) + units
    return {region: {metric: {"units": sum(who.values()), "by": who} for metric, who in sorted(metrics.items())}
            for region, metrics in sorted(by.items())}


def _resource_lines(settings: StackSettings, endpoint: str | None, found: OnlineReview) -> None:
    """Each persistent resource a job names that the stack does not declare: it exists and is RUNNING (asked once),
    and the job's pools fit its pools."""
    asked: dict[tuple[str, str], persistent_resources.Looked | None] = {}
    for name, job in settings.jobs.items():
        resource_id = job.facts.on_persistent_resource
        if resource_id is None or resource_id in settings.resources:
            continue
        key = (job.facts.region or settings.region, resource_id)
        if key not in asked:
            asked[key] = _looked(settings, key, endpoint, found)
        looked = asked[key]
        why = persistent_resources.why_not(job.facts, looked, f"{NAMESPACE}:jobs.{name}") if looked else None
        if why is not None:
            found.problems.append(f"job {name}: {why}")


def _looked(settings: StackSettings, key: tuple[str, str], endpoint: str | None,
            found: OnlineReview) -> persistent_resources.Looked | None:
    """The resource (region, id) read once, its RUNNING said once; None, with a warning, when it cannot be read."""
    region, resource_id = key
    try:
        looked = persistent_resources.look_up(settings.project, region, resource_id, endpoint)
    except (transport.ApiError, transport.TransportError, transport.CredentialsError) as error:
        found.lines.append(f"warning: persistent resource {resource_id} not checked: {error}")
        return None
    if looked.why_not is None:
        found.lines.append(f"persistent resource {resource_id} ({region}): RUNNING")
    return looked


def online_review(settings: StackSettings) -> OnlineReview:
    found = OnlineReview()
    if settings.backend == VERTEX:
        _resource_lines(settings, settings.api_endpoint or env_settings().api_endpoint, found)
    if settings.backend != VERTEX:
        found.lines.append("quota check: only Vertex AI's custom training quotas are read; skipped for "
                           f"backend {settings.backend}")
        return found
    candidates = candidates_of(settings)
    endpoint = settings.api_endpoint or env_settings().api_endpoint
    try:
        review = quotas.review(settings.project, candidates, endpoint=endpoint)
    except quotas.QuotaUnreadable as error:
        found.lines.append(f"{'' if error.offline else 'warning: '}quota check skipped: {error}")
        return found
    found.lines += [f"warning: {warning}" for warning in review.warnings]
    found.lines += [f"    {note}" for note in review.notes]
    with_fallbacks = {name for name, job in settings.jobs.items() if job.alternatives}
    for excess in review.excesses:
        message = excess.message(settings.project)
        if excess.jobs and set(excess.jobs) <= with_fallbacks:
            found.lines.append(f"warning: {message} (every job needing it has fallbacks: `up` tries them)")
        else:
            found.problems.append(message)
    regions = sorted({c.region for c in candidates if c.needs})
    found.lines.insert(0, f"Quotas (Vertex AI custom training, project {settings.project}, "
                          f"{', '.join(regions) or 'no region with a quota metric'}): "
                          f"{'all hold' if review.ok else f'{len(review.excesses)} over'}")
    return found
