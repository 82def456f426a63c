"""The TrainingJob provider's part of "When Google has no capacity": what `check` adds (each of `fallbacks` judged,
guardrailed and priced like the job, `retries` and the re-run token checked, the quota check, the reservations it
names: reserved.check), what `diff` adds (a job whose inputs did not change is kept, reported or made again, by
runs.decide_finished_job on its state read from the API), and `create` across placements (a live job of the resource
adopted wherever it runs; the next try after the last job of this spec; with several placements, one whose quota,
read at create, cannot hold the job skipped unsent (quota.AtCreate), and one whose reservation, read at create,
cannot give it its machines (reserved.at_create); the next placement at once when a create is
refused for quota; with waitForCompletion, a job that failed for Google's reasons made again in the same `up`).

The provider (provider.TrainingJobProvider, the one class pickled into state) hands these functions plain values:
its inputs read once (inputs.Inputs), its endpoint, where its jobs are reached (JobsAt) and how it waits (Wait).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi.dynamic import CheckFailure

from gcp_training_jobs import backends
from gcp_training_jobs.backends.base import Target
from gcp_training_jobs.backends.body_match import differences, verdict
from gcp_training_jobs.backends.failures import failure_of_job
from gcp_training_jobs.backends.lifecycle import Declared, Jobs, LookupFailed
from gcp_training_jobs.backends.transport import ApiError, QuotaExceeded, TransportError
from gcp_training_jobs.jobspec.catalog import quotas as catalog_quotas
from gcp_training_jobs.jobspec.core.errors import SpecError, TrainingJobsError
from gcp_training_jobs.jobspec.core.names import (
    ACTIVE_STATES,
    CANCELLED,
    FAILED,
    PLACEMENT_LABEL,
    RESOURCE_LABEL,
    SPEC_LABEL,
    SUCCEEDED,
    VERTEX,
)
from gcp_training_jobs.jobspec.load import Judged
from gcp_training_jobs.jobspec.render.bodies import Renderable
from gcp_training_jobs.jobspec.review.cost import Placed
from gcp_training_jobs.jobspec.rules import today
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.resources import engine_watch
from gcp_training_jobs.resources import provider_log as log
from gcp_training_jobs.resources.fallbacks import alternative_job
from gcp_training_jobs.resources.job_model import runs
from gcp_training_jobs.resources.job_model.identity import labels_of, region_of_name
from gcp_training_jobs.resources.job_model.inputs import (
    Inputs,
    judge_wire,
    known_only,
    new_job_id,
    preview_job_id,
    unknown,
)
from gcp_training_jobs.resources.provider_log import say_once
from gcp_training_jobs.resources.training_job import quota, reserved
from gcp_training_jobs.resources.training_job.on_resource import resource_failures
from gcp_training_jobs.resources.training_job.plan import NO_STACK, StackAsks
from gcp_training_jobs.resources.training_job.review import budget_input_problems, cost_line, job_rule_problems


class QuotaRefused(TrainingJobsError):
    """Every placement of a job was refused for quota: nothing was created."""


@dataclass(frozen=True)
class JobsAt:
    """Where a resource's jobs are reached: its project and backend, at the provider's endpoint, with its clock and
    sleep (the lifecycle's retries and waits); `region` and `job`: the job as written, which a name or a placement
    may move elsewhere."""

    project: str
    backend: str
    region: str
    job: Mapping[str, Any]
    endpoint: str | None
    clock: Callable[[], float]
    sleep: Callable[[float], None]

    def at(self, region: str, job: Renderable | None = None) -> Jobs:
        """The lifecycle in `region`, in the collection of `job` (the parsed model; else the job as written)."""
        chosen = backends.backend_for(self.backend, job if job is not None else dict(self.job))
        return Jobs(chosen, Target(self.project, region, self.endpoint), log=log.info,
                    clock=self.clock, sleep=self.sleep, guard=engine_watch.guard)

    def of_name(self, name: str | None) -> Jobs:
        """The lifecycle of the job named `name` (a Vertex AI job's name says its region: a fallback may run elsewhere
        than the job as written), else at the job's own region."""
        return self.at(region_of_name(name) or self.region)


#: How the provider waits for a job it made: (where, its id, the job as created, whether a FAILED job is made
#: again) -> the job as it ended (or as it is, when not asked to wait).
Wait = Callable[[Jobs, str, dict[str, Any], Callable[[dict[str, Any]], bool]], dict[str, Any]]


# -- check -----------------------------------------------------------------------------------------------------


def check_runs(olds: Mapping[str, Any], new: Inputs, judged: Judged | None, endpoint: str | None,
               stack: StackAsks = NO_STACK) -> list[CheckFailure]:
    """What `check` adds for fallbacks, retries, the re-run token and quotas (`new`: the inputs, read once;
    `judged`: the job as written, judged once; `endpoint`: the provider's; `stack`: what the stack asks, from its
    config: plan.asks_of)."""
    failures: list[CheckFailure] = []  # (the inputs' types and ranges: inputs.input_problems, in the provider's check)
    if judged is None or judged.body is None:
        return failures
    name, backend, rails = new.name or "job", new.backend, new.guardrails
    region = None if unknown(new.region) else new.region  # unknown at preview: no quota check
    job = known_only(new.job, unknown)
    placements: dict[int, JobFacts] = {0: judged.facts}  # placement index -> the job there, as judged
    shift = 1
    if new.cheapest and new.fallbacks:  # placement: cheapest: the candidates alone, fallbacks[i] placement i
        placements, shift = {}, 0
    for index, alternative in enumerate(new.fallbacks):
        where = f"fallbacks[{index}]"
        said = f"candidate {index + 1}" if new.cheapest else where  # placement: cheapest: its ranked candidates
        if unknown(alternative):
            continue
        if not isinstance(alternative, Mapping):
            failures.append(CheckFailure(where, f"{alternative!r}; allowed: a mapping of region, machineSpec and "
                                         "scheduling"))
            continue
        data, bad = alternative_job(job, alternative)
        failures += [CheckFailure(f"{where}.{p.path}" if p.path else where, p.message) for p in bad]
        if bad:
            continue
        try:
            other = judge_wire(data, backend=backend, job_id=preview_job_id(name))
        except SpecError as error:
            failures += [CheckFailure(f"{where}.job.{p.path}", p.message) for p in error.problems]
            continue
        failures += [CheckFailure(f"{where}.job.{p.path}", p.message) for p in other.problems]
        if other.body is None:
            continue
        failures += [CheckFailure(p.path, f"{said} ({other.facts.region} {other.facts.strategy or 'STANDARD'}): "
                                          f"{p.message}" if new.cheapest else f"{where}: {p.message}")
                     for p in job_rule_problems(other.facts, name, rails, today(), falls_back=True)]
        if not new.cheapest:
            say_once(cost_line(other.facts, f"{name} {where}", falls_back=True))  # run when the first had no room
        placements[index + shift] = other.facts
    if new.cheapest and placements:  # priced where it may run: at the first candidate, its worst at the dearest
        placed = Placed(tuple(placements[i] for i in sorted(placements)), judged.facts)
        failures += [CheckFailure(p.path, p.message) for p in budget_input_problems(judged.facts, name, new.budget,
                                                                                    placed=placed)]
        say_once(cost_line(judged.facts, name, placed=placed))
    # only for a job about to be made (a create, or a replace) in a project known (none: the check's own failure)
    if failures or backend != VERTEX or not region or not isinstance(new.project, str) or not new.project \
            or unknown(new.project) or (olds and not runs.changes_of(olds, new.props).replaces):
        return failures
    failures += [CheckFailure("job", line) for line in resource_failures(new, judged.facts, region, endpoint)]
    creating = not olds  # else a replace: its new job is new beside the old one
    for outcome in (quota.check(new.project, name, new.identity, placements, stack, endpoint, creating=creating,
                                candidates=new.cheapest),
                    reserved.check(new.project, name, new.identity, placements, region, stack, endpoint,
                                   creating=creating)):
        for line in outcome.warnings:
            log.warn(line)
        for line in outcome.skipped:  # offline: no credentials to read them with
            log.info(line)
        for line in (*outcome.notes, *outcome.debug):  # what was not checked (`pulumi preview --debug` shows it)
            log.debug(line)
        failures += [CheckFailure("job", line) for line in outcome.failures]
    return failures


# -- diff ------------------------------------------------------------------------------------------------------


def run_again_if_failed(id_: str, old: Inputs, retries: int, reach: JobsAt) -> bool:
    """For a job whose inputs did not change (`old`: its inputs and last outputs; `retries`: the new inputs'): read
    its state from the API (unless it SUCCEEDED), report it, and say whether it is made again (FAILED for Google's
    reasons, retries left). A read that fails keeps the job."""
    state = old.props.get("state")
    if not id_ or state == SUCCEEDED or state not in (*ACTIVE_STATES, FAILED, CANCELLED):
        return False
    try:
        jobs = reach.of_name(id_)
        resource = jobs.get(id_)
    except (ApiError, TransportError, ValueError) as error:  # (ValueError: NotAJobName, or a backend not known)
        log.debug(f"could not read job {id_} ({error}); kept as last known")
        return False
    found = runs.decide_finished_job(old.name or id_, resource, jobs.backend.state(resource) if resource else "",
                                     retries)
    if found.line:
        (log.warn if found.level == "warn" else log.info)(found.line)
    return found.run_again


# -- create ----------------------------------------------------------------------------------------------------


def create_runs(inputs: Inputs, reach: JobsAt, wait: Wait, stack: StackAsks = NO_STACK
                ) -> tuple[Jobs, dict[str, Any], str]:
    """The resource's one job: a live one adopted wherever a placement runs, else made at the next try (after the
    last job of this spec; a first try at the placement the stack's plan gives it, `stack`: what the stack asks),
    then the next placement on a quota refusal or when the quota free there, read at create, cannot hold it; waited
    for when asked, and made again in the same `up` when it failed for Google's reasons. Returns (where, the job,
    its id)."""
    placements = runs.placements(inputs.job, list(inputs.fallbacks), inputs.cheapest)
    retries = inputs.retries
    written = judge_wire(inputs.job, backend=inputs.backend, rules=False).checked()
    model: Any = written.job  # parsed once: the labels and the collection (training or tuning) of every try
    judged = {0: written} if placements[0].index == 0 and placements[0].job == dict(inputs.job) else {}
    sample = labels_of(inputs, preview_job_id(inputs.name), model)
    identity = {k: sample[k] for k in (RESOURCE_LABEL, SPEC_LABEL)}
    places = {place.index: reach.at(place.region, model) for place in placements}
    declared = declared_of(inputs, placements, judged)
    history: list[dict[str, Any]] = []
    for jobs in _distinct(places):  # one lookup per place: a live job is adopted; the others are the history
        try:
            found = jobs.find_all(identity)
        except (ApiError, TransportError) as error:
            raise LookupFailed(f"cannot look for the jobs of {inputs.name or 'this resource'} before creating one "
                               f"({error}); nothing was created: run `pulumi up` again") from None
        adopted = jobs.adopt_live(identity, found=found, declared=declared)
        if adopted is not None:
            return jobs, adopted, jobs.backend.job_id_of(adopted)
        history += found
    previous = max(history, key=lambda job: str(job.get("createTime") or ""), default=None)
    failure = failure_of_job(previous) if previous is not None and _state(places, previous) == FAILED else None
    step = runs.next_try(previous, failure, len(placements), retries)
    if step.why:
        log.info(f"job {inputs.name}: {step.why}")
    elif (start := _planned_start(inputs, reach, placements, stack)) is not None:
        step = runs.NextTry(start, 0)
    refused: list[str] = []
    skipped: list[str] = []  # of the placements in `refused`, why each skipped at create was: QUOTA, RESERVED
    at_create = _quota_at_create(inputs, reach, len(placements))
    looked_up = True  # just now, everywhere; looked up again after a wait (another run may have made one since)
    while True:
        place = placements[step.index % len(placements)]
        if place.index not in judged:
            judged[place.index] = judge_wire(place.job, backend=inputs.backend, rules=False).checked()
        why = _skipped(at_create, judged[place.index].facts, place.index, inputs, reach)
        if why is not None:  # its quota or its reservation cannot hold the job: the next placement, nothing sent
            words = f"{_skip_words(place, judged[place.index].facts, inputs.cheapest)} skipped at create: {why.words}"
            refused.append(words)
            skipped.append(why.kind)
            step = _next_placement(step, placements, refused, skipped, inputs, reach.project)
            log.info(f"job {inputs.name}: {words}")
            continue
        jobs = places[place.index]
        job_id = new_job_id(inputs.name or "job")
        labels = {**labels_of(inputs, job_id, model), **runs.run_labels(place.index, step.retry)}
        try:
            resource = jobs.create(job_id, judged[place.index].body_for(job_id, labels), identity,
                                   looked_up=looked_up, declared=declared)
        except QuotaExceeded as error:
            where = _placement_words(place, inputs.cheapest)
            refused.append(f"{where}: {error.message}")
            step = _next_placement(step, placements, refused, skipped, inputs, reach.project)
            log.warn(f"job {inputs.name}: {where} refused for quota ({error.message}); trying "
                     f"{_placement_words(placements[step.index], inputs.cheapest)}")
            continue
        job_id = jobs.backend.job_id_of(resource) or job_id
        facts = judged[place.index].facts
        if inputs.backend == VERTEX:  # the checks after it in this run count it (quota.held_in_run)
            quota.note_made(reach.project, reach.endpoint, facts, labels)
        again = _retryable_failure(jobs, retries)
        resource = wait(jobs, job_id, resource, again)
        if inputs.backend == VERTEX and jobs.backend.state(resource) not in ACTIVE_STATES:
            quota.note_made(reach.project, reach.endpoint, facts, labels, live=False)  # waited for: it holds nothing
        if inputs.wait and again(resource):
            step = runs.next_try(resource, failure_of_job(resource), len(placements), retries)
            log.info(f"job {inputs.name}: {step.why}; making it again at "
                     f"{_placement_words(placements[step.index], inputs.cheapest)}")
            refused, skipped, looked_up = [], [], False
            if at_create is not None:
                at_create.again()
            continue
        return jobs, resource, job_id


def declared_of(inputs: Inputs, placements: list[runs.Placement] | None = None,
                judged: dict[int, Judged] | None = None) -> Declared:
    """Why a job found with this resource's identity labels is not the job the stack declares, or None when it is:
    its body against what the stack renders for it at the placement its `pulumi-placement` label names (a fallback's
    or a cheapest candidate's region, strategy and machine, not the job as written), and its region (from its name)
    against that placement's (body_match.differences). `placements` and `judged` (placement index -> the placement
    as judged): the caller's, when it has them."""
    places = {p.index: p for p in (placements if placements is not None else
                                   runs.placements(inputs.job, list(inputs.fallbacks), inputs.cheapest))}
    rendered = judged if judged is not None else {}

    def why_not(job: dict[str, Any]) -> str | None:
        index = runs.placement_index(job)
        place = places.get(index)
        if place is None:
            return f"its {PLACEMENT_LABEL} label names placement {index}, which the stack does not declare"
        if place.index not in rendered:
            rendered[place.index] = judge_wire(place.job, backend=inputs.backend, rules=False).checked()
        found = differences(rendered[place.index].body_for(""), job)
        runs_in = region_of_name(str(job.get("name") or ""))
        if runs_in and place.region and runs_in != place.region:
            found.insert(0, f"region: the stack's {place.region} (placement {index}), the job's {runs_in}")
        return verdict(found)
    return why_not


def _planned_start(inputs: Inputs, reach: JobsAt, placements: list[runs.Placement], stack: StackAsks) -> int | None:
    """Where a first try of a job with several placements starts: the placement the stack's plan gives it
    (quota.planned: the stack's jobs in its order against what live jobs hold, read once per run), so that a job with
    a fallback never takes the room the plan gave another of the stack's jobs; None: at its first (no plan, or the
    plan's placements are not this job's: its region there differs)."""
    if len(placements) < 2 or reach.backend != VERTEX:
        return None
    index = quota.planned(reach.project, reach.endpoint, inputs.identity, inputs.name, stack)
    asker = stack.asker(inputs.name)
    at = next((pos for pos, place in enumerate(placements) if place.index == index), None)
    if not index or at is None or asker is None or index >= len(asker.placements) \
            or asker.placements[index].region != placements[at].region:
        return None
    log.info(f"job {inputs.name}: the stack's plan gives it {_placement_words(placements[at], inputs.cheapest)}, "
             "where the stack's earlier jobs leave room")
    return at


def _quota_at_create(inputs: Inputs, reach: JobsAt, count: int) -> quota.AtCreate | None:
    """The quota read before each placement is sent: for a Vertex AI job with several placements (a job with one is
    sent as it is: Google's answer decides)."""
    if count < 2 or reach.backend != VERTEX:
        return None
    return quota.AtCreate(reach.project, reach.endpoint, inputs.name or "job", say=log.warn, note=log.info,
                          debug=log.debug)


#: Why a placement was skipped at create: its quota, or its reservation, cannot hold the job.
QUOTA, RESERVED = "quota", "reservation"


@dataclass(frozen=True)
class Skip:
    """A placement skipped at create: why (QUOTA, RESERVED) and the words that say it."""

    kind: str
    words: str


def _skipped(at_create: quota.AtCreate | None, facts: JobFacts, index: int, inputs: Inputs,
             reach: JobsAt) -> Skip | None:
    """Why a placement of a job with several is skipped at create, read fresh: the quota free in its region cannot
    hold it (quota.AtCreate), or a reservation it names cannot give it its machines (reserved.at_create); None: sent."""
    if at_create is None:
        return None
    over = at_create.over(facts, index)
    if over:
        return Skip(QUOTA, quota.free_words(over))
    short, unread = reserved.at_create(at_create.reservations, inputs.name or "job", facts, index,
                                       facts.region or reach.region)
    for line in unread:
        log.warn_once(line)
    return Skip(RESERVED, "; ".join(short)) if short else None


def _next_placement(step: runs.NextTry, placements: list[runs.Placement], refused: list[str], skipped: list[str],
                    inputs: Inputs, project: str) -> runs.NextTry:
    """The try after a placement refused for quota by Google or skipped at create (no retry spent); QuotaRefused when
    every placement was (`refused`: each one's words; `skipped`: why each of them skipped was), naming each."""
    if len(refused) < len(placements):
        return runs.NextTry((step.index + 1) % len(placements), step.retry)
    said = "; ".join(refused)
    if RESERVED in skipped:
        raise QuotaRefused(f"job {inputs.name}: no placement can hold the job (quota refused, or no room on the "
                           f"reservation it names), nothing was created: {said}") from None
    if len(skipped) < len(refused):
        raise QuotaRefused(f"job {inputs.name}: every placement was refused for quota, nothing was created: "
                           f"{said}") from None  # (raised while a 429 is handled: not its context)
    raise QuotaRefused(f"job {inputs.name}: no placement has the quota free to hold the job, nothing was created: "
                       f"{said}; ask for more at {catalog_quotas.QUOTAS_CONSOLE.format(project=project)} "
                       f"({catalog_quotas.REQUEST_MORE})") from None


def _retryable_failure(jobs: Jobs, retries: int) -> Callable[[dict[str, Any]], bool]:
    """Whether a waited job is made again in the same `up`: FAILED for Google's reasons, with retries left."""
    def again(resource: dict[str, Any]) -> bool:
        if jobs.backend.state(resource) != FAILED:
            return False
        failure = failure_of_job(resource)
        return failure.googles and runs.retry_number(resource) < retries
    return again


def _placement_words(place: runs.Placement, cheapest: bool) -> str:
    """How a log line names where a try runs: placement 0 is the job as written; under `placement: cheapest`, whose
    placements are the candidates alone, placement i is candidate i + 1 (the first the cheapest)."""
    if cheapest:
        return f"candidate {place.index + 1} ({place.region or 'its region'})"
    return f"placement {place.index} ({place.region or 'its region'})" if place.index else \
        f"the job as written ({place.region or 'its region'})"


def _skip_words(place: runs.Placement, facts: JobFacts, cheapest: bool = False) -> str:
    """How a placement skipped at create is named: its index (under `placement: cheapest`, its candidate's number),
    region and strategy."""
    which = f"candidate {place.index + 1}" if cheapest else f"placement {place.index}"
    return f"{which} ({facts.region or place.region or 'its region'} {facts.strategy or 'STANDARD'})"


def _distinct(places: Mapping[int, Jobs]) -> list[Jobs]:
    """One Jobs per place a lookup covers (Vertex AI: a region; ml v1 lists a project's jobs in every region)."""
    seen: dict[tuple[str, str, str], Jobs] = {}
    for jobs in places.values():
        key = (jobs.backend.name, jobs.target.project, jobs.target.region if jobs.backend.name == VERTEX else "")
        seen.setdefault(key, jobs)
    return list(seen.values())


def _state(places: Mapping[int, Jobs], resource: dict[str, Any]) -> str:
    return next(iter(places.values())).backend.state(resource)
