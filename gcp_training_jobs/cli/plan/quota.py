"""`plan --online`: the quota check of `pulumi preview`, for the whole stack at once, from the plan's judged settings.

The one rule (gcp_training_jobs.jobspec.review.quota_fit) over the one list of what the stack asks
(resources.settings.quota.askers): a job already live counted as live; each other in the stack's order at its first
placement that fits beside the stack's earlier new jobs and what live jobs hold, against the limits (Cloud Quotas,
else Service Usage: gcp_training_jobs.backends.quotas). A job that fits only at a fallback is a warning naming where
`up` will make it; a job that fits nowhere fails the plan, named alone with the metric it asks: the words and the
verdict of the provider's check at `pulumi preview` and `up`. Quotas that cannot be read (no credentials, permission
denied, no answer) are a warning: the plan goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gcp_training_jobs.backends import persistent_resources, quotas, transport
from gcp_training_jobs.cli.plan.cheapest import Hold
from gcp_training_jobs.cli.plan.reservations import reservation_review
from gcp_training_jobs.jobspec.core.env import env_settings
from gcp_training_jobs.jobspec.core.names import NAMESPACE, VERTEX
from gcp_training_jobs.jobspec.review.placement import Candidate, held_to_quota
from gcp_training_jobs.jobspec.review.quota_fit import Asker, Limit, Usage, asked, fit, verdict_lines
from gcp_training_jobs.resources.job_model.identity import is_made
from gcp_training_jobs.resources.settings import StackSettings
from gcp_training_jobs.resources.settings.placement import CHEAPEST
from gcp_training_jobs.resources.settings.quota import askers


@dataclass
class OnlineReview:
    """What `plan --online` prints: lines to show, and the excesses that fail the plan."""

    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    """What each problem is, in the same order: "over quota", "over the reservation", "reservation", "persistent
    resource" (the diff says each under its heading: `over the reservation: job big: needs 3 ...`)."""
    hold: Hold | None = None
    """Each job's placement candidates held to the quota free after the stack's other jobs (plan/cheapest.py)."""

    def add(self, heading: str, problems: Sequence[str]) -> None:
        self.problems += problems
        self.headings += [heading] * len(problems)


def quota_asked(settings: StackSettings) -> dict[str, dict[str, dict[str, Any]]]:
    """What the stack asks of Vertex AI's custom training quotas once `up` is done, offline: region -> metric ->
    `units` in all and `by` job (or `persistent resource NAME`), each job as written (quota_fit.asked, over the one
    list of askers, settings.quota.askers): a job on a persistent resource asks none, the resource its machines at the
    most. What `plan` shows and `diff` compares side by side. Empty on ai-platform (no such quotas are read)."""
    return asked(askers(settings))


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
            found.add("persistent resource", [f"job {name}: {why}"])


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


def online_review(settings: StackSettings, siblings: str = "") -> OnlineReview:
    """The stack's quota verdict against the project's limits, job by job (quota_fit.fit, the rule the provider's
    check applies at `pulumi preview` and `up`, in its words): `siblings`, the identity of the stack's jobs but their
    names (`organization/project/stack/`), which finds those already live: they are counted as live, not as new."""
    found = OnlineReview()
    if settings.backend != VERTEX:
        found.lines.append("quota check: only Vertex AI's custom training quotas are read; skipped for "
                           f"backend {settings.backend}")
        return found
    endpoint = settings.api_endpoint or env_settings().api_endpoint
    read: dict[str, quotas.Held] = {}

    def held(region: str) -> quotas.Held:
        if region not in read:
            read[region] = quotas.held(settings.project, region, endpoint)
        return read[region]

    _resource_lines(settings, endpoint, found)
    lines, headed = reservation_review(settings, siblings, held, endpoint)  # cli.plan.reservations
    found.lines += lines
    for heading, problem in headed:
        found.add(heading, [problem])
    stack_askers = askers(settings)
    warned: list[str] = []
    regions = sorted({p.region for a in stack_askers for p in a.placements if p.needs})
    try:
        limits = quotas.read_limits(settings.project, endpoint, warn=warned.append) if regions else {}

        def running(asker: Asker) -> bool:
            return bool(siblings) and is_made(siblings, asker.name, (p.region for p in asker.placements if p.needs),
                                              held)

        fitted = fit(stack_askers, partial(quotas.limit_of, limits), lambda region: held(region).usage, running)
    except quotas.QuotaUnreadable as error:
        found.lines.append(f"{'' if error.offline else 'warning: '}quota check skipped: {error}")
        return found
    found.lines += [f"warning: {warning}" for warning in warned]
    found.hold = partial(_held_to_quota, stack_askers, partial(quotas.limit_of, limits),
                         lambda region: held(region).usage, running)
    for asker in stack_askers:
        for place in asker.placements[:1]:
            found.lines += [f"    {asker.name}: {what} not quota-checked" for what in place.needs.unchecked]
    over = 0
    for verdict in fitted.verdicts:
        job = settings.jobs.get(verdict.name)
        problems, warnings = verdict_lines(verdict, settings.project,
                                           candidates=job is not None and job.placement == CHEAPEST)
        found.add("over quota", problems)
        found.lines += [f"warning: {line}" for line in warnings]
        over += bool(problems)
    found.lines.insert(0, f"Quotas (Vertex AI custom training, project {settings.project}, "
                          f"{', '.join(regions) or 'no region with a quota metric'}): "
                          f"{f'{over} job(s) over' if over else 'all hold'}")
    return found


def _held_to_quota(stack_askers: Sequence[Asker], limit: Limit, usage: Usage, running: Callable[[Asker], bool],
                   name: str, candidates: Sequence[Candidate]) -> Sequence[Candidate]:
    """A job's candidates held to the quota free after the stack's other jobs (the one rule, quota_fit)."""
    others = [a for a in stack_askers if a.name != name]
    return held_to_quota(name, candidates, others, limit, usage, running)
