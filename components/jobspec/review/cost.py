"""What a rendered job costs: per hour while every machine runs, on demand and on Spot, at the rate it runs at,
and at worst (that rate for as long as it may run). Pure.

Everything here reads a job's worker pools in the one form (translate.pools.Pool: load.Judged.pools, or a body's
pools read by the same translation, pools_of_body) and the request body a backend sends, so it works for every
job vocabulary and backend: a Vertex AI `CustomJob`, a Vertex AI `HyperparameterTuningJob` or an ml v1 `Job`.
Prices come from the price table (components.jobspec.catalog.prices: the refreshed table when one was written,
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
from datetime import date
from types import MappingProxyType
from typing import Any, Final

from components.jobspec import catalog
from components.jobspec.catalog import prices
from components.jobspec.catalog.prices import Price, PriceTable
from components.jobspec.core.errors import SpecError
from components.jobspec.core.names import DURATION
from components.jobspec.translate.pools import VERTEX_SPEC_KEYS, Pool, pools_of_body

#: Vertex AI `scheduling.strategy` values that run on Spot (preemptible) or Flex-start (DWS) capacity.
SPOT_STRATEGIES: Final = ("SPOT", "FLEX_START")
#: Machine types that are TPU hosts billed through their accelerator (ml v1 cloud_tpu, Vertex cloud-tpu).
TPU_POOL_MACHINES: Final = (catalog.CLOUD_TPU, catalog.CLOUD_TPU_MACHINE)
#: A price table whose oldest prices are older than this (in days) makes `plan` warn.
MAX_PRICE_AGE_DAYS: Final = 180
#: The command that writes a current table (components.cli.prices).
REFRESH_COMMAND: Final = "python -m components prices refresh"
#: The rates of the table (PriceTable.strategy_rate), as the text says them.
RATE_WORDS: Final = MappingProxyType({"on_demand": "on-demand", "spot": "Spot"})


# --- What a job holds, and what its body says beyond its pools -----------------------------------------------


def running_pools(body: Mapping[str, Any], pools: Sequence[Pool] | None = None) -> tuple[Pool, ...]:
    """The pools that hold machines: `pools` (the job's, load.Judged.pools), else the body's (pools_of_body: a
    job as the API holds it); placeholders left out."""
    return tuple(p for p in (pools if pools is not None else pools_of_body(body)) if p.runs)


def as_int(value: Any, default: int = 0) -> int:
    """int64 values travel as text ("9") and Pulumi turns 8 into 8.0."""
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return default


def job_spec(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The Vertex CustomJobSpec of a body (a CustomJob's jobSpec, a tuning job's trialJobSpec), or None."""
    for key in VERTEX_SPEC_KEYS:
        spec = body.get(key)
        if isinstance(spec, Mapping):
            return spec
    return None


def _hyperparameters(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    ti = body.get("trainingInput")
    hp = ti.get("hyperparameters") if isinstance(ti, Mapping) else None
    return hp if isinstance(hp, Mapping) else None


def parallel_runs(body: Mapping[str, Any]) -> int:
    """How many copies of the job's cluster run at once: a tuning job's parallel trials (Vertex
    parallelTrialCount, ml v1 hyperparameters.maxParallelTrials, unset: 1), else 1."""
    if "trialJobSpec" in body:
        return max(1, as_int(body.get("parallelTrialCount"), 1))
    hp = _hyperparameters(body)
    return max(1, as_int(hp.get("maxParallelTrials"), 1)) if hp is not None else 1


def trial_count(body: Mapping[str, Any]) -> int:
    """How many times the job's cluster runs in all: a tuning job's trials (Vertex maxTrialCount, ml v1
    hyperparameters.maxTrials, unset: 1; never fewer than run at once), else 1."""
    if "trialJobSpec" in body:
        total = as_int(body.get("maxTrialCount"), 1)
    else:
        hp = _hyperparameters(body)
        total = as_int(hp.get("maxTrials"), 1) if hp is not None else 1
    return max(total, parallel_runs(body))


def timeout_of(body: Mapping[str, Any]) -> tuple[float, str] | None:
    """The longest the job may run, in seconds, and the body field that says so; None when the body sets none.

    Vertex AI: `scheduling.timeout` of the jobSpec (a tuning job's trialJobSpec: each trial's); ml v1:
    `trainingInput.scheduling.maxRunningTime` (the whole job's). Both are protobuf Durations ("7200s")."""
    spec = job_spec(body)
    if spec is not None:
        key = "jobSpec" if "jobSpec" in body else "trialJobSpec"
        scheduling, field = spec.get("scheduling"), f"{key}.scheduling.timeout"
        value = scheduling.get("timeout") if isinstance(scheduling, Mapping) else None
    else:
        ti = body.get("trainingInput")
        scheduling = ti.get("scheduling") if isinstance(ti, Mapping) else None
        field = "trainingInput.scheduling.maxRunningTime"
        value = scheduling.get("maxRunningTime") if isinstance(scheduling, Mapping) else None
    if not isinstance(value, str) or not DURATION.fullmatch(value) or float(value[:-1]) <= 0:
        return None  # unset (a malformed or zero value is refused by the rules before a body is made)
    return float(value[:-1]), field


def strategy(body: Mapping[str, Any]) -> str | None:
    """A Vertex job's scheduling strategy (None: STANDARD, on demand); None for ml v1 bodies."""
    spec = job_spec(body)
    scheduling = spec.get("scheduling") if spec is not None else None
    return scheduling.get("strategy") if isinstance(scheduling, Mapping) else None


def region_of(body: Mapping[str, Any], region: str | None = None) -> str | None:
    """The job's region: given (Vertex puts it in the URL, not the body), else trainingInput.region."""
    ti = body.get("trainingInput")
    return region or (ti.get("region") if isinstance(ti, Mapping) else None)


def accelerators(body: Mapping[str, Any], pools: Sequence[Pool] | None = None) -> int:
    """Accelerators the job holds at once (all pools, all replicas, all parallel trials)."""
    return sum(p.accelerators for p in running_pools(body, pools)) * parallel_runs(body)


def accelerator_totals(body: Mapping[str, Any], pools: Sequence[Pool] | None = None) -> dict[str, int]:
    """Accelerator type -> how many the job holds at once (all pools, replicas and parallel trials)."""
    totals: dict[str, int] = {}
    for pool in running_pools(body, pools):
        if pool.accelerators:
            kind = str(pool.held[0])
            totals[kind] = totals.get(kind, 0) + pool.accelerators
    runs = parallel_runs(body)
    return {kind: n * runs for kind, n in sorted(totals.items())}


# --- Sums ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Amount:
    """A sum in USD (per hour, or in all for a worst case) of the parts whose price is known, and the parts whose
    price is not, each as `N x WHAT (why)`."""

    known: float = 0.0
    unknown: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.unknown

    def __add__(self, other: Amount) -> Amount:
        return Amount(self.known + other.known, self.unknown + other.unknown)

    def times(self, factor: float) -> Amount:
        return Amount(self.known * factor, self.unknown)

    def text(self, per_hour: bool = True) -> str:
        """`$12.34/h` (or `$1,234.56` in all), or `unknown ($0.87/h known; no price for ...)`."""
        value = usd(self.known) if per_hour else usd_total(self.known)
        if self.complete:
            return value
        missing = "; ".join(self.unknown)
        return f"unknown ({value} known; no price for {missing})" if self.known else f"unknown (no price for {missing})"


    def short(self, per_hour: bool = True) -> str:
        """`$12.34/h`, or `unknown (at least $0.87/h)` / `unknown`: the parts without a price said elsewhere."""
        value = usd(self.known) if per_hour else usd_total(self.known)
        if self.complete:
            return value
        return f"unknown (at least {value})" if self.known else "unknown"


def missing_text(*amounts: Amount) -> str:
    """`; no price for 4 x NVIDIA_TESLA_K80 (why)` for the unknown parts of the amounts, each once; or ""."""
    missing = dict.fromkeys(u for amount in amounts for u in amount.unknown)
    return f"; no price for {'; '.join(missing)}" if missing else ""


def usd(value: float) -> str:
    """Per hour: `$1,234.56/h`; below a cent `$0.0042/h`."""
    return f"${value:,.2f}/h" if value >= 0.01 or value == 0 else f"${value:.4f}/h"


def usd_total(value: float) -> str:
    """In all: `$1,234.56`."""
    return f"${value:,.2f}"


def hours_text(hours: float) -> str:
    """`168 h`, `1.5 h`, `0.25 h`."""
    return f"{hours:,.2f}".rstrip("0").rstrip(".") + " h"


def _total(amounts: Iterable[Amount]) -> Amount:
    total = Amount()
    for amount in amounts:
        total = total + amount
    return total


def _named_total(amounts: Iterable[tuple[str, Amount]]) -> Amount:
    """A sum whose unknown parts say which job they belong to."""
    return _total(Amount(a.known, tuple(f"{name}: {u}" for u in a.unknown)) for name, a in amounts)


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


def _unit_price(price: Price, rate: str) -> str:
    value = price.rate(rate)
    return "unknown" if value is None else usd(value)


def part_text(part: Part) -> str:
    """`4 x a2-ultragpu-8g (machine, GPUs included): $46.63/h each on demand, $28.16/h Spot; BASIS`."""
    price = part.price
    if price is None or not price.known:
        return f"{part.units} x {part.what}: unknown ({part.why('on_demand')})"
    kind = price.unit + (", its accelerators included" if price.includes_accelerators else "")
    spot = _unit_price(price, "spot") + (f" ({price.spot_reason})" if price.spot is None else "")
    return (f"{part.units} x {part.what} ({kind}): {usd(price.on_demand or 0.0)} each on demand, {spot} Spot; "
            f"{part.basis}")


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
            why = (f"{machine_type} has no Compute Engine equivalent (components/jobspec/catalog/legacy.py "
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
class Timeout:
    """The longest a job may run: the body's timeout, or the API's default when it sets none."""

    seconds: float
    field: str | None
    """The body field that sets it (`jobSpec.scheduling.timeout`), None for the default."""
    default_of: str = ""
    """Whose default applies when the body sets none ("Vertex AI", "AI Platform Training")."""
    per_trial: bool = False
    """A Vertex tuning job's timeout holds for each trial (trialJobSpec), not for the whole job."""

    @property
    def hours(self) -> float:
        return self.seconds / 3600

    def text(self) -> str:
        """`jobSpec.scheduling.timeout 7200s`, or `no timeout: Vertex AI's default, 7 days`."""
        if self.field is not None:
            return f"{self.field} {self.seconds:g}s" + (", per trial" if self.per_trial else "")
        days = f"{self.seconds / 86400:g} days"
        return f"no timeout set: {self.default_of}'s default, {days}" + (", per trial" if self.per_trial else "")


def timeout(body: Mapping[str, Any]) -> Timeout:
    """The longest a rendered job may run (timeout_of, else the API's documented default)."""
    per_trial = "trialJobSpec" in body
    found = timeout_of(body)
    if found is not None:
        return Timeout(found[0], found[1], per_trial=per_trial)
    if job_spec(body) is not None:
        return Timeout(catalog.DEFAULT_TIMEOUT_SECONDS, None, "Vertex AI", per_trial)
    return Timeout(catalog.DEFAULT_MAX_RUNNING_SECONDS, None, "AI Platform Training")


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
        return _total(p.on_demand for p in self.parts)

    @property
    def spot(self) -> Amount:
        return _total(p.spot for p in self.parts)

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
        return _total(p.amount(self.rate) for p in self.parts)

    @property
    def worst_case(self) -> Amount:
        """In all, at most: the hourly rate for as long as it may run (a tuning job: every trial to its timeout)."""
        if self.timeout.per_trial:
            return self.hourly.times(self.timeout.hours * self.trials / self.runs)
        return self.hourly.times(self.timeout.hours)

    @property
    def bases(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(b for p in self.parts if (b := p.basis) is not None))

    def runs_as(self) -> str:
        """`on demand`, `SPOT, at Spot rates`, `FLEX_START, at the on-demand rate (an upper bound)`."""
        if self.strategy is None and self.rate == "on_demand":
            return "on demand"
        words = RATE_WORDS[self.rate]
        rate = f"at the {words} rate" if self.rate == "on_demand" else f"at {words} rates"
        bound = " (an upper bound)" if self.billing.get("bound") == "upper" else ""
        return f"{self.strategy or 'STANDARD'}, {rate}{bound}"

    def worst_case_text(self) -> str:
        """`$32,847.36 ($195.52/h x 168 h; no timeout set: Vertex AI's default, 7 days)` (unknown parts: see text)."""
        how = f"{self.hourly.short()} x {hours_text(self.timeout.hours)}"
        if self.timeout.per_trial and (self.trials > 1 or self.runs > 1):
            per_trial = self.hourly.times(1 / self.runs).short()
            how = f"{self.trials} trials x {per_trial} x {hours_text(self.timeout.hours)}"
        return f"{self.worst_case.short(per_hour=False)} ({how}; {self.timeout.text()})"

    def text(self) -> str:
        """One line: `us-central1, runs on demand: $1.23/h (on demand $1.23/h; Spot $0.45/h); worst case ...`,
        then the parts without a price, each with its reason, once."""
        where = self.region or "region unknown"
        rates = "; an ml v1 job, at Vertex AI's rates" if self.ml_v1 else ""
        return (f"{where}, runs {self.runs_as()}: {self.hourly.short()} (on demand {self.on_demand.short()}; Spot "
                f"{self.spot.short()}); worst case {self.worst_case_text()}{rates}"
                f"{missing_text(self.on_demand, self.spot)}")


def estimate(body: Mapping[str, Any], name: str, region: str | None = None, table: PriceTable | None = None,
             pools: Sequence[Pool] | None = None) -> Estimate:
    """The cost of a job (machines times replicas, accelerators, parallel trials) in its region: its `pools`
    (load.Judged.pools; else its body's, pools_of_body) and its body (strategy, trials, timeout), from `table`
    (default: prices.active_table(), which raises prices.PriceTableError for a broken table file)."""
    table = table or prices.active_table()
    region = region_of(body, region)
    runs = parallel_runs(body)
    machines: list[Part] = []
    held: list[Part] = []
    try:
        running = running_pools(body, pools)
    except SpecError as error:  # a job as the API holds it that its vocabulary's model does not read
        running, machines = (), [Part("the job's machines", 1, None, f"its pools do not read: {error.problems[0]}")]
    for pool in running:
        found = _pool_parts(pool, region, runs, table)
        machines += found[0]
        held += found[1]
    return Estimate(name, region, strategy(body), _merged(machines + held), table, timeout(body), runs,
                    trial_count(body), ml_v1=job_spec(body) is None)


# --- The stack -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StackEstimate:
    """Every job's estimate and their sums."""

    jobs: tuple[Estimate, ...]
    table: PriceTable

    @property
    def on_demand(self) -> Amount:
        return _named_total((e.name, e.on_demand) for e in self.jobs)

    @property
    def spot(self) -> Amount:
        return _named_total((e.name, e.spot) for e in self.jobs)

    @property
    def hourly(self) -> Amount:
        """Per hour, each job at the rate it runs at."""
        return _named_total((e.name, e.hourly) for e in self.jobs)

    @property
    def worst_case(self) -> Amount:
        return _named_total((e.name, e.worst_case) for e in self.jobs)

    def text(self) -> str:
        """`$1.23/h at the jobs' rates (on demand $2.34/h; Spot $0.98/h); worst case $1,234.56`, then the parts
        without a price (by job), once."""
        return (f"{self.hourly.short()} at the jobs' rates (on demand {self.on_demand.short()}; Spot "
                f"{self.spot.short()}); worst case {self.worst_case.short(per_hour=False)}"
                f"{missing_text(self.on_demand, self.spot)}")


def estimate_stack(estimates: Sequence[Estimate], table: PriceTable | None = None) -> StackEstimate:
    """The stack's sums; `table`: the one its jobs were priced from (default: theirs, else the active table)."""
    return StackEstimate(tuple(estimates), table or (estimates[0].table if estimates else prices.active_table()))


# --- The table -------------------------------------------------------------------------------------


def table_line(table: PriceTable) -> str:
    """`bundled snapshot (components/jobspec/catalog/prices_table.json) of 2026-11-23, oldest prices 2026-07-30`."""
    kind = "bundled snapshot" if table.path == str(prices.BUNDLED) else f"{table.kind} table {table.path}"
    return f"{kind} of {table.date.isoformat()}, oldest prices {table.oldest.isoformat()}"


def source_lines(table: PriceTable | None = None) -> list[str]:
    """The table, then one line per source of its prices (plan, the policy pack and the provider print them)."""
    table = table or prices.active_table()
    return [table_line(table), *table.source_lines()]


def stale_warning(table: PriceTable, today: date) -> str | None:
    """A warning when the table's oldest prices are more than MAX_PRICE_AGE_DAYS old on `today`, else None."""
    age = (today - table.oldest).days
    if age <= MAX_PRICE_AGE_DAYS:
        return None
    return (f"the price table's oldest prices are of {table.oldest.isoformat()}, {age} days before "
            f"{today.isoformat()} (more than {MAX_PRICE_AGE_DAYS}): estimates may be out of date; refresh the "
            f"table with `{REFRESH_COMMAND}`")
