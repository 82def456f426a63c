"""Where a job runs, for a reviewer (`plan`, its JSON, `diff`): the reservation its pools take machines from (its
type, its name, how many machines of which type), the persistent resource it runs on, its boot disks that are not
Vertex AI's defaults, and its fallbacks in order (each one's region, machine, strategy and $/h).

Everything is read from the job as the stack judged it (`JobSettings.facts`, and each fallback's `Judged.facts`,
`JobSettings.alternatives`): nothing re-reads a body.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gcp_training_jobs.jobspec.catalog import vertex_jobspec
from gcp_training_jobs.jobspec.catalog.prices import PriceTable
from gcp_training_jobs.jobspec.review.cost import estimate
from gcp_training_jobs.jobspec.review.reservations import takings
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.jobspec.translate.pools import Pool


@dataclass(frozen=True)
class ReservationNeed:
    """Machines of one type a job takes from one reservation at once (its pools' replicas, times parallel runs)."""

    type: str
    name: str | None
    machine_type: str
    machines: int

    @property
    def key(self) -> tuple[str, str | None, str]:
        return self.type, self.name, self.machine_type

    def source(self) -> str:
        """`reservation R` (the last part of `projects/P/zones/Z/reservations/R`), `any reservation`."""
        if self.name:
            return f"reservation {self.name.split('/reservations/', 1)[-1]}"
        return "any reservation" if self.type == "ANY_RESERVATION" else f"a {self.type} reservation"

    def text(self) -> str:
        """`2 a3-highgpu-8g from reservation R`."""
        return f"{self.machines} {self.machine_type} from {self.source()}"

    def affinity(self) -> str:
        """`SPECIFIC_RESERVATION projects/P/zones/Z/reservations/R`, `ANY_RESERVATION`: its reservationAffinity."""
        return affinity_text(self.type, self.name)

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "machineType": self.machine_type, "machines": self.machines}


def affinity_text(kind: str, name: str | None) -> str:
    """A reservationAffinity as plan and diff say it: its type, and the reservation it names."""
    return f"{kind} {name}" if name else kind


def reservation_needs(facts: JobFacts) -> list[ReservationNeed]:
    """What the job takes from reservations, per (affinity type, reservation, machine type), in pool order (the pools
    jobspec.review.reservations.takings finds, summed)."""
    found: dict[tuple[str, str | None, str], int] = {}
    for taking in takings(facts):
        key = (taking.kind, taking.written, str(taking.pool.machine_type))
        found[key] = found.get(key, 0) + taking.machines
    return [ReservationNeed(kind, name, machine, n) for (kind, name, machine), n in found.items()]


def _default_disk_type(pool: Pool) -> str:
    return vertex_jobspec.boot_disk_of(pool.machine_type, None, None)[0]


def disks(facts: JobFacts) -> list[dict[str, Any]]:
    """The pools whose boot disk is not Vertex AI's default (pd-ssd of 100 GB; hyperdisk-balanced on the machines
    the page names): its type and size as the pool runs with them."""
    found = []
    for pool in facts.running:
        kind = pool.disk_type or _default_disk_type(pool)
        size = pool.disk_size_gb or vertex_jobspec.BOOT_DISK_DEFAULT_GB
        if kind != _default_disk_type(pool) or size != vertex_jobspec.BOOT_DISK_DEFAULT_GB:
            found.append({"pool": pool.index, "path": facts.pool_path(pool), "bootDiskType": kind,
                          "bootDiskSizeGb": size})
    return found


def machines_text(facts: JobFacts) -> str:
    """The pools that hold accelerators (else every running pool), in the one wording: `a3-highgpu-8g x2 + 8
    NVIDIA_H100_80GB`."""
    return "; ".join(facts.pool_text(p) for p in _accelerated(facts)) or "(no machines)"


def _accelerated(facts: JobFacts) -> list[Pool]:
    return [p for p in facts.running if p.accelerators] or list(facts.running)


def fallback(facts: JobFacts, name: str, table: PriceTable | None) -> dict[str, Any]:
    """One alternative as judged: region, machine, strategy, $/h at the rate it runs at (null when a part has no
    price) and the text a reviewer reads. A fallback runs when the job's first placement had no room: a reservation
    it names does not hold it (priced at its machines' rate)."""
    cost = estimate(facts, name, table, falls_back=True)
    hourly = cost.hourly
    strategy = facts.strategy or "STANDARD"
    machine_types = list(dict.fromkeys(str(p.machine_type) for p in _accelerated(facts)))
    return {"region": facts.region, "machine": machines_text(facts), "machineTypes": machine_types,
            "strategy": strategy,
            "usdPerHour": round(hourly.known, 6) if hourly.complete else None,
            "text": f"{facts.region or 'region unknown'}, {machines_text(facts)}, {strategy}, {hourly.short()}"}


def placement_of(job: Any, name: str, table: PriceTable | None = None) -> dict[str, Any]:
    """Where a job runs, as data (a `JobSettings`: its facts and its fallbacks as judged)."""
    facts: JobFacts = job.facts
    return {
        "reservations": [need.as_dict() for need in reservation_needs(facts)],
        "persistentResource": facts.runs_on.persistent_resource_id,
        "disks": disks(facts),
        "fallbacks": [fallback(alt.facts, f"{name} fallbacks[{i}]", table)
                      for i, alt in enumerate(job.alternatives)],
    }


def placement_lines(placement: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The plan's lines of where a job runs: `reservation`, `persistentResource`, `pool N disk`, `fallback N`."""
    lines: list[tuple[str, str]] = []
    needs = placement.get("reservations", ())
    for index, need in enumerate(needs):
        key = f"reservation {index + 1}" if len(needs) > 1 else "reservation"  # keys of one mapping: each its own
        lines.append((key, f"{affinity_text(need['type'], need['name'])}: needs {need['machines']} "
                           f"{need['machineType']}"))
    if placement.get("persistentResource"):
        lines.append(("persistentResource", f"{placement['persistentResource']} (its machines, none of the job's own)"))
    lines += [(f"pool {d['pool']} disk", f"{d['bootDiskType']}, {d['bootDiskSizeGb']} GB")
              for d in placement.get("disks", ())]
    lines += [(f"fallback {i + 1}", f["text"]) for i, f in enumerate(placement.get("fallbacks", ()))]
    if placement.get("placementCheapest") and placement.get("orderText"):  # plan/cheapest.py
        lines.append(("placement", f"cheapest: {placement['orderText']}"))
    return lines
