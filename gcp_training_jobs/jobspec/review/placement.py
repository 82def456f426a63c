"""The cheapest placement within a stack's bounds (`gcp-training-jobs:placement`): a job's candidates (the regions in
bounds that offer its hardware for training, times the strategies in bounds, on its own machines), each as judged
by the one pass, held to the guardrails, priced by the one table and, online, held to the quota free in its region
after the stack's other jobs (quota_fit, the one rule); ranked, and the suggestion a review makes. Pure: the judging
and the quota reads are the callers' (resources.settings.placement, cli.plan).

The ranking (`rank`): $/h at the rate the candidate runs at (SPOT at Spot rates, FLEX_START at the on-demand rate as
an upper bound: the table's `strategies`), then its worst case, then the quota free (more first; not read offline),
then the region and the strategy by name: one order for one input. A candidate with a part of unknown price, refused
by the judge, a guardrail or the quota, is not ranked (`excluded`, with why): a suggestion never rests on an unknown
price. Spot prices move (Google may change them up to once every 30 days, SPOT_PRICES_MOVE), so every suggestion
names the price table's date.

A job on a persistent resource or a reservation keeps it (its machines are paid there): it has no candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.catalog.prices import PriceTable
from gcp_training_jobs.jobspec.review.cost import Estimate, estimate
from gcp_training_jobs.jobspec.review.money import usd
from gcp_training_jobs.jobspec.review.quota_fit import Asker, Limit, Placement, Usage, fit
from gcp_training_jobs.jobspec.review.quotas import needs_of
from gcp_training_jobs.jobspec.translate.facts import OWN_MACHINES, JobFacts

#: The strategies a stack's bounds may name (catalog.CURRENT_STRATEGIES), in the order a tie is broken.
STRATEGIES: Final = tuple(catalog.CURRENT_STRATEGIES)
#: Google's Spot VMs page: "Spot prices ... can change up to once every 30 days"; the suggestion names its table.
SPOT_PRICES_MOVE: Final = ("Spot prices may change up to once every 30 days (Compute Engine, Spot VMs, pricing: "
                           "https://cloud.google.com/compute/docs/instances/spot#pricing)")
#: What every suggestion says of it, short.
SPOT_MOVE_SHORT: Final = "Spot prices may change every 30 days"


@dataclass(frozen=True)
class Bounds:
    """Where and how a stack's jobs may run: regions, and strategies (STANDARD, SPOT, FLEX_START)."""

    regions: tuple[str, ...]
    strategies: tuple[str, ...]


def offering(facts: JobFacts, regions: Iterable[str]) -> tuple[str, ...]:
    """The regions (of `regions`, in order) that offer every accelerator of the job for training (the catalog);
    the one call site of the catalog's region rule here."""
    kinds = set(facts.accelerator_totals)
    return tuple(r for r in regions if r in catalog.VERTEX_TRAINING_REGIONS
                 and kinds <= set(catalog.REGION_ACCELERATORS.get(r, ())))


def kept(facts: JobFacts) -> str | None:
    """Why a job is not moved (its machines are paid elsewhere), else None."""
    if facts.runs_on.kind != OWN_MACHINES:
        what = facts.runs_on.persistent_resource_id or facts.runs_on.reservation_name or \
            facts.runs_on.reservation_type
        return f"runs on {facts.runs_on.kind} {what}: its machines are paid there, it is not moved"
    if facts.ml_v1:
        return "an AI Platform Training job: only Vertex AI jobs are placed"
    return None


@dataclass(frozen=True)
class Candidate:
    """One place a job may run: a region and a strategy; its facts as judged (None when the judge refused it), its
    estimate, why it is excluded (the judge, a guardrail, an unknown price, the quota), and online the quota free
    (the least free units of any metric it asks, after the stack's other jobs; None: not read or unlimited)."""

    region: str
    strategy: str
    facts: JobFacts | None
    cost: Estimate | None = None
    excluded: tuple[str, ...] = ()
    quota_free: int | None = None
    quota_read: bool = False

    @property
    def hourly(self) -> float | None:
        return round(self.cost.hourly.known, 6) if self.cost is not None and self.cost.hourly.complete else None

    @property
    def worst(self) -> float | None:
        worst = self.cost.worst_case if self.cost is not None else None
        return round(worst.known, 2) if worst is not None and worst.complete else None

    @property
    def ranked(self) -> bool:
        return not self.excluded and self.hourly is not None

    def words(self) -> str:
        return f"{self.region} {self.strategy}"

    def as_dict(self) -> dict[str, Any]:
        return {"region": self.region, "strategy": self.strategy, "usdPerHour": self.hourly,
                "worstCaseUsd": self.worst, "quotaFree": self.quota_free if self.quota_read else None,
                **({"excluded": list(self.excluded)} if self.excluded else {})}


def candidate(region: str, strategy: str, facts: JobFacts | None, name: str, table: PriceTable | None,
              refused: Sequence[str] = ()) -> Candidate:
    """A candidate as judged (`facts`, None with `refused` when the judge or a guardrail refused it), priced."""
    if facts is None or refused:
        return Candidate(region, strategy, facts, excluded=tuple(refused) or ("refused by the judge",))
    cost = estimate(facts, f"{name} at {region} {strategy}", table)
    unknown = () if cost.hourly.complete else (f"price unknown: {cost.hourly.text()}",)
    return Candidate(region, strategy, facts, cost, unknown)


def _key(c: Candidate) -> tuple[Any, ...]:
    worst = c.worst if c.worst is not None else float("inf")
    free = -c.quota_free if c.quota_free is not None else 0
    order = STRATEGIES.index(c.strategy) if c.strategy in STRATEGIES else len(STRATEGIES)
    return c.hourly, worst, free, c.region, order


def rank(candidates: Iterable[Candidate]) -> tuple[Candidate, ...]:
    """The candidates that may run, cheapest first (see the module): the order `up` tries them."""
    return tuple(sorted((c for c in candidates if c.ranked), key=_key))


def excluded(candidates: Iterable[Candidate]) -> tuple[Candidate, ...]:
    return tuple(c for c in candidates if not c.ranked)


def held_to_quota(name: str, candidates: Sequence[Candidate], others: Sequence[Asker], limit: Limit, usage: Usage,
                  running: Callable[[Asker], bool] = lambda asker: False) -> tuple[Candidate, ...]:
    """Each candidate held to the quota free in its region after the stack's other jobs (`others`, placed first by
    the one rule, quota_fit.fit): the job placed after them at the candidate alone. A candidate over a limit is
    excluded, with the rule's words; each gets `quota_free`."""
    placed = fit(others, limit, usage, running)
    found = []
    for c in candidates:
        if c.facts is None or c.excluded:
            found.append(c)
            continue
        needs = needs_of(c.facts)
        free: int | None = None
        for metric in needs.units:
            bound = limit(metric, c.region)
            if bound is not None:
                left = bound - placed.taken.get(c.region, {}).get(metric, 0) - usage(c.region).get(metric, 0)
                free = left if free is None else min(free, left)
        verdict = fit([*others, Asker(name, (Placement(c.region, needs),))], limit, usage, running).of(name)
        over = tuple(f"over quota: {o.short()}" for overs in (verdict.over if verdict else ()) for o in overs)
        found.append(replace(c, excluded=over, quota_free=max(free, 0) if free is not None else None,
                             quota_read=True))
    return tuple(found)


@dataclass(frozen=True)
class Choice:
    """What a review says of one job's placement: its own estimate as written, its candidates ranked and excluded,
    and the suggestion (the cheapest, when cheaper than the job as written)."""

    name: str
    own: Estimate
    ordered: tuple[Candidate, ...]
    left_out: tuple[Candidate, ...] = ()
    table_date: str = ""
    online: bool = False
    cheapest_set: bool = False
    """`jobs.NAME.placement: cheapest`: the deploy takes the candidates in order."""
    notes: tuple[str, ...] = field(default=())

    @property
    def best(self) -> Candidate | None:
        return self.ordered[0] if self.ordered else None

    @property
    def saving(self) -> float | None:
        """What the cheapest saves per hour against the job as written, when both are priced and it is cheaper (none
        under `placement: cheapest`: the job takes it already)."""
        best, own = self.best, self.own.hourly
        if self.cheapest_set or best is None or best.hourly is None or not own.complete:
            return None
        saving = round(own.known - best.hourly, 6)
        same = best.region == self.own.region and best.strategy == (self.own.strategy or "STANDARD")
        return saving if saving > 0 and not same else None

    def text(self) -> str | None:
        """`cheaper within the stack's placement: us-east4 SPOT $0.50/h (-$0.48/h, -49%); quota free 8 (prices of
        DATE)`, or None when nothing is cheaper."""
        best, saving = self.best, self.saving
        if best is None or saving is None or best.hourly is None:
            return None
        share = round(100 * saving / self.own.hourly.known) if self.own.hourly.known else 0
        quota = (f"quota free {best.quota_free}" if best.quota_free is not None else "quota not limited") \
            if best.quota_read else "quota not read"
        return (f"cheaper within the stack's placement: {best.words()} {usd(best.hourly)} (-{usd(saving)}, "
                f"-{share}%); {quota} (price table of {self.table_date}; {SPOT_MOVE_SHORT})")

    def order_text(self) -> str | None:
        """For `placement: cheapest`: the order `up` tries, the price range and the worst case at the dearest."""
        if not self.ordered:
            return None
        prices = [c.hourly for c in self.ordered if c.hourly is not None]
        dearest = max(self.ordered, key=lambda c: (c.worst or 0, c.hourly or 0))
        worst = f"${dearest.worst:,.2f}" if dearest.worst is not None else "unknown"
        return (f"cheapest first: {', '.join(f'{c.words()} {usd(c.hourly or 0)}' for c in self.ordered)}; "
                f"{usd(min(prices))} to {usd(max(prices))}; worst case {worst} at the dearest "
                f"({dearest.words()}) (price table of {self.table_date})")

    def cheapest(self) -> dict[str, Any] | None:
        best, saving = self.best, self.saving
        if best is None or (saving is None and not self.cheapest_set):
            return None
        return {"region": best.region, "strategy": best.strategy, "usdPerHour": best.hourly,
                "savingUsdPerHour": saving or 0.0, "quotaFree": best.quota_free if best.quota_read else None,
                "priceTableDate": self.table_date, "text": self.text()}

    def as_dict(self) -> dict[str, Any]:
        return {"cheapest": self.cheapest(), "candidates": [c.as_dict() for c in self.ordered],
                "excluded": [c.as_dict() for c in self.left_out], "placementCheapest": self.cheapest_set,
                "online": self.online, "notes": list(self.notes), "orderText": self.order_text()}


def choose(name: str, own: Estimate, candidates: Sequence[Candidate], table: PriceTable, *, online: bool = False,
           cheapest_set: bool = False) -> Choice:
    """The review's choice for one job from its candidates (as judged, and online held to the quota)."""
    return Choice(name, own, rank(candidates), excluded(candidates), table.date.isoformat(), online, cheapest_set)


def stack_saving(choices: Iterable[Choice]) -> float:
    """What the stack would save per hour, each job at its cheapest candidate."""
    return round(sum(c.saving or 0.0 for c in choices), 6)
