"""The reservation check of a TrainingJob's `check` (at `pulumi preview` and before `up` creates it): will the
Compute Engine reservations the job names give it its machines? And at create (`at_create`), the same rule on the
job's own placement, read fresh.

For a job the preview creates or replaces, on Vertex AI, that names a reservation (SPECIFIC_RESERVATION) at any
placement: the stack's jobs (the `reservations` of the stack's quota input, review.reservations.wire: what each job
takes from which reservation at each of its placements, in the stack's order; this job as judged in its place) are
held to the reservations they name by the one rule, jobspec.review.reservations.fit, job by job in the stack's order,
in the words `plan --online` uses: the exact machine, then each job's machines against what is free after the stack's
earlier jobs. Each reservation is read once per run (gcp_training_jobs.backends.run_cache.RUN, as the quota limits
are), only the jobs up to this one are judged (the later ones change nothing of its verdict). A job of the stack
already live is in the reservation's `inUseCount`: found by its `pulumi-resource` label among the region's live jobs
(the read the quota check makes, once per run), it is not counted again; this job itself, made anew, is. Only this
job's verdict is said: fitting nowhere fails its check; fitting at a fallback only is a warning naming it. A
reservation this job names that cannot be read (no credentials, permission denied): a warning, never a failure. A job
without the stack's quota input (a TrainingJob of a program that builds no stack) is held alone to the reservation,
read anew for each check (the run's own creates are in its `inUseCount` by then; whether this job is live already is
the quota check's reading of the run's live jobs, quota.held_in_run).

At create, for a job with several placements (tries.create_runs): before a placement that names a reservation is
sent, each reservation it names is read anew, once per create (quota.AtCreate.reservations: the run's own creates are
in its `inUseCount` by now; a job's placements share its reservation), and the job alone held to it by the same
rule; a placement they cannot give its machines is skipped unsent, as one whose quota cannot hold the job is
(quota.AtCreate). A reservation that cannot be read then leaves the placement to Vertex AI's answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

from gcp_training_jobs.backends import quotas
from gcp_training_jobs.backends.reservations import Looked, Reads, look_up, offline, review
from gcp_training_jobs.backends.run_cache import RUN
from gcp_training_jobs.jobspec.review.reservations import Named, Taker, fit, taker_of, verdict_lines
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.resources.job_model.identity import is_live, is_made
from gcp_training_jobs.resources.training_job.plan import StackAsks
from gcp_training_jobs.resources.training_job.quota import Outcome, held_in_run, held_once


def check(project: str, name: str, identity: str, placements: Mapping[int, JobFacts], region: str,
          stack: StackAsks, endpoint: str | None, *, creating: bool) -> Outcome:
    """This job's verdict on the reservations it names: `placements`, the job at each placement (index -> its facts,
    as judged); `region`, its region; `identity`, its resource identity (organization/project/stack/name, whose
    siblings name the stack's other jobs); `stack`, what the stack asks (plan.asks_of; none: the job alone);
    `creating`: a create, where a live job of this resource (left by a run that died, which the create adopts) is in
    the reservation's inUseCount already: counted once, as live."""
    out = Outcome()
    own = taker_of(name, placements, project, region)
    if not any(p.needs for p in own.places):
        return out
    siblings = identity.rsplit("/", 1)[0] + "/"
    alone = not any(t.name == name for t in stack.takers)
    upto = [own] if alone else [own if t.name == name else t for t in _upto(stack.takers, name)]
    try:
        if creating and _standing(project, endpoint, siblings, own, region, live=True, alone=alone):
            return out
        if not alone:  # the live jobs read before the reservations: one moment for both, once per run
            upto = [t for t in upto if t.name == name or not _standing(project, endpoint, siblings, t, region)]
        verdicts, unread = review(upto, project, endpoint, look=look_up if alone else _look_once)
    except quotas.QuotaUnreadable as error:
        (out.skipped if error.offline else out.warnings).append(
            f"job {name}: reservations not checked: {error}")
        return out
    mine = {n.named for p in own.places for n in p.needs}
    for named, why in unread.items():
        if named in mine:
            (out.skipped if offline(why) else out.warnings).append(
                f"job {name}: reservation {named.name} not checked: {why}")
    failures, warnings = verdict_lines(verdicts[-1])
    out.failures += failures
    out.warnings += warnings
    return out


def _upto(stack: Sequence[Taker], name: str) -> list[Taker]:
    """The stack's jobs up to this one, in the stack's order: the later ones change nothing of its verdict."""
    at = next(i for i, t in enumerate(stack) if t.name == name)
    return list(stack[:at + 1])


def _standing(project: str, endpoint: str | None, siblings: str, taker: Taker, region: str, *, live: bool = False,
              alone: bool = False) -> bool:
    """Whether a job of the stack was made already: live (in the reservations' inUseCount), or ended (a job `pulumi
    preview` leaves as it is takes nothing); `live`: live only. `alone`: a job alone, with the run's own creates
    (quota.held_in_run)."""
    def held(at: str) -> quotas.Held:
        return (held_in_run if alone else held_once)(project, endpoint, at)
    regions = (p.region or region for p in taker.places if p.needs)
    return is_live(siblings, taker.name, regions, lambda at: held(at).live) if live else \
        is_made(siblings, taker.name, regions, held)


def _look_once(named: Named, project: str, region: str | None, endpoint: str | None) -> Looked:
    """The reservation read once per run (the run's own creates are in its inUseCount only after; the stack's jobs
    made in the run are counted as the stack's)."""
    return RUN.once(("reservation", named.written, project, region, endpoint),
                    partial(look_up, named, project, region, endpoint))


def at_create(reads: Reads, name: str, facts: JobFacts, index: int, region: str) -> tuple[list[str], list[str]]:
    """Why the reservations placement `index` (the job there, `facts`) names, read anew for this create (`reads`, the
    create's: quota.AtCreate.reservations), cannot give the job its machines (each misfit's words; none when they can
    or it names none), and the reservations it names that could not be read (a line each)."""
    own = taker_of(name, {index: facts}, reads.project, region)
    if not own.needs:
        return [], []
    (verdict,) = fit([own], reads)
    named_here = {n.named for n in own.needs}
    return ([m.message for misses in verdict.misfits for m in misses],
            [f"job {name}: reservation {named.name} not read at create ({why}); the placement is sent, Vertex AI's "
             "answer deciding" for named, why in reads.unread.items() if named in named_here])
