"""The stack's jobs and persistent resources as the quotas see them (jobspec.review.quota_fit.Asker), from the
settings as judged: the one list `plan`, `plan --online`, the diff and the stack's quota input (declared.py) are
built from; and what the stack's jobs take from the Compute Engine reservations they name at each placement
(`reservation_takers`, jobspec.review.reservations.Taker), which `plan` and `plan --online` read and the stack's quota
input carries too.

The persistent resources come first (the jobs on them wait for them, so they hold their machines before the jobs are
made), each its machines at the most in its region; then the jobs, each as written and at each of its fallbacks. Each
kind by name: Pulumi hands a stack's config to the program as a map, its keys in order, whatever order the stack file
wrote them in, so `plan` and `pulumi up` see one order. A job with no region of its own runs in the stack's.
"""

from __future__ import annotations

from gcp_training_jobs.jobspec.core.names import VERTEX
from gcp_training_jobs.jobspec.review.quota_fit import RESOURCE_PREFIX, Asker, Placement, asker_of
from gcp_training_jobs.jobspec.review.quotas import needs_of
from gcp_training_jobs.jobspec.review.reservations import Taker, takers
from gcp_training_jobs.resources.settings.model import StackSettings
from gcp_training_jobs.resources.settings.placements import placements


def askers(settings: StackSettings) -> tuple[Asker, ...]:
    """What each of the stack's persistent resources and jobs asks of Vertex AI's quotas, in the order they are
    made; none on ai-platform (no such quotas are read there)."""
    if settings.backend != VERTEX:
        return ()
    resources = [Asker(f"{RESOURCE_PREFIX}{name}",
                       (Placement(held.region or settings.region, needs_of(held.as_job())),))
                 for name, held in sorted(settings.resources.items())]
    jobs = [asker_of(name, placements(settings, name), settings.region) for name in sorted(settings.jobs)]
    return (*resources, *jobs)


def reservation_takers(settings: StackSettings) -> tuple[Taker, ...]:
    """What the stack's jobs take from the reservations they name (SPECIFIC_RESERVATION), each at its placements in
    the order `up` tries them (settings.placements), the jobs in the order `askers` takes them (by name); a job with
    no region of its own in the stack's. None on ai-platform."""
    if settings.backend != VERTEX:
        return ()
    return takers({name: dict(enumerate(placements(settings, name))) for name in sorted(settings.jobs)},
                  settings.project, settings.region)
