"""What a rendered job asks for (machines, accelerators, replicas) and what it costs per hour: pure.

Everything here reads the request body a backend sends (components.jobspec.render.bodies.render_body), so it works
for every job vocabulary and backend: a Vertex AI `CustomJob` (`jobSpec.workerPoolSpecs`), a Vertex AI
`HyperparameterTuningJob` (`trialJobSpec`, times `parallelTrialCount` trials at once) or an ml v1 `Job`
(`trainingInput`). Prices come from components.jobspec.catalog.prices and nowhere else: a part without a
known price is reported as unknown (by name), never guessed, and a sum with unknown parts says which.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.jobspec import catalog
from components.jobspec.catalog import prices
from components.jobspec.catalog.source import Source
from components.jobspec.review.body_pools import parallel_runs, pools, region_of, strategy

#: Vertex AI `scheduling.strategy` values that run on Spot (preemptible) or Flex-start (DWS) capacity.
SPOT_STRATEGIES = ("SPOT", "FLEX_START")
#: Machine types that are TPU hosts billed through their accelerator (ml v1 cloud_tpu, Vertex cloud-tpu).
TPU_POOL_MACHINES = (catalog.CLOUD_TPU, "cloud-tpu")


# --- Prices -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Amount:
    """A sum in USD per hour of the parts whose price is known, and the parts whose price is not."""

    known: float = 0.0
    unknown: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.unknown

    def __add__(self, other: Amount) -> Amount:
        return Amount(self.known + other.known, self.unknown + other.unknown)

    def text(self) -> str:
        """`$12.34/h`, or `unknown ($0.87/h known; no price for ...)`."""
        if self.complete:
            return usd(self.known)
        missing = "; ".join(self.unknown)
        if self.known:
            return f"unknown ({usd(self.known)} known; no price for {missing})"
        return f"unknown (no price for {missing})"


def usd(value: float) -> str:
    return f"${value:,.2f}/h" if value >= 0.01 or value == 0 else f"${value:.4f}/h"


@dataclass(frozen=True)
class Part:
    """One priced item of a job: `units` machines of a type, or accelerators of a type, in a region."""

    what: str
    units: int
    region: str | None
    price: prices.HourlyPrice | None

    def _amount(self, rate: float | None) -> Amount:
        if self.units == 0:
            return Amount()
        if rate is None:
            return Amount(0.0, (f"{self.units} x {self.what}",))
        return Amount(rate * self.units)

    @property
    def on_demand(self) -> Amount:
        return self._amount(self.price.on_demand if self.price else None)

    @property
    def spot(self) -> Amount:
        return self._amount(self.price.spot if self.price else None)


@dataclass(frozen=True)
class Estimate:
    """The hourly cost of one job while all of its machines run, on demand and on Spot."""

    name: str
    region: str | None
    strategy: str | None
    parts: tuple[Part, ...]

    @property
    def on_demand(self) -> Amount:
        return _total(p.on_demand for p in self.parts)

    @property
    def spot(self) -> Amount:
        return _total(p.spot for p in self.parts)

    @property
    def sources(self) -> tuple[Source, ...]:
        return tuple(dict.fromkeys(p.price.source for p in self.parts if p.price is not None))

    def text(self) -> str:
        """`us-central1: on demand $1.23/h; Spot unknown (no price for 2 x n1-standard-4)`."""
        runs_on = f"; runs as {self.strategy}" if self.strategy else ""
        where = self.region or "region unknown"
        return f"{where}: on demand {self.on_demand.text()}; Spot {_spot_text(self.spot)}{runs_on}"


def _spot_text(spot: Amount) -> str:
    """Spot prices are rarer than on-demand ones: when none is known, say so once instead of per part."""
    return "unknown (no Spot price for any part)" if spot.unknown and not spot.known else spot.text()


def _total(amounts: Iterable[Amount]) -> Amount:
    total = Amount()
    for amount in amounts:
        total = total + amount
    return total


def _price(table: Mapping[str, Mapping[str, prices.HourlyPrice]], region: str | None,
           key: str | None) -> prices.HourlyPrice | None:
    if region is None or key is None:
        return None
    return table.get(region, {}).get(key)


def estimate(body: Mapping[str, Any], name: str, region: str | None = None) -> Estimate:
    """The hourly cost of a rendered body: machines times replicas, accelerators, parallel trials."""
    region = region_of(body, region)
    runs = parallel_runs(body)
    machines: dict[str, int] = {}
    chips: dict[str, int] = {}
    unknown_machines = 0
    for pool in pools(body):
        if pool.machine_type is None:
            unknown_machines += pool.replicas * runs
        elif pool.machine_type not in TPU_POOL_MACHINES:
            machines[pool.machine_type] = machines.get(pool.machine_type, 0) + pool.replicas * runs
        if pool.accelerator_type and pool.machine_type not in prices.MACHINE_PRICE_INCLUDES_ACCELERATORS:
            chips[pool.accelerator_type] = chips.get(pool.accelerator_type, 0) + pool.accelerators * runs
    parts = [Part(machine, n, region, _price(prices.MACHINE_PRICES, region, machine))
             for machine, n in machines.items()]
    if unknown_machines:
        parts.append(Part("machines chosen by the service", unknown_machines, region, None))
    parts += [Part(acc, n, region, _price(prices.ACCELERATOR_PRICES, region, acc)) for acc, n in chips.items()]
    return Estimate(name, region, strategy(body), tuple(parts))


@dataclass(frozen=True)
class StackEstimate:
    """Every job's estimate and their sum."""

    jobs: tuple[Estimate, ...]

    @property
    def on_demand(self) -> Amount:
        return _named_total((e.name, e.on_demand) for e in self.jobs)

    @property
    def spot(self) -> Amount:
        return _named_total((e.name, e.spot) for e in self.jobs)

    @property
    def sources(self) -> tuple[Source, ...]:
        found = [s for e in self.jobs for s in e.sources]
        return tuple(dict.fromkeys(found or [prices.SOURCE_PRICING]))

    def text(self) -> str:
        return f"on demand {self.on_demand.text()}; Spot {_spot_text(self.spot)}"


def _named_total(amounts: Iterable[tuple[str, Amount]]) -> Amount:
    """A sum whose unknown parts say which job they belong to."""
    total = Amount()
    for name, amount in amounts:
        total = total + Amount(amount.known, tuple(f"{name}: {u}" for u in amount.unknown))
    return total


def estimate_stack(estimates: Sequence[Estimate]) -> StackEstimate:
    return StackEstimate(tuple(estimates))


def source_lines(sources: Iterable[Source] = (prices.SOURCE_PRICING,)) -> list[str]:
    """One line per price source: title, address and the date read (plan and the policy pack print them)."""
    return [f"{s.title}, {s.url}, read {s.read.isoformat()}" for s in sources]
