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
from components.jobspec.catalog import prices, vertex_machines
from components.jobspec.catalog.source import Source

#: Vertex AI `scheduling.strategy` values that run on Spot (preemptible) or Flex-start (DWS) capacity.
SPOT_STRATEGIES = ("SPOT", "FLEX_START")
#: Machine types that are TPU hosts billed through their accelerator (ml v1 cloud_tpu, Vertex cloud-tpu).
TPU_POOL_MACHINES = (catalog.CLOUD_TPU, "cloud-tpu")


@dataclass(frozen=True)
class Pool:
    """One worker pool of a rendered body: `replicas` machines, each with `accelerator_count` accelerators."""

    path: str
    """Where the pool is in the body, e.g. jobSpec.workerPoolSpecs[1] or trainingInput.workerType."""
    machine_type: str | None
    """None where the body does not say (ml v1 STANDARD_1 / PREMIUM_1: the service chooses)."""
    replicas: int
    accelerator_type: str | None = None
    accelerator_count: int = 0

    @property
    def accelerators(self) -> int:
        """Accelerators of the whole pool (TPU cores for cloud_tpu / cloud-tpu, as the body counts them)."""
        return self.accelerator_count * self.replicas if self.accelerator_type else 0


def _int(value: Any, default: int = 0) -> int:
    """int64 values travel as text ("9") and Pulumi turns 8 into 8.0."""
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return default


def job_spec(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The Vertex CustomJobSpec of a body (a CustomJob's jobSpec, a tuning job's trialJobSpec), or None."""
    for key in ("jobSpec", "trialJobSpec"):
        spec = body.get(key)
        if isinstance(spec, Mapping):
            return spec
    return None


def parallel_runs(body: Mapping[str, Any]) -> int:
    """How many copies of the job's cluster run at once: a tuning job's parallel trials, else 1."""
    return max(1, _int(body.get("parallelTrialCount"), 1)) if "trialJobSpec" in body else 1


def pools(body: Mapping[str, Any]) -> tuple[Pool, ...]:
    """The worker pools of a rendered body (empty pools `{}` left out)."""
    spec = job_spec(body)
    if spec is not None:
        key = "jobSpec" if "jobSpec" in body else "trialJobSpec"
        found = []
        for i, pool in enumerate(spec.get("workerPoolSpecs") or []):
            machine = pool.get("machineSpec") if isinstance(pool, Mapping) else None
            if not isinstance(machine, Mapping) or not machine:
                continue
            machine_type = machine.get("machineType")
            acc_type = machine.get("acceleratorType") or None
            count = _int(machine.get("acceleratorCount")) if acc_type else 0
            host = vertex_machines.TPU_HOSTS.get(str(machine_type))
            if host is not None and not count:
                # A TPU VM host carries its chips (TPU v6e and TPU7x have no acceleratorType value at all:
                # they are named by their machine type).
                acc_type, count = acc_type or host.accelerator or str(machine_type), host.chips_per_host
            found.append(Pool(f"{key}.workerPoolSpecs[{i}]", machine_type, _int(pool.get("replicaCount"), 1),
                              acc_type, count))
        return tuple(found)
    ti = body.get("trainingInput")
    return _ml_pools(ti) if isinstance(ti, Mapping) else ()


def _ml_pools(ti: Mapping[str, Any]) -> tuple[Pool, ...]:
    """ml v1 trainingInput: a scale tier's machines, or the CUSTOM roles as written (legacy GPU types with
    their built-in GPUs, cloud_tpu workers with their 8 TPU cores)."""
    tier = ti.get("scaleTier") or catalog.DEFAULT_SCALE_TIER
    where = "trainingInput.scaleTier"
    if tier != "CUSTOM":
        if tier not in catalog.TIER_MASTER:
            return (Pool(where, None, 1),)
        gpus = catalog.TIER_GPUS.get(tier)
        found = [Pool(where, catalog.TIER_MASTER[tier], 1, gpus[0] if gpus else None, gpus[1] if gpus else 0)]
        if tier == "BASIC_TPU":
            found.append(Pool(where, catalog.CLOUD_TPU, 1, catalog.TPU_V2, catalog.TPU_CORES))
        return tuple(found)
    found = []
    for role in catalog.ROLES:
        machine = ti.get(f"{role}Type")
        replicas = 1 if role == "master" else _int(ti.get(f"{role}Count"))
        if not machine or replicas <= 0:
            continue
        config = ti.get(f"{role}Config")
        acc = config.get("acceleratorConfig") if isinstance(config, Mapping) else None
        acc = acc if isinstance(acc, Mapping) else {}
        builtin = catalog.LEGACY_GPUS.get(machine)
        acc_type: str | None
        if builtin:
            acc_type, count = builtin
        elif machine == catalog.CLOUD_TPU:
            acc_type, count = acc.get("type") or catalog.TPU_V2, catalog.TPU_CORES
        else:
            acc_type, count = acc.get("type") or None, _int(acc.get("count"))
        found.append(Pool(f"trainingInput.{role}Type", machine, replicas, acc_type, count if acc_type else 0))
    return tuple(found)


def accelerators(body: Mapping[str, Any]) -> int:
    """Accelerators the job holds at once (all pools, all replicas, all parallel trials)."""
    return sum(p.accelerators for p in pools(body)) * parallel_runs(body)


def strategy(body: Mapping[str, Any]) -> str | None:
    """A Vertex job's scheduling strategy (None: STANDARD, on demand); None for ml v1 bodies."""
    spec = job_spec(body)
    scheduling = spec.get("scheduling") if spec is not None else None
    return scheduling.get("strategy") if isinstance(scheduling, Mapping) else None


def region_of(body: Mapping[str, Any], region: str | None = None) -> str | None:
    """The job's region: given (Vertex puts it in the URL, not the body), else trainingInput.region."""
    ti = body.get("trainingInput")
    return region or (ti.get("region") if isinstance(ti, Mapping) else None)


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
