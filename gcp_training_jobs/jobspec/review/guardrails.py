"""Guardrails: a stack's own rules on what its jobs may use, and the fixed rules every stack keeps. Pure.

One implementation, enforced in three places: `gcp-training-jobs plan` (offline, exit 1), the policy pack
in policies/ (`pulumi preview --policy-pack`, mandatory) and the TrainingJob provider's `check`. Each rule
reads a job's facts (translate.facts.JobFacts, load.Judged.facts: its pools in the one form, region, labels,
strategy, timeout, parallel runs), so it holds for every job vocabulary and backend, and returns Problems whose
path names the guardrail (`gcp-training-jobs:guardrails.maxAcceleratorsPerJob`) or fixed rule
(`no-end-of-life-accelerators`) and whose message names the job and the value.

Declared per stack under `gcp-training-jobs:guardrails` (the model below; the settings validate the names):
allowedAccelerators, maxAcceleratorsPerJob, maxAcceleratorsPerStack, requiredLabels, spotOnly (every Vertex
job's scheduling.strategy is SPOT or FLEX_START), maxHourlyUsd (the stack's estimated on-demand cost per
hour, gcp_training_jobs.jobspec.review.cost), maxJobCostUsd (a job's worst case: its cost per hour at the rate it runs
at, times the longest it may run), requireTimeout (every job sets the longest it may run) and protectJobs (the
provider refuses to replace or delete a running job). A cost guardrail that meets an unknown price fails: it
cannot be held.

The guardrail `budget` holds the stack's worst case (its jobs' worst cases summed, plan's `cost.stack`) to the
monthly budget declared under `gcp-training-jobs:budget` (monthlyUsd), the Budget the stack makes: a merge whose jobs
could spend more than the month's budget if each ran to its timeout is refused (`stack_budget_problems`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from pydantic import Field, NonNegativeInt

from gcp_training_jobs.jobspec.catalog import vertex_legacy
from gcp_training_jobs.jobspec.catalog.prices import PriceTable, PriceTableError
from gcp_training_jobs.jobspec.core.names import NAMESPACE
from gcp_training_jobs.jobspec.core.problems import Problem, allowed
from gcp_training_jobs.jobspec.review.cost import (
    SPOT_STRATEGIES,
    Estimate,
    Placed,
    StackEstimate,
    estimate,
    estimate_placed,
    estimate_resource,
    estimate_stack,
)
from gcp_training_jobs.jobspec.review.cost_text import runs_as, worst_case_text
from gcp_training_jobs.jobspec.review.money import Amount, usd, usd_total
from gcp_training_jobs.jobspec.rules.tasks import support_ended
from gcp_training_jobs.jobspec.rules.tasks import today as today_of_rules
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.jobspec.translate.persistent import ResourceFacts
from gcp_training_jobs.jobspec.vocab.training_input import WireModel

#: The stack config key the guardrails are declared under.
GUARDRAILS_KEY = f"{NAMESPACE}:guardrails"
#: The stack config key of the monthly budget, and so the path the guardrail `budget` reports.
BUDGET_KEY = f"{NAMESPACE}:budget"
#: The pulumi-gcp type of the Budget a stack with one registers (resources.budget; the policy pack reads its amount).
BUDGET_TYPE = "gcp:billing/budget:Budget"
#: The fixed rules (no stack can turn them off), by the name plan and the policy pack report.
RULE_END_OF_LIFE = "no-end-of-life-accelerators"


def key(name: str) -> str:
    """`maxAcceleratorsPerJob` -> `gcp-training-jobs:guardrails.maxAcceleratorsPerJob`."""
    return f"{GUARDRAILS_KEY}.{name}"


class Guardrails(WireModel):
    """`gcp-training-jobs:guardrails`: what this stack's jobs may use. Every key is optional (no limit)."""

    allowed_accelerators: tuple[str, ...] | None = None
    """The accelerator types jobs may use (acceleratorType names, e.g. NVIDIA_L4, TPU_V5_LITEPOD)."""
    max_accelerators_per_job: NonNegativeInt | None = None
    """At most this many accelerators held by one job at once (all pools, replicas and parallel trials)."""
    max_accelerators_per_stack: NonNegativeInt | None = None
    """At most this many accelerators held by all the stack's jobs together."""
    required_labels: tuple[str, ...] = ()
    """Label keys every job must carry (the stack's labels count)."""
    spot_only: bool = False
    """Every Vertex AI job runs on Spot or Flex-start capacity (scheduling.strategy SPOT or FLEX_START)."""
    max_hourly_usd: float | None = Field(default=None, ge=0)
    """The stack's estimated on-demand cost per hour, at most; an estimate with unknown prices fails."""
    max_job_cost_usd: float | None = Field(default=None, ge=0)
    """A job's worst case, at most: its cost per hour at the rate it runs at (Spot for SPOT) times the longest it
    may run (its timeout, else 7 days); an estimate with unknown prices fails."""
    require_timeout: bool = False
    """Every job sets the longest it may run (scheduling.timeout; ml v1 scheduling.maxRunningTime)."""
    protect_jobs: bool = False
    """Refuse (fail the preview) to replace or delete a job that is QUEUED, PREPARING or RUNNING."""

    @classmethod
    def of(cls, value: Guardrails | Mapping[str, Any] | None) -> Guardrails:
        """Guardrails from a model, a mapping as written (camelCase) or as Pulumi passes it, or nothing."""
        if isinstance(value, Guardrails):
            return value
        return cls.model_validate(dict(value or {}))


# --- A cost held to a cap (maxJobCostUsd, maxHourlyUsd, budget) ----------------------------------------------

#: What a figure with an unpriced part needs to be held to a cap.
ALL_PRICED = ("with every machine and accelerator priced in the price table "
              "(gcp_training_jobs/jobspec/catalog/prices.py)")


@dataclass(frozen=True)
class Cap:
    """A cost guardrail's cap and its words: the one shape of maxJobCostUsd, maxHourlyUsd and budget. A figure is over
    the cap, or has a part without a price (it cannot be held to the cap), or fits; a table that does not read
    cannot price it."""

    where: str
    """The key the problem names (`gcp-training-jobs:guardrails.maxJobCostUsd`, `gcp-training-jobs:budget`)."""
    limit: float
    at_most: str
    """The cap in words, after `at most` (`$5.00`, `$100.00/h`, `the $2,000.00 monthly budget`)."""
    what: str
    """The figure held to it (`job train's worst case`, `the stack's estimated on-demand cost`)."""
    named: str = "the cap"
    """The cap after `over` and `held to`."""
    fits: str = ""
    """What is allowed, when it says more than `allowed: at most` the cap."""
    priced: str = ""
    """What a table that does not read cannot price, when not `what`."""
    per_hour: bool = False
    """The figure is per hour (`$3.31/h`), not in all."""

    def problems(self, figure: Amount, shown: str = "") -> list[Problem]:
        """The figure over the cap (`shown`: its words there, when more than its amount), or with a part unpriced."""
        allowed_text = self.fits or f"allowed: at most {self.at_most}"
        text = figure.text(per_hour=self.per_hour)
        if figure.known > self.limit:
            return [Problem(self.where, f"{self.what} is {shown or text}, over {self.named}; {allowed_text}")]
        if not figure.complete:
            return [Problem(self.where, f"{self.what} is {text}: it cannot be held to {self.named}; {allowed_text}, "
                            f"{ALL_PRICED}")]
        return []

    def unpriced(self, error: PriceTableError) -> list[Problem]:
        """The figure cannot be priced: the price table does not read."""
        return [Problem(self.where, f"{self.priced or self.what} cannot be priced: {error}; allowed: at most "
                        f"{self.at_most}")]


# --- One job -------------------------------------------------------------------------------------------


def guardrail_problems(facts: JobFacts, name: str, guardrails: Guardrails | Mapping[str, Any] | None,
                       table: PriceTable | None = None, *, falls_back: bool = False) -> list[Problem]:
    """What one job breaks of its stack's guardrails (the per-job ones), each naming guardrail, job, value: from its
    facts (its labels as created, its region: maxJobCostUsd prices it there); `table`: the price table (default:
    the active one); `falls_back`: the job has fallbacks, or is one (cost.estimate: priced off a reservation)."""
    rails = Guardrails.of(guardrails)
    problems: list[Problem] = []
    if rails.allowed_accelerators is not None and not facts.on_persistent_resource:  # the resource is judged
        for kind, where in _accelerator_pools(facts).items():
            if kind not in rails.allowed_accelerators:
                problems.append(Problem(key("allowedAccelerators"), f"job {name} uses {kind} ({where}); "
                                        f"allowed: {allowed(rails.allowed_accelerators)}"))
    if rails.max_accelerators_per_job is not None:
        held = facts.accelerators
        if held > rails.max_accelerators_per_job:
            problems.append(Problem(key("maxAcceleratorsPerJob"), f"job {name} holds {held} accelerators at once "
                                    f"({_breakdown(facts)}); allowed: at most {rails.max_accelerators_per_job}"))
    if rails.required_labels:
        missing = [label for label in rails.required_labels if label not in facts.labels]
        if missing:
            problems.append(Problem(key("requiredLabels"), f"job {name} has no label {', '.join(missing)}; "
                                    f"allowed: jobs labelled {allowed(rails.required_labels)} (the job's labels "
                                    f"or the stack's gcp-training-jobs:labels)"))
    if rails.spot_only and not facts.ml_v1 and facts.strategy not in SPOT_STRATEGIES:
        problems.append(Problem(key("spotOnly"), f"job {name} runs as {facts.strategy or 'STANDARD'} (on demand); "
                                f"allowed: scheduling.strategy {' or '.join(SPOT_STRATEGIES)}"))
    if rails.require_timeout and not facts.timeout.set:
        longest = facts.timeout
        problems.append(Problem(key("requireTimeout"), f"job {name} sets no timeout, so it may run "
                                f"{longest.seconds / 86400:g} days ({longest.default_of}'s default); allowed: a job "
                                "with its longest run set: scheduling.timeout in a jobSpec (e.g. 7200s), "
                                "scheduling.maxRunningTime in a trainingInput"))
    if rails.max_job_cost_usd is not None:
        problems += _job_cost_problems(facts, name, rails.max_job_cost_usd, table, falls_back)
    return problems


def _job_cost_problems(facts: JobFacts, name: str, cap: float, table: PriceTable | None,
                       falls_back: bool) -> list[Problem]:
    if facts.region is None:  # unknown at preview (an Output): judged when known, at `pulumi up`
        return []
    held = Cap(key("maxJobCostUsd"), cap, usd_total(cap), f"job {name}'s worst case")
    try:
        cost = estimate(facts, name, table, falls_back=falls_back)
    except PriceTableError as error:
        return held.unpriced(error)
    return held.problems(cost.worst_case, shown=f"{worst_case_text(cost)}, running {runs_as(cost)}")


def _accelerator_pools(facts: JobFacts) -> dict[str, str]:
    """Each accelerator type the job uses -> the pools using it (`jobSpec.workerPoolSpecs[0], ...`)."""
    found: dict[str, list[str]] = {}
    for pool in facts.running:
        kind = pool.held.kind
        if kind:
            found.setdefault(kind, []).append(facts.pool_path(pool))
    return {kind: ", ".join(dict.fromkeys(paths)) for kind, paths in found.items()}


def _breakdown(facts: JobFacts) -> str:
    """`4 NVIDIA_TESLA_T4 x 10 replicas` per pool, joined; times the parallel trials of a tuning job."""
    parts = [f"{p.held.per_replica} {p.held.kind} x {p.replica_count} replica{'s' if p.replica_count != 1 else ''}"
             for p in facts.running if p.accelerators]
    runs = facts.parallel_runs
    text = " + ".join(parts) or "none"
    return f"({text}) x {runs} parallel trials" if runs > 1 else text


def end_of_life_problems(facts: JobFacts, name: str, today: date | None = None) -> list[Problem]:
    """Accelerators past their end of support (fixed rule `no-end-of-life-accelerators`), judged against the
    same day as the rules (`rules.today()`: $GCP_TRAINING_JOBS_TODAY, else the date)."""
    today = today or today_of_rules()
    problems: list[Problem] = []
    for kind, where in _accelerator_pools(facts).items():
        ended = support_ended(kind, today)
        retired = vertex_legacy.VERTEX_RETIRED_ACCELERATORS.get(kind)
        if ended is not None:
            why = f"reached end of support on {ended.isoformat()}"
        elif retired:
            why = f"is retired: {retired}"
        else:
            continue
        problems.append(Problem(RULE_END_OF_LIFE, f"job {name} uses {kind} ({where}), which {why}; allowed: "
                                "an accelerator without a past end-of-support date"))
    return problems


# --- The whole stack -----------------------------------------------------------------------------------


def stack_guardrail_problems(jobs: Mapping[str, JobFacts], guardrails: Guardrails | Mapping[str, Any] | None,
                             table: PriceTable | None = None,
                             resources: Mapping[str, ResourceFacts] | None = None,
                             falls_back: Collection[str] = (),
                             placed: Mapping[str, Placed] | None = None) -> list[Problem]:
    """What the stack's jobs (name -> facts) and persistent resources (name -> facts) together break:
    maxAcceleratorsPerStack and maxHourlyUsd (a resource counted at the most, a job on one not at all, a job named
    in `falls_back`, which has fallbacks, off any reservation, a `placement: cheapest` job in `placed` at the
    candidate it would take), and allowedAccelerators on each resource's pools."""
    rails = Guardrails.of(guardrails)
    resources = resources or {}
    problems: list[Problem] = []
    if rails.allowed_accelerators is not None:
        for name, resource in resources.items():
            for kind, where in _accelerator_pools(resource.as_job()).items():
                if kind not in rails.allowed_accelerators:
                    problems.append(Problem(key("allowedAccelerators"), f"persistent resource {name} uses {kind} "
                                            f"({where}); allowed: {allowed(rails.allowed_accelerators)}"))
    if rails.max_accelerators_per_stack is not None:
        held = {name: facts.own_accelerators for name, facts in jobs.items()}
        held |= {f"persistent resource {name}": r.accelerators for name, r in resources.items()}
        total = sum(held.values())
        if total > rails.max_accelerators_per_stack:
            each = ", ".join(f"{name} {n}" for name, n in held.items() if n)
            who = "the stack's jobs and persistent resources hold" if resources else "the stack's jobs hold"
            problems.append(Problem(key("maxAcceleratorsPerStack"), f"{who} {total} accelerators "
                                    f"at once ({each}); allowed: at most {rails.max_accelerators_per_stack}"))
    if rails.max_hourly_usd is not None:
        hourly = Cap(key("maxHourlyUsd"), rails.max_hourly_usd, usd(rails.max_hourly_usd),
                     "the stack's estimated on-demand cost", priced="the stack's cost", per_hour=True)
        try:
            problems += hourly.problems(stack_estimate(jobs, table, resources, falls_back, placed).on_demand)
        except PriceTableError as error:
            problems += hourly.unpriced(error)
    return problems


def stack_estimate(jobs: Mapping[str, JobFacts], table: PriceTable | None = None,
                   resources: Mapping[str, ResourceFacts] | None = None,
                   falls_back: Collection[str] = (), placed: Mapping[str, Placed] | None = None) -> StackEstimate:
    """The cost of the stack's jobs (name -> facts), each in its region, and of its persistent resources (name ->
    facts) (PriceTableError for a broken table file); the jobs named in `falls_back` have fallbacks (priced off
    any reservation: cost.estimate); a `placement: cheapest` job in `placed` is priced where it may run
    (cost.estimate_placed: its rate at the candidate it would take, its worst case at its dearest)."""
    placed = placed or {}
    estimates: list[Estimate] = [estimate_placed(placed[name], name, table) if name in placed
                                 else estimate(facts, name, table, falls_back=name in falls_back)
                                 for name, facts in jobs.items()]
    held = [estimate_resource(resource, table) for resource in (resources or {}).values()]
    return estimate_stack(estimates, table, held)


def all_guardrail_problems(jobs: Mapping[str, JobFacts], guardrails: Guardrails | Mapping[str, Any] | None,
                           today: date | None = None, table: PriceTable | None = None,
                           resources: Mapping[str, ResourceFacts] | None = None,
                           falls_back: Collection[str] = (),
                           placed: Mapping[str, Placed] | None = None) -> list[Problem]:
    """Every job's guardrails and fixed rules, then the stack's guardrails: what plan and the pack report (the jobs
    named in `falls_back` have fallbacks: priced off any reservation, cost.estimate; a `placement: cheapest` job in
    `placed` is held to them at the candidate it would take, each candidate having been held to them on its own)."""
    problems: list[Problem] = []
    placed = placed or {}
    for name, facts in jobs.items():
        at = placed[name].placements[0] if name in placed else facts
        problems += guardrail_problems(at, name, guardrails, table, falls_back=name in falls_back)
        problems += end_of_life_problems(at, name, today)
    return problems + stack_guardrail_problems(jobs, guardrails, table, resources, falls_back, placed)


# --- The monthly budget (guardrail `budget`) ------------------------------------------------------------


def budget_text(worst: Amount, monthly_usd: float) -> str:
    """`worst case $2,654.70 of the $2,000.00 monthly budget` (what plan, the diff and the provider say)."""
    return f"worst case {worst.short(per_hour=False)} of the {usd_total(monthly_usd)} monthly budget"


def _budget_cap(monthly_usd: float, whose: str) -> Cap:
    """Guardrail `budget`'s cap: `whose` (the stack's, or `job NAME's`) worst case at most the monthly budget."""
    budget = f"the {usd_total(monthly_usd)} monthly budget"
    return Cap(BUDGET_KEY, monthly_usd, budget, f"{whose} worst case", named=budget,
               fits=f"allowed: a worst case of at most {budget} ({BUDGET_KEY}.monthlyUsd): each job's $/h at the rate "
                    "it runs at times its timeout, summed; shorten timeouts, run on Spot, or raise the budget")


def budget_problems(worst: Amount, monthly_usd: float | None, whose: str = "the stack's") -> list[Problem]:
    """Guardrail `budget`: a worst case (`whose`: the stack's, or `job NAME's`) over the monthly budget, or one with
    a part unpriced (it cannot be held to the budget); none without a budget."""
    return [] if monthly_usd is None else _budget_cap(monthly_usd, whose).problems(worst)


def budget_unpriced(error: PriceTableError, monthly_usd: float, whose: str = "the stack's") -> list[Problem]:
    """Guardrail `budget` when the worst case cannot be priced (the price table does not read), in the cap's words."""
    return _budget_cap(monthly_usd, whose).unpriced(error)


def stack_budget_problems(jobs: Mapping[str, JobFacts], monthly_usd: float | None,
                          table: PriceTable | None = None, falls_back: Collection[str] = (),
                          placed: Mapping[str, Placed] | None = None) -> list[Problem]:
    """Guardrail `budget` on a stack's jobs (name -> facts): their worst cases summed against the monthly budget (a
    persistent resource has no worst case: it bills while it exists, and carries no job's label); the jobs named in
    `falls_back` at their worst placement, a `placement: cheapest` job in `placed` at its dearest candidate
    (stack_estimate)."""
    if monthly_usd is None:
        return []
    try:
        return budget_problems(stack_estimate(jobs, table, falls_back=falls_back, placed=placed).worst_case,
                               monthly_usd)
    except PriceTableError as error:
        return budget_unpriced(error, monthly_usd)


# --- Fixed rules on other resources (buckets, IAM) -----------------------------------------------------
