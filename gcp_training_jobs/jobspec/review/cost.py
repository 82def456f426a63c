"""What a job costs: per hour while every machine runs, on demand and on Spot, at the rate it runs at, and at
worst (that rate for as long as it may run). Pure; it prices only.

Everything here reads a job's facts (translate.facts.JobFacts: load.Judged.facts, or facts_of_body for a job as the
API holds it: its pools in the one form, region, strategy, timeout, parallel runs and trials), so it works for every
job vocabulary and backend: a Vertex AI `CustomJob`, a Vertex AI `HyperparameterTuningJob` or an ml v1 `Job`. Money
is worded by review.money, an estimate by review.cost_text.
Prices come from the price table (gcp_training_jobs.jobspec.catalog.prices: the refreshed table when one was written,
else the bundled snapshot) and nowhere else: a part without a known price is unknown, by name and with the
table's reason, never guessed, and a sum with unknown parts says which.

Per pool:
- machines: its replicas (times a TPU slice's VMs, catalog.TPU_SLICES) at the machine type's price; a legacy ml v1
  type at the price of the Compute Engine machine it ran on (catalog.legacy_equivalent), its built-in GPUs as
  accelerators (ml v1 bodies are priced at Vertex AI's rates: AI Platform Training, shut down on 2025-01-31, has
  no prices in the table);
- accelerators: count x replicas at the per-unit price the table gives for that count per replica (GPU, TPU chip
  or TPU core), unless the machine's price includes them (a2/a3/a4/g2/g4 whole machines, TPU VM hosts: their
  machine type fixes their accelerators, so an unpriced one is one unknown part); Cloud TPU
  (`cloud-tpu`, ml v1 `cloud_tpu`) is billed through its TPU cores only;
- all of it times the parallel trials of a tuning job.

A job runs at the rate its scheduling strategy is billed at (the table's `strategies`: SPOT at Spot rates,
FLEX_START at the on-demand rate as an upper bound, anything else on demand). Its worst case is that rate times
the longest it may run: its timeout (a Vertex tuning job's is each trial's: times its trials), else the API's
default of 7 days (catalog.DEFAULT_TIMEOUT_SECONDS, catalog.DEFAULT_MAX_RUNNING_SECONDS).

Where it runs: a job on a persistent resource holds no machines of its own ($0/h; the resource is priced). A job on
a SPECIFIC_RESERVATION takes machines the reservation pays for, whether used or not: it adds only Vertex AI's
training management fee (catalog.prices.RESERVATION_FEE, a share of the machines' on-demand price, an upper
bound), and that fee is what its rate, its worst case and the stack's sums and guardrails count. A job that may
run off its reservation is priced at its worst placement, its machines' rate: on ANY_RESERVATION (Vertex AI runs it
on demand when no reservation is free), or with fallbacks (`falls_back`: the job's `jobs.NAME.fallbacks` run it
elsewhere when the reservation has no room; each fallback is priced so too, at its own machines' rate).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.catalog import prices
from gcp_training_jobs.jobspec.catalog.prices import Price, PriceTable
from gcp_training_jobs.jobspec.review.money import Amount, named_total, total
from gcp_training_jobs.jobspec.translate.facts import RESERVATION, JobFacts, Timeout
from gcp_training_jobs.jobspec.translate.persistent import ResourceFacts
from gcp_training_jobs.jobspec.translate.pools import Pool

#: Vertex AI `scheduling.strategy` values that run on Spot (preemptible) or Flex-start (DWS) capacity.
SPOT_STRATEGIES: Final = catalog.PREEMPTIBLE_STRATEGIES
#: Machine types that are TPU hosts billed through their accelerator (ml v1 cloud_tpu, Vertex cloud-tpu).
TPU_POOL_MACHINES: Final = (catalog.CLOUD_TPU, catalog.CLOUD_TPU_MACHINE)


# --- Parts -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One priced item of a job: `units` machines of a type, or accelerators of a type (GPUs, TPU chips or TPU
    cores), all the job holds at once, at one price of the table (None, with `reason`, where none applies)."""

    what: str
    units: int
    price: Price | None
    reason: str = ""

    def why(self, rate: str) -> str:
        """Why the part has no price at `rate` ("on_demand" or "spot")."""
        if self.price is None:
            return self.reason
        return (self.price.spot_reason if rate == "spot" else self.price.on_demand_reason) or "no price given"

    def amount(self, rate: str) -> Amount:
        """The part's USD per hour at `rate`: units times the unit price, or unknown with the reason."""
        value = self.price.rate(rate) if self.price is not None else None
        if self.units == 0:
            return Amount()
        if value is None:
            return Amount(0.0, (f"{self.units} x {self.what} ({self.why(rate)})",))
        return Amount(value * self.units)

    @property
    def on_demand(self) -> Amount:
        return self.amount("on_demand")

    @property
    def spot(self) -> Amount:
        return self.amount("spot")

    @property
    def basis(self) -> str | None:
        """What the price was derived on, with the date of its prices: `Compute Engine list 2026-07-30 + ...`."""
        basis = self.price.basis if self.price is not None else None
        if basis is None:
            return None
        when = basis.date.isoformat()
        return basis.text if when in basis.text else f"{basis.text} (prices of {when})"

    def as_dict(self) -> dict[str, Any]:
        price = self.price
        return {"what": self.what, "units": self.units, "unit": price.unit if price else None,
                "includesAccelerators": bool(price and price.includes_accelerators),
                "onDemandUsdPerHour": price.on_demand if price else None,
                "spotUsdPerHour": price.spot if price else None, "basis": self.basis,
                "priceDate": price.basis.date.isoformat() if price and price.basis else None,
                "onDemandReason": self.why("on_demand") if not price or price.on_demand is None else "",
                "spotReason": self.why("spot") if not price or price.spot is None else ""}


def _machine(table: PriceTable, machine_type: str, region: str | None) -> Price | None:
    return table.machine(machine_type, region) if region else None


def _pool_parts(pool: Pool, region: str | None, runs: int, table: PriceTable) -> tuple[list[Part], list[Part]]:
    """(machines, accelerators) of one pool, times the parallel runs."""
    no_region = "the job's region is unknown"
    machines, accelerators = [], []
    if pool.machine_type is None:
        return [Part("machines chosen by the service", pool.machines * runs, None, pool.note)], []
    machine_type = str(pool.machine_type)
    price: Price | None = None
    if machine_type not in TPU_POOL_MACHINES:  # a Cloud TPU is billed through its cores only
        legacy = machine_type in catalog.LEGACY_GPUS
        base = catalog.legacy_equivalent(machine_type) if legacy else machine_type
        if base is None:
            why = (f"{machine_type} has no Compute Engine equivalent (gcp_training_jobs/jobspec/catalog/legacy.py "
                   "LEGACY_BASE), so no price")
            machines.append(Part(machine_type, pool.machines * runs, None, why))
        else:
            price = _machine(table, base, region)
            what = f"{machine_type} as {base}" if legacy else base
            machines.append(Part(what, pool.machines * runs, price, "" if price else no_region))
    whole = machine_type in catalog.FIXED_ACCELERATOR_MACHINES or machine_type in catalog.TPU_HOSTS or \
        (price is not None and price.includes_accelerators)
    kind, count, _ = pool.held
    if kind and count and not whole:
        acc = str(kind)
        acc_price = table.accelerator(acc, region, count) if region else None
        accelerators.append(Part(acc, pool.accelerators * runs, acc_price, "" if acc_price else no_region))
    return machines, accelerators


def _merged(parts: Iterable[Part]) -> tuple[Part, ...]:
    """Parts of the same item at the same price summed (a master and its workers on one machine type)."""
    units: dict[tuple[str, Price | None, str], int] = {}
    for part in parts:
        key = (part.what, part.price, part.reason)
        units[key] = units.get(key, 0) + part.units
    return tuple(Part(what, n, price, reason) for (what, price, reason), n in units.items())


# --- One job ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """The cost of one job: per hour while all of its machines run (on demand, Spot, at the rate it runs at) and
    at worst (that rate for as long as it may run)."""

    name: str
    region: str | None
    strategy: str | None
    parts: tuple[Part, ...]
    table: PriceTable
    timeout: Timeout
    runs: int = 1
    """Copies of the cluster at once (a tuning job's parallel trials)."""
    trials: int = 1
    """Copies of the cluster in all (a tuning job's trials)."""
    ml_v1: bool = False
    """An ml v1 body (AI Platform Training, shut down on 2025-01-31): priced at Vertex AI's rates."""
    on_resource: str | None = None
    """The persistent resource it runs on: its machines are the resource's (ResourceEstimate), the job adds $0/h."""
    reservation: str | None = None
    """The reservation whose machines it takes (SPECIFIC_RESERVATION): the reservation pays them, the job adds only
    Vertex AI's management fee (catalog.prices.RESERVATION_FEE)."""
    may_leave: str = ""
    """Why a job that asks for reserved capacity is priced at its machines' rate all the same (ANY_RESERVATION:
    it may run on demand), else ""."""
    written: JobFacts | None = None
    """A `placement: cheapest` job's: the job as written, when this is the estimate of the candidate it would take
    first (estimate_placed), else None."""
    worst_at: Estimate | None = None
    """A `placement: cheapest` job's dearest candidate, when it is not the first: its worst case is the job's."""

    @property
    def machines_on_demand(self) -> Amount:
        """Its machines per hour on demand, whoever pays them (on a reservation: the reservation)."""
        return total(p.on_demand for p in self.parts)

    @property
    def fee(self) -> Amount:
        """On a reservation: what the job adds per hour, the management fee on its machines (an upper bound)."""
        return self.machines_on_demand.times(prices.RESERVATION_FEE.share)

    @property
    def on_demand(self) -> Amount:
        """What the job adds per hour on demand: its machines, or on a reservation the fee alone."""
        return self.fee if self.reservation is not None else self.machines_on_demand

    @property
    def spot(self) -> Amount:
        return self.fee if self.reservation is not None else total(p.spot for p in self.parts)

    @property
    def billing(self) -> Mapping[str, Any]:
        """How its strategy is billed: {"rate": "on_demand"|"spot", "bound": "exact"|"upper", "why": ...}."""
        return self.table.strategy_rate(self.strategy)

    @property
    def rate(self) -> str:
        return str(self.billing["rate"])

    @property
    def hourly(self) -> Amount:
        """Per hour at the rate the job runs at (on a reservation: the fee it adds)."""
        if self.reservation is not None:
            return self.fee
        return total(p.amount(self.rate) for p in self.parts)

    @property
    def worst_case(self) -> Amount:
        """In all, at most: the hourly rate for as long as it may run (a tuning job: every trial to its timeout); a
        job that may run at a dearer candidate, that candidate's (`worst_at`)."""
        if self.worst_at is not None:
            return self.worst_at.worst_case
        if self.timeout.per_trial:
            return self.hourly.times(self.timeout.hours * self.trials / self.runs)
        return self.hourly.times(self.timeout.hours)

    @property
    def bases(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(b for p in self.parts if (b := p.basis) is not None))

def estimate(facts: JobFacts, name: str, table: PriceTable | None = None, *, falls_back: bool = False) -> Estimate:
    """The cost of a job (machines times replicas, accelerators, parallel runs) in its region, from its facts
    (load.Judged.facts, or translate.facts.facts_of_body for a job as the API holds it) and `table` (default:
    prices.active_table(), which raises prices.PriceTableError for a broken table file). `falls_back`: the job has
    fallbacks, or is one: a reservation it names does not hold it, so its machines are priced at their rate."""
    table = table or prices.active_table()
    machines: list[Part] = []
    held: list[Part] = []
    if facts.unread is not None:  # a job as the API holds it that its vocabulary's model does not read
        machines = [Part("the job's machines", 1, None, f"its pools do not read: {facts.unread}")]
    for pool in facts.own:  # none on a persistent resource: its machines are the resource's
        found = _pool_parts(pool, facts.region, facts.parallel_runs, table)
        machines += found[0]
        held += found[1]
    reservation, may_leave = _reservation(facts, falls_back)
    return Estimate(name, facts.region, facts.strategy, _merged(machines + held), table, facts.timeout,
                    facts.parallel_runs, facts.trials, ml_v1=facts.ml_v1, on_resource=facts.on_persistent_resource,
                    reservation=reservation, may_leave=may_leave)


@dataclass(frozen=True)
class Placed:
    """A `placement: cheapest` job: its candidates in the order `pulumi up` tries them (`placements`, each as judged),
    and the job as written (`written`, not a try of its own)."""

    placements: tuple[JobFacts, ...]
    written: JobFacts


def estimate_placed(placed: Placed, name: str, table: PriceTable | None = None) -> Estimate:
    """A `placement: cheapest` job priced where it may run: at the candidate it would take first (its rate), and at
    its dearest candidate (its worst case; a candidate with a part of unknown price counts as the dearest)."""
    table = table or prices.active_table()
    found = [estimate(facts, name, table) for facts in placed.placements]
    first = found[0]
    dearest = max(found, key=lambda e: (not e.worst_case.complete, e.worst_case.known))
    return replace(first, written=placed.written, worst_at=None if dearest is first else dearest)


def _reservation(facts: JobFacts, falls_back: bool) -> tuple[str | None, str]:
    """(the reservation that pays the job's machines, or None; why a job asking for reserved capacity is priced
    at its machines' rate all the same). Only a SPECIFIC_RESERVATION holds the job to reserved machines, and only
    when nothing runs it elsewhere: with ANY_RESERVATION Vertex AI falls back to on demand, and a job's fallbacks
    run it off the reservation (`falls_back`), so it is priced at its worst placement."""
    runs_on = facts.runs_on
    if runs_on.kind != RESERVATION:
        return None, ""
    if runs_on.reservation_type == "SPECIFIC_RESERVATION" and runs_on.reservation_name:
        if not falls_back:
            return runs_on.reservation_name, ""
        return None, (f"its fallbacks may run it off reservation {runs_on.reservation_name}, so its machines are "
                      "priced at their rate (its worst placement)")
    return None, (f"{runs_on.reservation_type} may run on demand when no reservation is free, so its machines are "
                  "priced at their rate (its worst placement)")


# --- A persistent resource -------------------------------------------------------------------------


@dataclass(frozen=True)
class ResourceEstimate:
    """The cost of a persistent resource: its machines per hour while it exists, at the least (autoscaling's
    minReplicaCount) and at the most (maxReplicaCount, or its fixed replicaCount), on demand (a persistent resource
    has no Spot or Flex-start), with no end of its own (no worst case: it is billed until it is deleted)."""

    name: str
    region: str | None
    least: Estimate
    most: Estimate

    @property
    def on_demand(self) -> Amount:
        """At the most: what the stack's sums and maxHourlyUsd count."""
        return self.most.on_demand

    @property
    def bases(self) -> tuple[str, ...]:
        return self.most.bases



def estimate_resource(resource: ResourceFacts, table: PriceTable | None = None) -> ResourceEstimate:
    """A declared persistent resource's machines priced as a job's (the one pricing), at the least and the most."""
    table = table or prices.active_table()
    return ResourceEstimate(resource.name, resource.region, estimate(resource.as_job(at_least=True), resource.name,
                                                                       table),
                            estimate(resource.as_job(), resource.name, table))


# --- The stack -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StackEstimate:
    """Every job's estimate and their sums."""

    jobs: tuple[Estimate, ...]
    table: PriceTable
    resources: tuple[ResourceEstimate, ...] = ()
    """The stack's persistent resources, counted at the most, on demand, in every per-hour sum."""

    def _resources(self) -> list[tuple[str, Amount]]:
        return [(f"persistent resource {r.name}", r.on_demand) for r in self.resources]

    @property
    def on_demand(self) -> Amount:
        return named_total([*((e.name, e.on_demand) for e in self.jobs), *self._resources()])

    @property
    def spot(self) -> Amount:
        return named_total([*((e.name, e.spot) for e in self.jobs), *self._resources()])

    @property
    def hourly(self) -> Amount:
        """Per hour, each job at the rate it runs at, each persistent resource at the most, on demand."""
        return named_total([*((e.name, e.hourly) for e in self.jobs), *self._resources()])

    @property
    def worst_case(self) -> Amount:
        return named_total((e.name, e.worst_case) for e in self.jobs)

def estimate_stack(estimates: Sequence[Estimate], table: PriceTable | None = None,
                   resources: Sequence[ResourceEstimate] = ()) -> StackEstimate:
    """The stack's sums; `table`: the one its jobs were priced from (default: theirs, else the active table)."""
    return StackEstimate(tuple(estimates), table or (estimates[0].table if estimates else prices.active_table()),
                         tuple(resources))
