"""What the TrainingJob provider tells a reviewer, from the pure rules: the stack's guardrails and the fixed job
rules (check), the job's estimated cost (check, one info line in `pulumi preview`, said once:
provider_log.say_once), what a replace or a delete does to a job that is still queued or running (diff, delete),
and after its create, a waiting `pulumi up`'s reports (its log's last line every REPORT_SECONDS, a FAILED job's
error with its last LAST_LINES log lines) and the job's cost so far (the `costUsd` output). No Pulumi here: the
provider logs and fails with what these functions return.

A job is protected by `jobs.NAME.protect`, else by `guardrails.protectJobs`. The engine never asks a dynamic
provider before it deletes a resource that left the program (nor at `pulumi destroy`), so a protected active job
is refused by the provider's delete, at `pulumi up`, with what was last deployed; for that delete to hold for a
replace too, a replace is refused when the job is protected now *or* was when last deployed (protection is
lifted by a `pulumi up` of its own, as Pulumi's own `protect` option is).

A waited job's log is read from Cloud Logging (gcp_training_jobs.backends.cloud_logging) at the provider's endpoint
override, else Google's; a read that fails is said once (a deployer without `roles/logging.viewer` still deploys)
and never fails the job's create. The clock is the provider's (injected in tests), so "every minute" is counted,
never timed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Final

from gcp_training_jobs.backends.cloud_logging import LoggingError, LogLine, Reader, log_job_id
from gcp_training_jobs.jobspec.catalog.prices import PriceTableError
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.core.names import ACTIVE_STATES, LIVE_STATES, NAMESPACE, PAUSED_STATES
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.review.cost import Estimate, Placed, estimate, estimate_placed
from gcp_training_jobs.jobspec.review.cost_text import candidate_text, estimate_text, runs_as, where_text
from gcp_training_jobs.jobspec.review.guardrails import (
    Guardrails,
    budget_problems,
    budget_unpriced,
    end_of_life_problems,
    guardrail_problems,
    key,
)
from gcp_training_jobs.jobspec.review.money import Amount, hours_text, missing_text
from gcp_training_jobs.jobspec.review.run_cost import run_cost
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.resources.job_model.protection import Protection


class ProtectedJobError(TrainingJobsError):
    """A change would replace or delete a protected job that is queued, preparing or running."""


def job_rule_problems(facts: JobFacts, name: str, rails: Guardrails, today: date, *,
                      falls_back: bool = False) -> list[Problem]:
    """What one job breaks of its stack's per-job guardrails (maxJobCostUsd priced in its region) and of the fixed
    job rules (end-of-life accelerators), on its facts (load.Judged.facts); the stack-wide guardrails
    (maxAcceleratorsPerStack, maxHourlyUsd) are plan's and the pack's. `falls_back`: the job has fallbacks, or is
    one (priced off any reservation: cost.estimate)."""
    return guardrail_problems(facts, name, rails, falls_back=falls_back) + end_of_life_problems(facts, name, today)


def budget_input_problems(facts: JobFacts, name: str, given: Any, *, falls_back: bool = False,
                          placed: Placed | None = None) -> list[Problem]:
    """Guardrail `budget` at the check: the job's own worst case, then the stack's (the `budget` input,
    resources.budget.budget_input: {"monthlyUsd", "stackWorstCase": {"knownUsd", "unknown"}}), against the monthly
    budget; none without one. A region unknown at preview waits for `pulumi up`, as maxJobCostUsd does; `falls_back`:
    the job has fallbacks (priced off any reservation, as cost_line); `placed`: a `placement: cheapest` job's
    candidates (its worst case at its dearest, review.cost.estimate_placed)."""
    monthly = given.get("monthlyUsd") if isinstance(given, Mapping) else None
    if isinstance(monthly, bool) or not isinstance(monthly, int | float):
        return []
    problems: list[Problem] = []
    if facts.region is not None:
        try:
            worst = _estimate(facts, name, falls_back, placed).worst_case
            problems += budget_problems(worst, float(monthly), f"job {name}'s")
        except PriceTableError as error:
            return budget_unpriced(error, float(monthly), f"job {name}'s")
    stack = given.get("stackWorstCase")
    if not problems and isinstance(stack, Mapping) and isinstance(stack.get("knownUsd"), int | float):
        worst = Amount(float(stack["knownUsd"]), tuple(str(u) for u in stack.get("unknown") or ()))
        problems += budget_problems(worst, float(monthly))
    return problems


def _estimate(facts: JobFacts, name: str, falls_back: bool, placed: Placed | None) -> Estimate:
    """The job as written, or a `placement: cheapest` job where it may run (PriceTableError for a broken table)."""
    return estimate_placed(placed, name) if placed is not None else estimate(facts, name, falls_back=falls_back)


def cost_line(facts: JobFacts, name: str, *, falls_back: bool = False, placed: Placed | None = None) -> str:
    """One line, in full: `job l4: $0.61/h (SPOT, at Spot rates), on demand $0.98/h, worst case $1.22 (2 h),
    us-central1; basis: Compute Engine list 2026-07-30 + ...` (the parts without a price instead of the basis,
    each with its reason; `plan` shows each part on its own line). `placed`: a `placement: cheapest` job's
    candidates, priced at the one it would take first and its worst case at its dearest, as `plan` prices it
    (review.cost.estimate_placed): `job t: $0.50/h (SPOT, at Spot rates), ..., worst case $2.95 at its dearest
    candidate, us-central1 STANDARD (3 h), us-east4 SPOT (the candidate it would take first, ...)`."""
    try:
        found = _estimate(facts, name, falls_back, placed)
    except PriceTableError as error:
        return f"job {name}: no cost estimate: {error}"
    if found.on_resource is not None or found.reservation is not None:
        return f"job {name}: {estimate_text(found)}"
    hours = found.worst_at.timeout if found.worst_at is not None else found.timeout
    worst = f"{hours_text(hours.hours)}{'' if hours.set else ', no timeout set'}"
    if found.worst_at is not None:
        worst = f"at its dearest candidate, {where_text(found.worst_at)} ({worst})"
    else:
        worst = f"({worst})"
    how = runs_as(found)
    other = ("Spot", found.spot) if found.rate == "on_demand" else ("on demand", found.on_demand)
    head = (f"job {name}: {found.hourly.short()} {how if how == 'on demand' else f'({how})'}, "
            f"{other[0]} {other[1].short()}, worst case {found.worst_case.short(per_hour=False)} {worst}, "
            f"{candidate_text(found) or found.region or 'region unknown'}"
            f"{f'; {found.may_leave}' if found.may_leave else ''}")
    return head + (missing_text(found.on_demand, found.spot) or f"; basis: {'; '.join(found.bases)}")


@dataclass(frozen=True)
class Standing:
    """A job's state as last known (or just read) and since when: startTime, else createTime."""

    state: str | None
    since: str | None

    @property
    def active(self) -> bool:
        return self.state in LIVE_STATES  # a paused job too: cancelling it loses what it would resume

    @classmethod
    def of(cls, outputs: Mapping[str, Any]) -> Standing:
        state = outputs.get("state")
        since = outputs.get("startTime") or outputs.get("createTime")
        return cls(state if isinstance(state, str) else None, since if isinstance(since, str) else None)


def replacing_active_job(name: str, standing: Standing, protection: Protection, *,
                         replacing: bool) -> tuple[str | None, str | None]:
    """(warning, failure) for a change that replaces (or deletes) a job: a warning in words for an active job,
    a failure instead when it is protected; (None, None) for a job at rest."""
    warning = running_job_warning(name, standing.state, standing.since, replacing)
    if warning is None:
        return None, None
    if not protection.any:
        return warning, None
    problem = protected_job_problem(name, standing.state, standing.since, replacing, protection.by_job)
    assert problem is not None
    failure = str(problem)
    if protection.before and not protection.now:
        failure += (" (it was protected when last deployed: lift the protection with a `pulumi up` of its own "
                    "first, then make the change)")
    return None, failure


# --- What a merge does to a running job (the provider's diff) ------------------------------------------


def running_job_warning(name: str, state: str | None, since: str | None, replacing: bool) -> str | None:
    """`replacing job X (RUNNING since T): the running job will be cancelled`, or None for a job at rest."""
    if state not in LIVE_STATES:
        return None
    action = "replacing" if replacing else "deleting"
    when = f" since {since}" if since else ""
    which = "paused" if state in PAUSED_STATES else "running"
    return f"{action} job {name} ({state}{when}): the {which} job will be cancelled"


def protected_job_problem(name: str, state: str | None, since: str | None, replacing: bool,
                          by_job: bool) -> Problem | None:
    """The failure of a preview that would replace or delete a protected active job, or None."""
    warning = running_job_warning(name, state, since, replacing)
    if warning is None:
        return None
    own, every = f"{NAMESPACE}:jobs.{name}.protect", key("protectJobs")
    lift = (f"set {own} to false (a job's own protect wins over {every}; in a program, TrainingJob's protect "
            f"argument)" if by_job else f"set {every} to false (every job), or {own} to false (this job; in a "
            "program, TrainingJob's protect argument)")
    return Problem(own if by_job else every, f"{warning}, and job {name} is protected; allowed: let it finish (or "
                   f"cancel it) first, or {lift}, then run `pulumi up` to record that: a replace or destroy reads the "
                   "protection the last `pulumi up` recorded")


# --- A job after its create: a waited job's reports, its cost so far --------------------------------------

#: How many of a FAILED job's last log lines its error carries.
LAST_LINES: Final = 20
#: How often (by the provider's clock) a waiting `pulumi up` reports its job's last log line.
REPORT_SECONDS: Final = 60.0
#: The longest log line a report shows (a line is a trainer's print: it may be anything).
MAX_LINE: Final = 300

Log = Callable[[str], None]


def cost_usd(job: Mapping[str, Any], facts: JobFacts, now: float) -> float | None:
    """The job's cost so far in USD, rounded to the cent (run_cost: run time x the rate it runs at), from the job
    as the API answered it and its facts (read from that answer, translate.facts.facts_of_body); None when a part
    has no known price or the price table cannot be read."""
    try:
        found = run_cost(job, facts, "job", datetime.fromtimestamp(now, tz=UTC))
    except PriceTableError:
        return None
    return None if found.usd is None else round(found.usd, 2)


def _short(line: LogLine) -> str:
    text = line.text()
    return text if len(text) <= MAX_LINE else text[:MAX_LINE - 1] + "…"


class WaitReport:
    """The reports of one waited job: `poll` at each of the wait's polls, `failure` when it ended FAILED."""

    def __init__(self, reader: Reader, job_name: str, state_of: Callable[[dict[str, Any]], str],
                 clock: Callable[[], float], info: Log, warn: Log):
        self.reader, self.job_name, self.state_of, self.clock = reader, job_name, state_of, clock
        self.info, self.warn = info, warn
        self._last = clock()
        self._unreadable = False

    def poll(self, job: dict[str, Any]) -> None:
        """Every REPORT_SECONDS while the job is active: its last log line (nothing when it has none yet)."""
        if self.clock() - self._last < REPORT_SECONDS:
            return
        self._last = self.clock()
        if self.state_of(job) not in ACTIVE_STATES:
            return
        lines = self._tail(job, 1)
        if lines:
            self.info(f"training job {self.job_name}: last log line: {_short(lines[-1])}")

    def failure(self, job: dict[str, Any], message: str) -> str:
        """The error of a waited job that ended FAILED: its error message, then its last LAST_LINES log lines."""
        head = f"training job {self.job_name} FAILED: {message}"
        lines = self._tail(job, LAST_LINES)
        if self._unreadable:
            return head + " (its log could not be read; see the warning above)"
        if not lines:
            return head + " (its log has no line)"
        shown = "\n".join(f"    {_short(line)}" for line in lines)
        return f"{head}\nits last {len(lines)} log lines:\n{shown}"

    def _tail(self, job: dict[str, Any], count: int) -> list[LogLine]:
        if self._unreadable:
            return []
        try:
            return self.reader.tail(log_job_id(job), count)
        except LoggingError as error:
            self._unreadable = True
            self.warn(f"training job {self.job_name}: cannot read its log: {error}")
            return []
