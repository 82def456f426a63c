"""The one home of what a stack asks of Vertex AI's quotas, job by job: which placement each job takes, and which
jobs do not fit. Pure: the limits and what live jobs hold are given (gcp_training_jobs.backends.quotas reads them).

Every reader asks this module: `plan` (offline, `asked`: each job at its placement as written), `plan --online`, the
diff, the provider's check at `pulumi preview` and `pulumi up`, and the policy pack. The same stack gets the same
verdict in the same words wherever it is judged.

The rule (`fit`): a job of the stack already live is counted as live (what it holds is among what live jobs hold), not
as new. The others are taken in the stack's order (the persistent resources first, then the jobs, each by name: the
order Pulumi hands a stack's config to the program, whatever order the file wrote them in), each at the first of its
placements (as written, then each fallback, as `up` tries them) where every metric it asks, in that placement's
region, fits beside what the stack's earlier new jobs took there and what live jobs hold. A job is held only against
the metrics it asks, in the region it will run in: a job on a persistent resource, or on a specific reservation, asks
nothing of the custom training quotas. A job that fits nowhere is named with the metric it asks, and takes nothing:
the jobs after it are judged as if it were not there (the earlier fit first).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gcp_training_jobs.jobspec.catalog import quotas as table
from gcp_training_jobs.jobspec.review.quotas import Needs, needs_of
from gcp_training_jobs.jobspec.translate.facts import JobFacts

#: What a reader prefixes a persistent resource's name with, where it stands among the jobs.
RESOURCE_PREFIX = "persistent resource "


@dataclass(frozen=True)
class Placement:
    """One place a job may run: its region and what it asks of the quotas there; `index`, which of the job's
    placements it is (0 as written, k its fallbacks[k-1])."""

    region: str
    needs: Needs
    index: int = 0

    def words(self) -> str:
        return placement_words(self.index, self.region)


def placement_words(index: int, region: str, candidates: bool = False) -> str:
    """A job's placement as the reviews name it (the quotas' and the reservations'): "as written (us-central1)",
    "fallbacks[0] (us-east4)"; a `placement: cheapest` job's (`candidates`: its placements are its ranked
    candidates), "candidate 1 (us-east4)"."""
    if candidates:
        return f"candidate {index + 1} ({region})"
    return f"as written ({region})" if index == 0 else f"fallbacks[{index - 1}] ({region})"


@dataclass(frozen=True)
class Asker:
    """One job of the stack (or one persistent resource, its machines at the most) as the quotas see it: its name and
    its placements in the order `up` tries them (as written first, then each fallback)."""

    name: str
    placements: tuple[Placement, ...]

    @property
    def written(self) -> Placement:
        return self.placements[0]


def asker_of(name: str, tries: Sequence[JobFacts], region: str) -> Asker:
    """A job from its facts as judged, as written and at each fallback (`tries`, in order); `region`: the stack's,
    for a placement whose facts name none."""
    return Asker(name, tuple(Placement(facts.region or region, needs_of(facts), index)
                             for index, facts in enumerate(tries)))


@dataclass(frozen=True)
class Over:
    """One metric a job asks that does not fit at one placement: its need, what the stack's earlier new jobs took
    there, what live jobs hold, the limit."""

    job: str
    region: str
    metric: str
    need: int
    taken: int
    usage: int
    limit: int

    def short(self) -> str:
        return (f"{self.metric} in {self.region}: needs {self.need}, the stack's earlier new jobs take {self.taken}, "
                f"live jobs hold {self.usage}, limit {self.limit}")

    def message(self, project: str) -> str:
        console = table.QUOTAS_CONSOLE.format(project=project)
        return (f"quota {table.full_name(self.metric)} in {self.region}: {self.job} needs {self.need}, the stack's "
                f"earlier new jobs there take {self.taken}, live jobs hold {self.usage}, the limit is {self.limit} "
                f"({self.need + self.taken + self.usage} > {self.limit}); ask for more at {console} (filter "
                f"{self.metric}, region {self.region}; {table.REQUEST_MORE}), or give the job a fallback elsewhere "
                "(jobs.NAME.fallbacks)")


@dataclass(frozen=True)
class Verdict:
    """Where one job lands: `index`, its placement (0 as written, k the fallback k-1), None when it fits nowhere;
    `over`, why each placement before it (every placement, when it fits nowhere) did not fit; `live`, a job already
    running, counted among what live jobs hold (nothing is said of it)."""

    name: str
    index: int | None
    placements: tuple[Placement, ...]
    over: tuple[tuple[Over, ...], ...] = ()
    live: bool = False

    @property
    def fits(self) -> bool:
        return self.index is not None

    @property
    def placement(self) -> Placement | None:
        return None if self.index is None else self.placements[self.index]

    @property
    def moved(self) -> bool:
        """It fits, at a fallback."""
        return bool(self.index)


@dataclass(frozen=True)
class Fit:
    """The stack's verdicts in its order, and what its jobs take per region and metric once placed."""

    verdicts: tuple[Verdict, ...]
    taken: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def of(self, name: str) -> Verdict | None:
        return next((v for v in self.verdicts if v.name == name), None)

    @property
    def refused(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if not v.fits)


Limit = Callable[[str, str], "int | None"]
"""(metric, region) -> the limit, None when unknown or unlimited (nothing to hold a need against)."""
Usage = Callable[[str], Mapping[str, int]]
"""region -> what live jobs hold there, per metric (read only where a limit is known)."""


def _nobody(asker: Asker) -> bool:
    return False


def fit(askers: Iterable[Asker], limit: Limit, usage: Usage, running: Callable[[Asker], bool] = _nobody) -> Fit:
    """Each asker in order at its first placement that fits (see the module); `running(asker)`: whether it is already
    live (counted in `usage`, not placed again). Deterministic for one input."""
    taken: dict[str, dict[str, int]] = {}
    held: dict[str, Mapping[str, int]] = {}
    verdicts: list[Verdict] = []

    def live(region: str) -> Mapping[str, int]:
        if region not in held:
            held[region] = usage(region)
        return held[region]

    for asker in askers:
        if running(asker):
            verdicts.append(Verdict(asker.name, 0, asker.placements, live=True))
            continue
        overs: list[tuple[Over, ...]] = []
        chosen: int | None = None
        for index, place in enumerate(asker.placements):
            here = taken.get(place.region, {})
            over = []
            for metric, need in sorted(place.needs.units.items()):
                bound = limit(metric, place.region)
                if not need or bound is None:
                    continue
                held_now = live(place.region).get(metric, 0)
                if need + here.get(metric, 0) + held_now > bound:
                    over.append(Over(asker.name, place.region, metric, need, here.get(metric, 0), held_now, bound))
            if not over:
                chosen = index
                break
            overs.append(tuple(over))
        if chosen is not None:
            place = asker.placements[chosen]
            region_taken = taken.setdefault(place.region, {})
            for metric, need in place.needs.units.items():
                region_taken[metric] = region_taken.get(metric, 0) + need
        verdicts.append(Verdict(asker.name, chosen, asker.placements, tuple(overs)))
    return Fit(tuple(verdicts), {r: dict(m) for r, m in sorted(taken.items())})


def asked(askers: Iterable[Asker]) -> dict[str, dict[str, dict[str, Any]]]:
    """What the stack asks of the quotas, offline: region -> metric -> `units` in all and `by` job, each job at its
    placement as written (what `plan` shows and the diff compares)."""
    by: dict[str, dict[str, dict[str, int]]] = {}
    for asker in askers:
        place = asker.written
        for metric, units in place.needs.units.items():
            who = by.setdefault(place.region, {}).setdefault(metric, {})
            who[asker.name] = who.get(asker.name, 0) + units
    return {region: {metric: {"units": sum(who.values()), "by": who} for metric, who in sorted(metrics.items())}
            for region, metrics in sorted(by.items())}


def verdict_lines(verdict: Verdict, project: str, candidates: bool = False) -> tuple[list[str], list[str]]:
    """What every review says of one job's verdict: (problems, warnings). A job that fits as written says nothing; one
    that fits at a fallback is a warning naming where `up` will make it; one that fits nowhere is a problem per
    metric it asks at each placement. `candidates`: a `placement: cheapest` job, whose placements are its ranked
    candidates, each named as one."""
    if verdict.index == 0 or verdict.live:
        return [], []
    if verdict.index is not None:
        place = verdict.placements[verdict.index]
        first = "; ".join(o.short() for o in verdict.over[0])
        at = "at its first candidate" if candidates else "as written"
        return [], [f"job {verdict.name}: over quota {at} ({first}); `pulumi up` will create it at "
                    f"{placement_words(place.index, place.region, candidates)}, which fits"]
    problems = []
    for place, overs in zip(verdict.placements, verdict.over, strict=True):
        where = f"{placement_words(place.index, place.region, True)}: " if candidates else \
            "" if place.index == 0 else f"fallbacks[{place.index - 1}]: "
        problems += [f"job {verdict.name}: {where}{o.message(project)}" for o in overs]
    return problems, []
