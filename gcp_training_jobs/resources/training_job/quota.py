"""The quota check of a TrainingJob's `check` (at `pulumi preview` and before `up` creates it): will Google run it?

For a job the preview creates or replaces, on Vertex AI, the one rule of gcp_training_jobs.jobspec.review.quota_fit:
the stack's jobs (its quota input, `quota_fit.wire`: each job's placements and what it asks at each, in the
stack's order, built by stack.py from the settings) that are not live yet (a live one, found by its `pulumi-resource`
label, is counted among what live jobs hold) are placed in order, each at its first placement that fits beside the
stack's earlier new jobs and what live jobs hold, against the limits (Cloud Quotas, else Service Usage). This job's
own verdict is what the check says, in the words `plan --online` uses: over quota at every placement, the check fails
naming the metric it asks, the region, its need, what the stack's earlier new jobs take, what live jobs hold and the
limit; at a fallback only, a warning says which fallback `up` will use. Another job's excess is never this job's
failure. Quotas that cannot be read (no credentials, permission denied): a warning, never a failure.

A job without the stack's quota input (a TrainingJob of a program that builds no stack: the provider package's, a
consumer's Python program) is placed alone, beside every live job and every job the run has made (`held_in_run`).

What the checks of one run read alike is read once per run (gcp_training_jobs.backends.run_cache.RUN): a project's
limits, and what a region's live jobs hold. That read stays right while the run creates the stack's jobs: a job made
after it is a new job of the stack to the rule, each counted once. A job alone has no stack to count the run's
creates as new: each create is noted in the run (`note_made`, with what it holds, as judged), and a job alone is
placed beside the read and the jobs noted since it began that it does not hold live (by their `pulumi-resource`
label), so its check reads nothing again. (Read anew for each check instead, the live jobs were listed and judged
once per job: requests and judgements growing with the square of the jobs of a run.)

At create (`AtCreate`, asked by tries.create_runs for a job with several placements): before a placement is sent, the
quota free in its region for the metrics it asks, by the same rule (quota_fit.fit, needs_of), the job's own needs only
(the create makes one job), read fresh, never the run's cached read; a placement whose quota cannot hold the job is
skipped, as SkyPilot skips a GCP region whose quota limit is 0 before it provisions there, and tries anyway when the
read fails (GCP.check_quota_available, https://github.com/skypilot-org/skypilot/blob/
005261080a6b8102f3d95ff2147a855250f40272/sky/clouds/gcp.py, read 2026-11-28).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from gcp_training_jobs.backends import quotas
from gcp_training_jobs.backends.reservations import Reads
from gcp_training_jobs.backends.run_cache import RUN
from gcp_training_jobs.jobspec.catalog import quotas as table
from gcp_training_jobs.jobspec.core.names import RESOURCE_LABEL, STACK_LABEL
from gcp_training_jobs.jobspec.review.quota_fit import Asker, Fit, Over, Placement, fit, verdict_lines
from gcp_training_jobs.jobspec.review.quotas import needs_of
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.resources.job_model.identity import is_live, is_made
from gcp_training_jobs.resources.training_job.plan import StackAsks


@dataclass
class Outcome:
    """What the check reports: failures (the check fails), warnings and notes (logged)."""

    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    debug: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def check(project: str, name: str, identity: str, placements: Mapping[int, JobFacts], stack: StackAsks,
          endpoint: str | None, *, creating: bool, candidates: bool = False) -> Outcome:
    """This job's verdict: `identity`, its resource identity (organization/project/stack/name, whose siblings name the
    stack's other jobs); `placements`, its placements (index -> the job there, as judged, load.Judged.facts);
    `stack`, what the stack asks (plan.asks_of: none, the job alone); `creating`: a create, not a replace (a live
    job of this resource is then its own, left by a run that died, which the create adopts: counted once, as live);
    `candidates`: a `placement: cheapest` job, its placements its ranked candidates (named as such)."""
    out = Outcome()
    own = Asker(name, tuple(Placement(placements[i].region or "", needs_of(placements[i]), i)
                            for i in sorted(placements)))
    for place in own.placements:
        out.notes += [f"job {name}: {what} not quota-checked" for what in place.needs.unchecked]
    if not any(p.needs for p in own.placements):
        return out
    alone = stack.asker(name) is None
    held = partial(held_in_run if alone else held_once, project, endpoint)
    siblings = identity.rsplit("/", 1)[0] + "/"

    def running(asker: Asker) -> bool:
        """This job: its own live job, at a create (a replace's new job is new); the stack's others: made already
        (standing)."""
        if asker.name == name:
            return creating and _standing(siblings, asker, lambda region: held(region).live)
        return is_made(siblings, asker.name, (p.region for p in asker.placements if p.needs), held)

    try:
        limits, warned = RUN.once(("limits", project, endpoint), partial(_limits, project, endpoint))
        out.warnings += warned
        for metric, region in sorted({(m, p.region) for p in own.placements for m in p.needs.units}):
            if quotas.limit_of(limits, metric, region) is None:
                out.debug.append(f"{table.full_name(metric)} in {region}: "
                                 f"{'unlimited' if quotas.unlimited(limits, metric, region) else 'no limit found'}, "
                                 "not checked")
        if not alone and stack.asker(name) == own and running(own) == made(project, endpoint, siblings, own):
            found = stack_fit(project, endpoint, siblings, stack)  # the stack's plan, as every check and create sees it
        else:  # as judged here, it differs from the stack's plan (a replace, its own job live): placed anew
            found = fit([own] if alone else [own if a.name == name else a for a in stack.askers],
                        partial(quotas.limit_of, limits), lambda region: held(region).usage, running)
    except quotas.QuotaUnreadable as error:
        (out.skipped if error.offline else out.warnings).append(f"job {name}: quota check skipped: {error}")
        return out
    verdict = found.of(name)
    if verdict is not None:
        problems, warnings = verdict_lines(verdict, project, candidates)
        out.failures += problems
        out.warnings += warnings
    return out


def _standing(siblings: str, asker: Asker, labels_in: Callable[[str], Container[str]]) -> bool:
    """Whether the stack's job (or persistent resource) `asker` has a job whose `pulumi-resource` label is among
    `labels_in(region)` of a region it asks quota in."""
    return is_live(siblings, asker.name, (p.region for p in asker.placements if p.needs), labels_in)


def made(project: str, endpoint: str | None, siblings: str, asker: Asker) -> bool:
    """Whether the stack's job `asker` was made already: live (what it holds is among what live jobs hold), or ended
    (SUCCEEDED, FAILED, CANCELLED: a job `pulumi preview` leaves as it is asks nothing). Google's answer, read once
    per run: the regions' jobs as listed for what live jobs hold (backends.quotas.Held.resources)."""
    return is_made(siblings, asker.name, (p.region for p in asker.placements if p.needs),
                   partial(held_once, project, endpoint))


def stack_fit(project: str, endpoint: str | None, siblings: str, stack: StackAsks) -> Fit:
    """The stack's plan: where each of its jobs lands (quota_fit.fit over the stack's askers in its order, a job made
    already standing as it is), against the project's limits and what live jobs hold, each read once per run; computed
    once per run, shared by every check and every create of the run. QuotaUnreadable when the limits do not read."""
    def plan() -> Fit:
        limits, _ = RUN.once(("limits", project, endpoint), partial(_limits, project, endpoint))
        return fit(stack.askers, partial(quotas.limit_of, limits),
                   lambda region: held_once(project, endpoint, region).usage,
                   partial(made, project, endpoint, siblings))
    return RUN.once(("stack plan", project, endpoint, siblings, stack.config), plan)


def planned(project: str, endpoint: str | None, identity: str, name: str, stack: StackAsks) -> int | None:
    """The placement the stack's plan gives the job `name` to be made (its index), where a create starts: None when
    the job is not the stack's, is made already, fits nowhere, or the quotas do not read (the create then starts at
    its first placement, as alone)."""
    if stack.asker(name) is None:
        return None
    try:
        verdict = stack_fit(project, endpoint, identity.rsplit("/", 1)[0] + "/", stack).of(name)
    except quotas.QuotaUnreadable:
        return None
    return None if verdict is None or verdict.live else verdict.index


def _limits(project: str, endpoint: str | None) -> tuple[quotas.Limits, tuple[str, ...]]:
    """The project's limits and the warnings of their read (each job's check repeats them)."""
    warned: list[str] = []
    return quotas.read_limits(project, endpoint, warn=warned.append), tuple(warned)


def held_once(project: str, endpoint: str | None, region: str) -> quotas.Held:
    """What the region's live jobs hold, read once per run: the run's own creates are new jobs of the stack to the
    rule, so a read before them stays right (read again, they are live and counted as live)."""
    return RUN.once(("held", project, region, endpoint), partial(quotas.held, project, region, endpoint))


def held_in_run(project: str, endpoint: str | None, region: str) -> quotas.Held:
    """What the region's live jobs hold as the run knows it, for a job alone: read once per run (held_once's read),
    with the jobs the run made since that read began (`note_made`) that it does not hold live, counted as live."""
    found = RUN.once_since(("held", project, region, endpoint), partial(quotas.held, project, region, endpoint),
                           ("made", project, region, endpoint))
    return found.value.adding(found.noted)


def note_made(project: str, endpoint: str | None, facts: JobFacts, labels: Mapping[str, str], *,
              live: bool = True) -> None:
    """The run made a Vertex AI job (`facts`, as judged; `labels`, those it was sent with), or saw it end (`live`
    False): noted for `held_in_run` with what it holds, so that the checks after it count it (or no longer count it)
    without reading the region's jobs again."""
    if facts.region and labels.get(RESOURCE_LABEL):
        RUN.note(("made", project, facts.region, endpoint),
                 quotas.Made(labels[RESOURCE_LABEL], labels.get(STACK_LABEL), needs_of(facts).units, live))


def _fresh(project: str, endpoint: str | None, region: str) -> quotas.Held:
    """What the region's live jobs hold, read anew (at create: not the run's read)."""
    return quotas.held(project, region, endpoint)


class AtCreate:
    """What is read at create, for one create of one job: the project's limits read once, what each region's live
    jobs hold read once (`_fresh`: the run's own creates are live by now), each only where a placement asks a metric
    with a limit; and each reservation a placement names, read once (`reservations`, for reserved.at_create: the
    placements of a job share its reservation). Quotas that cannot be read are said once (`say`; for want of
    credentials, `note`), then nothing more is read and every placement is sent, Google's answer deciding."""

    def __init__(self, project: str, endpoint: str | None, name: str, *, say: Callable[[str], None],
                 note: Callable[[str], None], debug: Callable[[str], None]):
        self.project, self.endpoint, self.name = project, endpoint, name
        self.say, self.note, self.debug = say, note, debug
        self._limits: quotas.Limits | None = None
        self._held: dict[str, Mapping[str, int]] = {}
        self._unreadable = False
        self.reservations = Reads(project, endpoint)

    def over(self, facts: JobFacts, index: int) -> tuple[Over, ...]:
        """Why the quota of placement `index` (the job there, `facts`) cannot hold the job: each metric it asks over
        its free quota; () when it fits, asks nothing (a reservation, a persistent resource), or quotas do not read."""
        needs = needs_of(facts)
        if not needs or self._unreadable:
            return ()
        try:
            if self._limits is None:
                self._limits = quotas.read_limits(self.project, self.endpoint, warn=self.debug)
            found = fit([Asker(self.name, (Placement(facts.region or "", needs, index),))],
                        partial(quotas.limit_of, self._limits), self._usage)
        except quotas.QuotaUnreadable as error:
            self._unreadable = True
            (self.note if error.offline else self.say)(
                f"job {self.name}: quota not read at create ({error}); each placement is tried in order")
            return ()
        (verdict,) = found.verdicts
        return () if verdict.fits else verdict.over[0]

    def again(self) -> None:
        """Read anew at the next placement (after a wait: time has passed); quotas that did not read stay unread."""
        self._limits, self._held = None, {}
        self.reservations = Reads(self.project, self.endpoint)

    def _usage(self, region: str) -> Mapping[str, int]:
        if region not in self._held:
            self._held[region] = _fresh(self.project, self.endpoint, region).usage
        return self._held[region]


def free_words(overs: Sequence[Over]) -> str:
    """The quota of a placement skipped at create, one metric after another: "METRIC free N, needs M"."""
    return "; ".join(f"{table.full_name(o.metric)} free {max(0, o.limit - o.usage)}, needs {o.need}" for o in overs)
