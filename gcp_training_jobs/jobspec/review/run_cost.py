"""What a job has cost so far: the time it has run times the rate it runs at. Pure.

The job is read as the API holds it (a Vertex AI `CustomJob` or `HyperparameterTuningJob`, an ml v1 `Job`): its
body carries the machines, accelerators and scheduling strategy it was created with (after any fallback, the ones
it really got), so `cost.estimate` prices its facts, read from that body by the same translation as a job's own
(translate.facts.facts_of_body: its CustomJobSpec or trainingInput parsed by its vocabulary's model), from the
active price table, at the rate its strategy is billed at (SPOT at Spot rates; FLEX_START at the on-demand rate,
an upper bound).

How long it has run (the rule, from the APIs' own field descriptions in the discovery documents
google-api-python-client ships: aiplatform v1 `CustomJob.startTime` "Time when the CustomJob for the first time
entered the JOB_STATE_RUNNING state", `endTime` "Time when the CustomJob entered any of the following states:
JOB_STATE_SUCCEEDED, JOB_STATE_FAILED, JOB_STATE_CANCELLED"; ml v1 `Job.startTime` "When the job processing was
started", `endTime` "When the job processing was completed"): from `startTime` to `endTime`, or to now while it
has not ended; a job that never started has run 0 h. A tuning job's machines run per trial: its machine time is the
sum of its trials' own `startTime` to `endTime` (or now), as the API reports them (aiplatform v1 `Trial.startTime`
"Time when the Trial was started", `endTime` "Time when the Trial's status changed to SUCCEEDED or INFEASIBLE"),
each at one trial's rate; an answer without trials (a list's) falls back to its run time times its parallel trials,
and says so. Within a window (`since`), only the part of each run inside it counts. It is an estimate of what the
machines were held for, not Google's bill: time spent provisioning before RUNNING is not counted, and whatever
Google does not bill (its own failures, for one) is not known here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from gcp_training_jobs.jobspec.catalog.prices import PriceTable
from gcp_training_jobs.jobspec.core.names import TUNING
from gcp_training_jobs.jobspec.review.cost import Estimate, estimate
from gcp_training_jobs.jobspec.review.money import Amount
from gcp_training_jobs.jobspec.translate.facts import JobFacts


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp as the APIs write it (`2026-11-23T10:00:00.123456789Z`), or None when it is not one
    (unset, or not a timestamp with its zone)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def run_seconds(job: Mapping[str, Any], now: datetime, since: datetime | None = None) -> float:
    """How long the job has run (startTime to endTime, or to `now` while it has not ended), counting only what
    falls after `since` when given; 0 for a job that never started."""
    start = parse_time(job.get("startTime"))
    if start is None:
        return 0.0
    end = parse_time(job.get("endTime")) or now
    if since is not None and since > start:
        start = since
    return max(0.0, (min(end, now) - start).total_seconds())


#: What a spend figure is and is not (spend --json says it per figure).
WHAT_IT_IS: Final = ("an estimate: the hours the job's machines ran (its startTime to endTime, or now; a tuning "
                     "job's trials each) times the list price of the active price table at the rate it ran at")
WHAT_IT_IS_NOT: Final = ("not the invoice: committed use and negotiated discounts, credits, taxes, the time before "
                         "RUNNING and whatever Google does not bill (its own failures) are not known here")


def trial_seconds(job: Mapping[str, Any], now: datetime, since: datetime | None = None) -> float | None:
    """A tuning job's machine time in cluster-seconds: the sum of its trials' runs; None when the answer holds no
    trials (a list's answer leaves them out)."""
    found = job.get("trials")
    if not isinstance(found, list) or not found:
        return None
    return sum(run_seconds(t, now, since) for t in found if isinstance(t, Mapping))


@dataclass(frozen=True)
class RunCost:
    """One job's cost so far: its estimate (the rate it runs at), the hours it ran, and their product. `seconds`
    counts one copy of its cluster (a tuning job: its trials' runs summed, each one cluster)."""

    estimate: Estimate
    seconds: float
    how: str = "run time"
    """How the hours were counted: "run time", "trials' run times", "run time x parallel trials"."""

    @property
    def rate(self) -> Amount:
        """Per hour of one copy of its cluster (a tuning job: one trial), at the rate it runs at."""
        return self.estimate.hourly.times(1 / self.estimate.runs)

    @property
    def hours(self) -> float:
        return self.seconds / 3600

    @property
    def amount(self) -> Amount:
        """USD in all: one cluster's hourly rate (known parts; the unknown ones named) times its hours run."""
        return self.rate.times(self.hours)

    @property
    def usd(self) -> float | None:
        """USD in all, or None when a part of the job has no known price (never guessed)."""
        amount = self.amount
        return amount.known if amount.complete else None


def run_cost(job: Mapping[str, Any], facts: JobFacts, name: str, now: datetime, since: datetime | None = None,
             table: PriceTable | None = None) -> RunCost:
    """The cost so far of a job as the API answers it (`job`: its startTime and endTime) with its facts (read from
    that answer, translate.facts.facts_of_body, in the region it runs in), from `table` (default: the active table;
    prices.PriceTableError for a broken table file)."""
    found = estimate(facts, name, table)
    if facts.kind == TUNING:
        trials = trial_seconds(job, now, since)
        if trials is not None:
            return RunCost(found, trials, "trials' run times")
        if found.runs > 1:
            return RunCost(found, run_seconds(job, now, since) * found.runs, "run time x parallel trials")
    return RunCost(found, run_seconds(job, now, since))
