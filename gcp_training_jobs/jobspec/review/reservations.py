"""What a stack's jobs take from the Compute Engine reservations they name, and why a reservation as Compute Engine
answers it cannot give it to them. Pure: the reservation is read by gcp_training_jobs.backends.reservations
(`reservations.get`, or `aggregatedList` when the zone is not known) into a `Reservation`; `fit` says, job by job in
the stack's order, where each lands and, in the project's words, what does not fit (`verdict_lines`).

A job names a reservation by a pool's `machineSpec.reservationAffinity` (SPECIFIC_RESERVATION, key
`compute.googleapis.com/reservation-name`, values `projects/P/zones/Z/reservations/NAME`; catalog.vertex_jobspec).
Vertex AI consumes a reservation only when "a reservation's VM properties ... match exactly" the job's
(catalog.vertex_jobspec.SOURCE_RESERVATIONS, "Limitations and requirements"): the machine type and the accelerators,
type and count. The rule that compares them here: Compute Engine names an accelerator as Vertex AI's enum in lower case
with hyphens (`NVIDIA_H100_80GB` is `nvidia-h100-80gb`; evidence: Compute Engine's GPU pages name every GPU of
catalog.vertex_machines so); an accelerator-optimized machine's built-in GPUs
(catalog.FIXED_ACCELERATOR_MACHINES) stand for the accelerators of either side that lists none. The same page asks that
the reservation allow Google Cloud services to consume it ("Allow consumption": `reservationSharingPolicy.
serviceShareType` ALLOW_ALL) and, for a reservation of another project, that it be shared with the job's project.

Machines are counted as the job holds them at once: each pool's replicas (a TPU slice's hosts), times its parallel
runs (a tuning job's parallel trials). The rule (`fit`), the quotas' (quota_fit) on a reservation's free machines: the
stack's jobs not yet live (a job already running is in `inUseCount`, so a caller passes only the others) are taken in
the stack's order, each at the first of its placements (as written, then each fallback, as `up` tries them) whose
reservations give it its machines: every pool fits the reservation it names (zone, sharing, Vertex AI's consumption,
the exact machine), and its pools on each reservation take no more than is free, `count` less `inUseCount`, after
what the stack's earlier jobs took there. A job that fits nowhere is named alone, with what the earlier jobs take and
what is free, and takes nothing: the jobs after it are judged as if it were not there (the earlier fit first). A job
that fits at a later placement only is a warning naming it: `up` skips the first unsent
(resources.training_job.reserved.at_create). A fallback keeps the job's reservationAffinity (it sets only a region,
a machine and a strategy: resources.fallbacks), so it takes from the same reservation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.catalog.vertex_jobspec import RESERVATION_NAME_KEY
from gcp_training_jobs.jobspec.review.quota_fit import placement_words
from gcp_training_jobs.jobspec.translate.facts import JobFacts, as_int
from gcp_training_jobs.jobspec.translate.pools import Pool

SPECIFIC = "SPECIFIC_RESERVATION"
#: A reservation affinity that takes from none.
NO_RESERVATION = "NO_RESERVATION"
#: reservationSharingPolicy.serviceShareType that lets Vertex AI consume a reservation.
ALLOW_ALL = "ALLOW_ALL"
_PATH = re.compile(r"^projects/(?P<project>[^/]+)/zones/(?P<zone>[^/]+)/reservations/(?P<name>[^/]+)")

Gpus = tuple[tuple[str, int], ...]


def compute_accelerator(vertex_enum: str) -> str:
    """Vertex AI's accelerator enum as Compute Engine names it (`NVIDIA_L4` -> `nvidia-l4`; see the module)."""
    return vertex_enum.lower().replace("_", "-")


def _gpus(machine_type: str, listed: Iterable[tuple[str, int]]) -> Gpus:
    given = tuple(sorted((kind, count) for kind, count in listed if kind and count))
    if given:
        return given
    fixed = catalog.FIXED_ACCELERATOR_MACHINES.get(machine_type)
    return ((compute_accelerator(fixed.accelerator), fixed.count),) if fixed else ()


def machine_words(machine_type: str, gpus: Gpus) -> str:
    """`a3-highgpu-8g + 8 nvidia-h100-80gb`."""
    return machine_type + "".join(f" + {count} {kind}" for kind, count in gpus)


@dataclass(frozen=True)
class Reservation:
    """A Compute Engine reservation as `reservations.get` answers it: what a job's needs are held to."""

    project: str
    zone: str
    name: str
    machine_type: str
    accelerators: Gpus
    """(Compute Engine accelerator name, count) per machine; an accelerator-optimized type's built-in GPUs when the
    reservation lists none."""
    count: int
    in_use: int
    specific_required: bool
    """`specificReservationRequired`: only a job that names it consumes it."""
    share_type: str
    """`shareSettings.shareType` (LOCAL when unset: only its own project's)."""
    shared_with: tuple[str, ...] = ()
    """The projects of `shareSettings.projectMap` (SPECIFIC_PROJECTS)."""
    services_allowed: bool = False
    """`reservationSharingPolicy.serviceShareType` is ALLOW_ALL: Vertex AI may consume it."""

    @property
    def path(self) -> str:
        return f"projects/{self.project}/zones/{self.zone}/reservations/{self.name}"

    @property
    def free(self) -> int:
        return max(0, self.count - self.in_use)

    @property
    def machine(self) -> str:
        return machine_words(self.machine_type, self.accelerators)

    def usable_by(self, project: str) -> bool:
        return project == self.project or (self.share_type == "SPECIFIC_PROJECTS" and project in self.shared_with)


def reservation_of(answer: Mapping[str, Any], project: str) -> Reservation:
    """A Compute Engine Reservation (its JSON, int64 counts as text) read into the value; `project` is the one whose
    path it was read at (the answer names its zone as a URL)."""
    sku = answer.get("specificReservation") or {}
    properties = sku.get("instanceProperties") or {}
    machine_type = str(properties.get("machineType") or "").rsplit("/", 1)[-1]
    listed = [(str(a.get("acceleratorType") or "").rsplit("/", 1)[-1], as_int(a.get("acceleratorCount")))
              for a in properties.get("guestAccelerators") or [] if isinstance(a, Mapping)]
    share = answer.get("shareSettings") or {}
    shared = tuple(sorted({str((value or {}).get("projectId") or key)
                           for key, value in (share.get("projectMap") or {}).items()}))
    policy = answer.get("reservationSharingPolicy") or {}
    return Reservation(project=project, zone=str(answer.get("zone") or "").rsplit("/", 1)[-1],
                       name=str(answer.get("name") or ""), machine_type=machine_type,
                       accelerators=_gpus(machine_type, listed), count=as_int(sku.get("count")),
                       in_use=as_int(sku.get("inUseCount")),
                       specific_required=bool(answer.get("specificReservationRequired")),
                       share_type=str(share.get("shareType") or "LOCAL"), shared_with=shared,
                       services_allowed=policy.get("serviceShareType") == ALLOW_ALL)


@dataclass(frozen=True)
class Named:
    """A reservation as a job names it: the path written, and its project, zone and name when the path reads."""

    written: str
    project: str | None
    zone: str | None
    name: str

    @classmethod
    def of(cls, written: str) -> Named:
        match = _PATH.match(written)
        if match is None:
            return cls(written, None, None, written.rsplit("/", 1)[-1])
        return cls(written, match["project"], match["zone"], match["name"])


@dataclass(frozen=True)
class Need:
    """Machines one pool of a job takes at once from the reservation it names."""

    job: str
    project: str
    region: str | None
    named: Named
    path: str
    """Where the pool is (`jobSpec.workerPoolSpecs[0]`)."""
    machine_type: str
    accelerators: Gpus
    machines: int

    @property
    def machine(self) -> str:
        return machine_words(self.machine_type, self.accelerators)


def _job_gpus(pool: Pool) -> Gpus:
    kind = pool.accelerator_type
    listed = [(compute_accelerator(kind), pool.accelerator_count or 0)] if kind else []
    return _gpus(str(pool.machine_type or ""), listed)


@dataclass(frozen=True)
class Taking:
    """One running pool of a job that takes machines from a reservation (any affinity but NO_RESERVATION): its
    affinity type, the reservation it names (None: ANY_RESERVATION names none) and the machines it holds at once."""

    pool: Pool
    kind: str
    written: str | None
    machines: int


def takings(facts: JobFacts) -> list[Taking]:
    """Every running pool of the job that takes from a reservation, in pool order: each pool's replicas (a TPU slice's
    hosts) times the job's parallel runs. The one walk `needs_of` and the plan's placement read."""
    out = []
    for pool in facts.running:
        affinity = pool.reservation
        kind = affinity.reservation_affinity_type if affinity is not None else None
        if affinity is None or kind in (None, NO_RESERVATION):
            continue
        out.append(Taking(pool, str(kind), affinity.values[0] if affinity.values else None,
                          pool.machines * facts.parallel_runs))
    return out


def needs_of(job: str, facts: JobFacts, project: str) -> list[Need]:
    """What `job` takes from the reservations it names (SPECIFIC_RESERVATION), pool by pool, in pool order."""
    out = []
    for taking in takings(facts):
        pool, affinity = taking.pool, taking.pool.reservation
        if taking.kind != SPECIFIC or taking.written is None or affinity is None \
                or (affinity.key or RESERVATION_NAME_KEY) != RESERVATION_NAME_KEY:
            continue
        out.append(Need(job, project, facts.region, Named.of(taking.written), facts.pool_path(pool),
                        str(pool.machine_type or ""), _job_gpus(pool), taking.machines))
    return out


@dataclass(frozen=True)
class Place:
    """One placement of a job as the reservations see it: its region, what it takes there from the reservations it
    names (none: it names none), and which of the job's placements it is (0 as written, k its fallbacks[k-1])."""

    region: str
    needs: tuple[Need, ...]
    index: int = 0

    def words(self) -> str:
        return placement_words(self.index, self.region)


@dataclass(frozen=True)
class Taker:
    """One job of the stack as the reservations see it: its name and its placements in the order `up` tries them
    (as written, then each fallback)."""

    name: str
    places: tuple[Place, ...]

    @property
    def needs(self) -> tuple[Need, ...]:
        """What it takes as written (its first placement): what `plan` names offline."""
        return self.places[0].needs if self.places else ()


def taker_of(name: str, placements: Mapping[int, JobFacts], project: str, region: str) -> Taker:
    """A job from its facts as judged at each placement (placement index -> facts); `region`: the stack's (or the
    job's), for a placement whose facts name none."""
    places = []
    for index, facts in sorted(placements.items()):
        where = facts.region or region
        needs = tuple(n if n.region else replace(n, region=where) for n in needs_of(name, facts, project))
        places.append(Place(where, needs, index))
    return Taker(name, tuple(places))


def takers(jobs: Mapping[str, Mapping[int, JobFacts]], project: str, region: str) -> tuple[Taker, ...]:
    """The stack's jobs (name -> placement index -> facts, in the stack's order) that name a reservation at any
    placement."""
    found = (taker_of(name, placements, project, region) for name, placements in jobs.items())
    return tuple(t for t in found if any(p.needs for p in t.places))


@dataclass(frozen=True)
class Misfit:
    """Why one placement of a job cannot be given its machines: the project's own words."""

    job: str
    message: str
    index: int = 0
    overrun: bool = False
    """The reservation gives the job's machines but has too few free (past its free machines: "over the
    reservation"), not a reservation it cannot take from at all."""

    def line(self) -> str:
        """What `plan --online` and the provider's check say: `job big: needs 3 ...`, `job big: fallbacks[0]: ...`."""
        where = f"fallbacks[{self.index - 1}]: " if self.index else ""
        return f"job {self.job}: {where}{self.message}"


@dataclass(frozen=True)
class Verdict:
    """Where one job lands: `index`, the placement whose reservations give it its machines (Place.index), None when
    none does; `misfits`, why each placement before it (every placement, when none fits) does not."""

    name: str
    index: int | None
    places: tuple[Place, ...]
    misfits: tuple[tuple[Misfit, ...], ...] = ()

    @property
    def fits(self) -> bool:
        return self.index is not None

    @property
    def place(self) -> Place | None:
        return next((p for p in self.places if p.index == self.index), None)


Read = Callable[[Need], "Reservation | str | None"]
"""The reservation a need names, as read: the Reservation; a text, why there is none to take from (`missing`); None
when it could not be read (the caller says so; nothing is held to it)."""


def _one(need: Need, reservation: Reservation) -> str | None:
    short = f"reservation {reservation.name}"
    if need.region and not reservation.zone.startswith(need.region + "-"):
        return (f"{need.path}: {short} is in zone {reservation.zone}, not in the job's region {need.region}; "
                f"allowed: a reservation in a zone of {need.region}")
    if not reservation.usable_by(need.project):
        return (f"{need.path}: {short} belongs to project {reservation.project} and is not shared with "
                f"{need.project} (shareSettings {reservation.share_type}); allowed: a reservation of the job's "
                "project, or one shared with it (SPECIFIC_PROJECTS)")
    if not reservation.services_allowed:
        return (f"{need.path}: {short} does not let Vertex AI consume it; allowed: reservationSharingPolicy."
                "serviceShareType ALLOW_ALL (gcloud compute reservations update --reservation-sharing-policy="
                "ALLOW_ALL)")
    if (need.machine_type, need.accelerators) != (reservation.machine_type, reservation.accelerators):
        return (f"{need.path}: runs {need.machine}; {short} reserves {reservation.machine}, and Vertex AI consumes "
                "a reservation only on an exact match of machine type and accelerators")
    return None


def _room(machines: int, earlier: int, reservation: Reservation) -> str:
    others = f", the stack's earlier jobs on it take {earlier}" if earlier else ""
    return (f"needs {machines} {reservation.machine_type} from reservation {reservation.name}{others}; it has "
            f"{reservation.free} free (count {reservation.count}, in use {reservation.in_use})")


def _held(job: str, place: Place, read: Read, taken: Mapping[str, int]) -> tuple[list[Misfit], dict[str, int]]:
    """Why the reservations `place` names cannot give `job` its machines there (each pool they do not fit: zone,
    sharing, Vertex's consumption, exact machine; then, per reservation, its fitting pools' machines against what is
    free after the stack's earlier jobs, `taken`), and what it takes from each (by reservation path)."""
    out: list[Misfit] = []
    fitting: dict[str, tuple[Reservation, list[Need]]] = {}
    for need in place.needs:
        got = read(need)
        if got is None:
            continue
        if isinstance(got, str):
            if all(m.message != got for m in out):  # several pools naming one absent reservation: said once
                out.append(Misfit(job, got, place.index))
            continue
        why = _one(need, got)
        if why is not None:
            out.append(Misfit(job, why, place.index))
        else:
            fitting.setdefault(got.path, (got, []))[1].append(need)
    takes: dict[str, int] = {}
    for path, (reservation, needs) in fitting.items():
        takes[path] = sum(n.machines for n in needs)
        if takes[path] + taken.get(path, 0) > reservation.free:
            out.append(Misfit(job, _room(takes[path], taken.get(path, 0), reservation), place.index, overrun=True))
    return out, takes


def fit(stack: Iterable[Taker], read: Read) -> tuple[Verdict, ...]:
    """Each job in the stack's order (only jobs not live: a live one is in `inUseCount`) at its first placement whose
    reservations give it its machines beside what the stack's earlier jobs take from them (see the module); a job
    that fits nowhere takes nothing. Deterministic for one input."""
    taken: dict[str, int] = {}
    out: list[Verdict] = []
    for taker in stack:
        misses: list[tuple[Misfit, ...]] = []
        chosen: int | None = None
        for place in taker.places:
            why, takes = _held(taker.name, place, read, taken)
            if not why:
                chosen = place.index
                for path, machines in takes.items():
                    taken[path] = taken.get(path, 0) + machines
                break
            misses.append(tuple(why))
        out.append(Verdict(taker.name, chosen, taker.places, tuple(misses)))
    return tuple(out)


def verdict_lines(verdict: Verdict) -> tuple[list[str], list[str]]:
    """What every review says of one job's verdict: (problems, warnings). A job its first placement's reservations
    give their machines says nothing; one that lands at a later placement is a warning naming it (`up` skips the
    first at create, unsent); one that fits nowhere is a problem per misfit at each placement."""
    if verdict.index is None:
        return [m.line() for misses in verdict.misfits for m in misses], []
    if not verdict.misfits:
        return [], []
    first, place = verdict.places[0], verdict.place
    why = "; ".join(m.message for m in verdict.misfits[0])
    return [], [f"job {verdict.name}: {first.words()}: {why}; `pulumi up` will not send it there and will create it "
                f"at {place.words() if place else verdict.index}, which fits"]


def missing(named: Named) -> str:
    """The words of a reservation the job names that Compute Engine does not have."""
    return (f"reservation {named.written} does not exist; allowed: a reservation of Compute Engine in a zone of the "
            "job's region (gcloud compute reservations list)")
