"""`plan --online`: the quota check of `pulumi preview`, for the whole stack at once, from the plan's judged settings.

Every Vertex AI job of the stack counts as new (the plan shows the stack as `up` would make it from nothing): its
needs (gcp_training_jobs.jobspec.review.quotas, from the body judged once) are added region by region and metric by
metric
to what the project's live jobs hold, and compared with the limits (Cloud Quotas, else Service Usage:
gcp_training_jobs.backends.quotas). An excess of jobs that all have fallbacks is a warning (`up` tries them); any other
excess fails the plan. Quotas that cannot be read (no credentials, permission denied, no answer) are a warning: the
plan goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gcp_training_jobs.backends import quotas
from gcp_training_jobs.jobspec.core.env import env_settings
from gcp_training_jobs.jobspec.core.names import VERTEX
from gcp_training_jobs.jobspec.review.quotas import needs_of
from gcp_training_jobs.resources.settings import StackSettings


@dataclass
class OnlineReview:
    """What `plan --online` prints: lines to show, and the excesses that fail the plan."""

    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def candidates_of(settings: StackSettings) -> list[quotas.Candidate]:
    """Each job of the stack with its region and what it counts against the quotas (from its facts, judged once);
    `diff` sums them per region on each side."""
    return [quotas.Candidate(name, job.facts.region or settings.region, needs_of(job.facts))
            for name, job in settings.jobs.items()]


def online_review(settings: StackSettings) -> OnlineReview:
    found = OnlineReview()
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
