"""What a stack's jobs take from the Compute Engine reservations they name, and why a reservation as Compute Engine
answers it cannot give it to them. Pure: the reservation is read by gcp_training_jobs.backends.reservations
(`reservations.get`, or `aggregatedList` when the zone is not known) into a `Reservation`, and `misfits` says, in the
project's words, what does not fit.

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
runs (a tuning job's parallel trials). Jobs of the stack on one reservation are summed against what is free, `count`
less `inUseCount`; a job already running is in `inUseCount`, so a caller passes only the jobs not yet live.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.catalog.vertex_jobspec import RESERVATION_NAME_KEY
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


def stack_needs(jobs: Mapping[str, JobFacts], project: str) -> dict[str, list[Need]]:
    """Every need of a stack's jobs (name -> facts, in the stack's order), by reservation as written."""
    out: dict[str, list[Need]] = {}
    for name, facts in jobs.items():
        for need in needs_of(name, facts, project):
            out.setdefault(need.named.written, []).append(need)
    return out


@dataclass(frozen=True)
class Misfit:
    """Why the reservation cannot give the jobs named what they need: the project's own words."""

    jobs: tuple[str, ...]
    message: str

    def line(self) -> str:
        """What `plan --online` and the provider's check say: `job big: needs 3 ...`; a sum of several jobs names
        them itself (`jobs a, b need ...`)."""
        return self.message if self.message.startswith("jobs ") else f"job {', '.join(self.jobs)}: {self.message}"


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


def misfits(reservation: Reservation, needs: Sequence[Need]) -> list[Misfit]:
    """Why `reservation` cannot give the jobs' `needs` (all naming it, in the stack's order): each pool it does not
    fit (zone, sharing, Vertex's consumption, exact machine), then, over the pools that fit, the machines they need
    together against what is free. Empty when it gives them all."""
    out: list[Misfit] = []
    fitting: list[Need] = []
    for need in needs:
        why = _one(need, reservation)
        if why is None:
            fitting.append(need)
        else:
            out.append(Misfit((need.job,), why))
    total = sum(n.machines for n in fitting)
    if fitting and total > reservation.free:
        by_job: dict[str, int] = {}
        for need in fitting:
            by_job[need.job] = by_job.get(need.job, 0) + need.machines
        held = f"it has {reservation.free} free (count {reservation.count}, in use {reservation.in_use})"
        what = f"{total} {reservation.machine_type} from reservation {reservation.name}"
        if len(by_job) == 1:
            message = f"needs {what}; {held}"
        else:
            shares = ", ".join(f"{job} {n}" for job, n in by_job.items())
            message = f"jobs {', '.join(by_job)} need {what} ({shares}); {held}"
        out.append(Misfit(tuple(by_job), message))
    return out


def wire(needs: Mapping[str, Sequence[Need]]) -> list[dict[str, Any]]:
    """The needs of a stack's jobs (stack_needs) as plain data, in the stack's order: what the stack hands each job's
    provider (the `reservations` of its `stackQuota` input), so that its check sums the stack's jobs on a reservation
    as `plan --online` does. Empty when no job names one."""
    return [{"job": n.job, "region": n.region, "reservation": n.named.written, "path": n.path,
             "machineType": n.machine_type, "accelerators": [[kind, count] for kind, count in n.accelerators],
             "machines": n.machines}
            for named in needs.values() for n in named]


def unwire(value: Any, project: str) -> dict[str, list[Need]]:
    """The needs `wire` carried (the `reservations` of a `stackQuota` input; the stack's project), by reservation as
    written; anything else carries none."""
    out: dict[str, list[Need]] = {}
    given = value.get("reservations") if isinstance(value, Mapping) else None
    for item in given if isinstance(given, list) else ():
        if not isinstance(item, Mapping) or not all(isinstance(item.get(k), str) for k in ("job", "reservation")):
            continue
        gpus = tuple((str(g[0]), as_int(g[1])) for g in item.get("accelerators") or ()
                     if isinstance(g, list | tuple) and len(g) == 2)
        region = item.get("region")
        need = Need(item["job"], project, region if isinstance(region, str) else None, Named.of(item["reservation"]),
                    str(item.get("path") or ""), str(item.get("machineType") or ""), gpus, as_int(item.get("machines")))
        out.setdefault(need.named.written, []).append(need)
    return out


def missing(named: Named) -> str:
    """The words of a reservation the job names that Compute Engine does not have."""
    return (f"reservation {named.written} does not exist; allowed: a reservation of Compute Engine in a zone of the "
            "job's region (gcloud compute reservations list)")
