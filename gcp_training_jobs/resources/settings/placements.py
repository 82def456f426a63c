"""Where a stack's jobs run, from the settings as judged: each job's placements in the order `pulumi up` tries them
(`placements`), and the regions the stack's jobs may run in (`regions`). The one answer every reader takes: the
quota and reservation reviews (settings.quota), the stack's `fallbacks` input of a `placement: cheapest` job
(stack.py), the price of such a job (`placed`), `status`, `logs` and `spend` (cli.live.jobs) and the budget's stop
function (budget.py).

A job's placements: the job as written, then each of its fallbacks; with `placement: cheapest`, its ranked
candidates alone (settings/placement.py), cheapest first, the job as written being no try of its own. The regions a
stack's jobs may run in: the stack's, each job's own, each fallback's and each candidate's (ranked or not: a job
made at a candidate the quota later refuses is still the stack's), so a job made anywhere its placements allow, or
made there by an earlier deploy, is found.
"""

from __future__ import annotations

from typing import Any

from gcp_training_jobs.jobspec.review.cost import Placed
from gcp_training_jobs.jobspec.review.placement import Candidate, rank
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.resources.settings.placement import CHEAPEST
from gcp_training_jobs.resources.settings.secrets import OPAQUE

#: Each function takes a judged StackSettings (`Any`: model.py imports settings.guardrails, which prices with
#: `placed`, so the model is not named here).
StackSettings = Any


def ranked(settings: StackSettings, name: str) -> tuple[Candidate, ...]:
    """A `placement: cheapest` job's candidates in the order `up` tries them (review.placement.rank); none for
    another job."""
    if settings.jobs[name].placement != CHEAPEST:
        return ()
    return tuple(c for c in rank(settings.candidates.get(name, ())) if c.facts is not None)


def placements(settings: StackSettings, name: str) -> tuple[JobFacts, ...]:
    """A job's placements in the order `up` tries them, each as judged: as written then each fallback, or with
    `placement: cheapest` its ranked candidates (none when no candidate ranks: `validate` says why)."""
    job = settings.jobs[name]
    if job.placement == CHEAPEST:
        return tuple(c.facts for c in ranked(settings, name) if c.facts is not None)
    return (job.facts, *(alt.facts for alt in job.alternatives))


def placed(settings: StackSettings) -> dict[str, Placed]:
    """The stack's `placement: cheapest` jobs with a ranked candidate, each priced where it may run
    (review.cost.estimate_placed: at the candidate it would take, and at its dearest): what `plan`, its JSON, the
    diff, the guardrails, the budget and the stack's `budget` input take; any other job is priced as written."""
    found = {}
    for name, job in settings.jobs.items():
        where = placements(settings, name) if job.placement == CHEAPEST else ()
        if where:
            found[name] = Placed(where, job.facts)
    return found


def regions(settings: StackSettings) -> list[str]:
    """Every region the stack's jobs may run in, sorted: the stack's, each job's own, each of its fallbacks' and
    each of its placement candidates' (a secret region left out: it is not known offline)."""
    found: list[str | None] = [settings.region]
    for name, job in settings.jobs.items():
        found += [job.facts.region, *(alt.facts.region for alt in job.alternatives)]
        found += [c.region for c in settings.candidates.get(name, ())]
    return sorted(dict.fromkeys(r for r in found if r and r != OPAQUE))
