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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.catalog import prices
from gcp_training_jobs.jobspec.catalog.prices import Price, PriceTable
from gcp_training_jobs.jobspec.review.money import Amount, named_total, total
from gcp_training_jobs.jobspec.translate.facts import JobFacts, Timeout
from gcp_training_jobs.jobspec.translate.pools import Pool

#: Vertex AI `scheduling.strategy` values that run on Spot (preemptible) or Flex-start (DWS) capacity.
SPOT_STRATEGIES: Final = ("SPOT", "FLEX_START")
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

    @property
    def on_demand(self) -> Amount:
        return total(p.on_demand for p in self.parts)

    @property
    def spot(self) -> Amount:
        return total(p.spot for p in self.parts)

    @property
    def billing(self) -> Mapping[str, Any]:
        """How its strategy is billed: {"rate": "on_demand"|"spot", "bound": "exact"|"upper", "why": ...}."""
        return self.table.strategy_rate(self.strategy)

    @property
    def rate(self) -> str:
        return str(self.billing["rate"])

    @property
    def hourly(self) -> Amount:
        """Per hour at the rate the job runs at."""
        return total(p.amount(self.rate) for p in self.parts)

    @property
    def worst_case(self) -> Amount:
        """In all, at most: the hourly rate for as long as it may run (a tuning job: every trial to its timeout)."""
        if self.timeout.per_trial:
            return self.hourly.times(self.timeout.hours * self.trials / self.runs)
        return self.hourly.times(self.timeout.hours)

    @property
    def bases(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(b for p in self.parts if (b := p.basis) is not None))

def estimate(facts: JobFacts, name: str, table: PriceTable | None = None) -> Estimate:
    """The cost of a job (machines times replicas, accelerators, parallel runs) in its region, from its facts
    (load.Judged.facts, or translate.facts.facts_of_body for a job as the API holds it) and `table` (default:
    prices.active_table(), which raises prices.PriceTableError for a broken table file)."""
    table = table or prices.active_table()
    machines: list[Part] = []
    held: list[Part] = []
    if facts.unread is not None:  # a job as the API holds it that its vocabulary's model does not read
        machines = [Part("the job's machines", 1, None, f"its pools do not read: {facts.unread}")]
    for pool in facts.running:
        found = _pool_parts(pool, facts.region, facts.parallel_runs, table)
        machines += found[0]
        held += found[1]
    return Estimate(name, facts.region, facts.strategy, _merged(machines + held), table, facts.timeout,
                    facts.parallel_runs, facts.trials, ml_v1=facts.ml_v1)


# --- The stack -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StackEstimate:
    """Every job's estimate and their sums."""

    jobs: tuple[Estimate, ...]
    table: PriceTable

    @property
    def on_demand(self) -> Amount:
        return named_total((e.name, e.on_demand) for e in self.jobs)

    @property
    def spot(self) -> Amount:
        return named_total((e.name, e.spot) for e in self.jobs)

    @property
    def hourly(self) -> Amount:
        """Per hour, each job at the rate it runs at."""
        return named_total((e.name, e.hourly) for e in self.jobs)

    @property
    def worst_case(self) -> Amount:
        return named_total((e.name, e.worst_case) for e in self.jobs)

def estimate_stack(estimates: Sequence[Estimate], table: PriceTable | None = None) -> StackEstimate:
    """The stack's sums; `table`: the one its jobs were priced from (default: theirs, else the active table)."""
    return StackEstimate(tuple(estimates), table or (estimates[0].table if estimates else prices.active_table()))
