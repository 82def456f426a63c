"""The reservation check of a TrainingJob's `check` (at `pulumi preview` and before `up` creates it): will the
Compute Engine reservations the job names give it its machines?

For a job the preview creates or replaces, on Vertex AI, that names a reservation (SPECIFIC_RESERVATION): each
reservation it names is read once per run (gcp_training_jobs.backends.run_cache.RUN, as the quota limits are), and
the stack's jobs on it (the `reservations` of the stack's quota input, review.reservations.wire: what each job takes
from which, in the stack's order; this job as judged in its place) are held to it by the one rule,
jobspec.review.reservations.misfits, in the words `plan --online` uses: the exact machine, then the machines they need
together against what is free. A job of the stack already live is in the reservation's `inUseCount`: found by its
`pulumi-resource` label among the region's live jobs (the read the quota check makes, once per run), it is not counted
again; this job itself, made anew, is. Only a misfit naming this job fails its check. A reservation that cannot be
read (no credentials, permission denied): a warning, never a failure. A job without the stack's quota input (a
TrainingJob of a program that builds no stack) is held alone to the reservation, read anew for each check (as the
quota check reads live jobs anew then: nothing would count the run's own creates in a cached read).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial

from gcp_training_jobs.backends import quotas, transport
from gcp_training_jobs.backends.reservations import Looked, look_up, review_one
from gcp_training_jobs.backends.run_cache import RUN
from gcp_training_jobs.jobspec.core.names import RESOURCE_LABEL
from gcp_training_jobs.jobspec.review.reservations import Named, Need, needs_of
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.resources.job_model.identity import resource_label
from gcp_training_jobs.resources.training_job.quota import Outcome, held_once


def check(project: str, name: str, identity: str, facts: JobFacts, region: str,
          stack: Mapping[str, Sequence[Need]], endpoint: str | None) -> Outcome:
    """This job's verdict on the reservations it names: `facts`, the job as written, judged; `region`, its region;
    `identity`, its resource identity (organization/project/stack/name, whose siblings name the stack's other jobs);
    `stack`, the stack's quota input's needs by reservation (empty: the job alone)."""
    out = Outcome()
    own = [n if n.region else replace(n, region=region) for n in needs_of(name, facts, project)]
    siblings = identity.rsplit("/", 1)[0] + "/"
    alone = not any(n.job == name for needs in stack.values() for n in needs)
    for written in dict.fromkeys(n.named.written for n in own):
        mine = [n for n in own if n.named.written == written]
        others = [] if alone else [n for n in stack.get(written, ()) if n.job != name]
        try:
            if not alone:  # the live jobs read before the reservation: one moment for both, once per run
                held_once(project, endpoint, region)
            others = [n for n in others if not _live(project, endpoint, siblings, n, region)]
            ordered = _in_order(stack.get(written, ()), name, mine, others)
            found = review_one(ordered, project, endpoint, look=look_up if alone else _look_once)
        except (quotas.QuotaUnreadable, transport.ApiError, transport.TransportError,
                transport.CredentialsError) as error:
            offline = isinstance(error, transport.CredentialsError) or getattr(error, "offline", False)
            (out.skipped if offline else out.warnings).append(
                f"job {name}: reservation {mine[0].named.name} not checked: {error}")
            continue
        out.failures += [m.line() for m in found if name in m.jobs]
    return out


def _in_order(stacked: Sequence[Need], name: str, mine: list[Need], others: list[Need]) -> list[Need]:
    """The needs on one reservation in the stack's order, this job's own (as judged) where the stack placed it (last
    when the stack did not name it)."""
    order = list(dict.fromkeys(n.job for n in stacked))
    if name not in order:
        order.append(name)
    by_job = {name: mine}
    for need in others:
        by_job.setdefault(need.job, []).append(need)
    return [n for job in order for n in by_job.get(job, ())]


def _live(project: str, endpoint: str | None, siblings: str, need: Need, region: str) -> bool:
    """Whether another job of the stack is live already (in the reservation's inUseCount)."""
    label = resource_label(siblings + need.job)[RESOURCE_LABEL]
    return label in held_once(project, endpoint, need.region or region).live


def _look_once(named: Named, project: str, region: str | None, endpoint: str | None) -> Looked:
    """The reservation read once per run (the run's own creates are in its inUseCount only after; the stack's jobs
    made in the run are counted as the stack's)."""
    return RUN.once(("reservation", named.written, project, region, endpoint),
                    partial(look_up, named, project, region, endpoint))
