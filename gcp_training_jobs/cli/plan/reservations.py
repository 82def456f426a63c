"""`plan --online`: the reservation check of `pulumi preview`, for the whole stack at once, from the plan's judged
settings.

Each Compute Engine reservation the stack's jobs name (SPECIFIC_RESERVATION, at any placement; resources.settings.
quota.reservation_takers, the provider judges it from the config too) is read once (backends.reservations), and the
stack's jobs that are not live yet (a live one, found by its `pulumi-resource` label, is in its `inUseCount` already)
are held to them job by job, in the stack's order, by the one rule (jobspec.review.reservations.fit): the exact
machine, then each job's machines against what is free after the stack's earlier jobs. A job that fits nowhere fails
the plan, and one that fits at a fallback only is a warning, in the words the provider's check uses at `pulumi
preview` and `up` (resources.training_job.reserved). A reservation that cannot be read is a warning: the plan goes
on.
"""

from __future__ import annotations

from collections.abc import Callable

from gcp_training_jobs.backends import quotas
from gcp_training_jobs.backends.reservations import offline, review
from gcp_training_jobs.jobspec.review.reservations import Taker, verdict_lines
from gcp_training_jobs.resources.job_model.identity import is_made
from gcp_training_jobs.resources.settings import StackSettings
from gcp_training_jobs.resources.settings.quota import reservation_takers


def reservation_review(settings: StackSettings, siblings: str, held: Callable[[str], quotas.Held],
                       endpoint: str | None) -> tuple[list[str], list[tuple[str, str]]]:
    """(lines to show, problems that fail the plan, each with its heading: "over the reservation" for a job past a
    reservation's free machines, "reservation" for one it cannot take from) of the reservations the stack's jobs
    name; `siblings`: the identity of the stack's jobs but their names (finds those already live); `held`: a region's
    live jobs, read once."""
    stacked = reservation_takers(settings)
    if not stacked:
        return [], []

    def live(taker: Taker) -> bool:
        return bool(siblings) and is_made(siblings, taker.name, (p.region for p in taker.places if p.needs),
                                          held)

    try:
        verdicts, unread = review([t for t in stacked if not live(t)], settings.project, endpoint)
    except quotas.QuotaUnreadable as error:  # the live jobs could not be read
        return [f"{'' if error.offline else 'warning: '}reservations not checked: {error}"], []
    lines = [f"{'' if offline(error) else 'warning: '}reservation {named.name} not checked: {error}"
             for named, error in unread.items()]
    problems: list[tuple[str, str]] = []
    refused = moved = 0
    for verdict in verdicts:
        failed, warned = verdict_lines(verdict)
        overruns = [m.overrun for misses in verdict.misfits for m in misses] if failed else []
        problems += [("over the reservation" if over else "reservation", line)
                     for over, line in zip(overruns, failed, strict=True)]
        lines += [f"warning: {line}" for line in warned]
        refused, moved = refused + bool(failed), moved + bool(warned)
    said = f"{refused} job(s) refused" if refused else "all fit"
    said += f", {moved} at a fallback" if moved else ""
    names = ", ".join(dict.fromkeys(n.named.name for t in stacked for p in t.places for n in p.needs))
    return [f"Reservations (Compute Engine, project {settings.project}: {names}): {said}", *lines], problems
