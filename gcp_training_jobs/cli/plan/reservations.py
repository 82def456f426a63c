"""`plan --online`: the reservation check of `pulumi preview`, for the whole stack at once, from the plan's judged
settings.

Each Compute Engine reservation the stack's jobs name (SPECIFIC_RESERVATION; resources.settings.quota.
reservation_needs, what the `stackQuota` input carries too) is read once (backends.reservations), and the stack's jobs
on it that are not live yet (a live one, found by its `pulumi-resource` label, is in its `inUseCount` already) are held
to it by the one rule (jobspec.review.reservations.misfits): the exact machine, then the machines they need together
against what is free. A misfit fails the plan in the words the provider's check uses at `pulumi preview` and `up`
(resources.training_job.reserved). A reservation that cannot be read is a warning: the plan goes on.
"""

from __future__ import annotations

from collections.abc import Callable

from gcp_training_jobs.backends import quotas, transport
from gcp_training_jobs.backends.reservations import review_one
from gcp_training_jobs.jobspec.core.names import RESOURCE_LABEL
from gcp_training_jobs.jobspec.review.reservations import Need
from gcp_training_jobs.resources.job_model.identity import resource_label
from gcp_training_jobs.resources.settings import StackSettings
from gcp_training_jobs.resources.settings.quota import reservation_needs

#: The errors of a read that leave a reservation unchecked (a warning, not a failure).
UNREAD = (quotas.QuotaUnreadable, transport.ApiError, transport.TransportError, transport.CredentialsError)


def reservation_review(settings: StackSettings, siblings: str, held: Callable[[str], quotas.Held],
                       endpoint: str | None) -> tuple[list[str], list[str]]:
    """(lines to show, problems that fail the plan) of the reservations the stack's jobs name; `siblings`: the identity
    of the stack's jobs but their names (finds those already live); `held`: a region's live jobs, read once."""
    stacked = reservation_needs(settings)
    if not stacked:
        return [], []
    lines: list[str] = []
    problems: list[str] = []
    refused: set[str] = set()

    def live(need: Need) -> bool:
        label = resource_label(siblings + need.job)[RESOURCE_LABEL]
        return bool(siblings) and label in held(need.region or settings.region).live

    for needs in stacked.values():
        try:
            found = review_one([n for n in needs if not live(n)], settings.project, endpoint)
        except UNREAD as error:
            offline = isinstance(error, transport.CredentialsError) or getattr(error, "offline", False)
            lines.append(f"{'' if offline else 'warning: '}reservation {needs[0].named.name} not checked: {error}")
            continue
        problems += [m.line() for m in found]
        refused.update(job for m in found for job in m.jobs)
    verdict = f"{len(refused)} job(s) refused" if refused else "all fit"
    names = ", ".join(needs[0].named.name for needs in stacked.values())
    return [f"Reservations (Compute Engine, project {settings.project}: {names}): {verdict}", *lines], problems
