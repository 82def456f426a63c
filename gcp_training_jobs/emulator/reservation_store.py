"""Compute Engine reservations as the emulator keeps them: each one's user fields as inserted, its id and creation
time, and the operations answered for them. Data only; `reservations` serves the API over it, and the state
(`EmulatorState.reservations`) owns one store. `specificReservation.inUseCount` is not kept here: it is what the
live jobs take, read when asked (`reservations.in_use`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gcp_training_jobs.emulator.jobs import project_number, same_project
from gcp_training_jobs.emulator.validation import int_value

#: reservationSharingPolicy.serviceShareType that lets Google Cloud services (Vertex AI) consume a reservation.
ALLOW_ALL = "ALLOW_ALL"


@dataclass(eq=False)
class Reservation:
    project: str
    zone: str
    name: str
    body: dict[str, Any]
    id: str
    created: float

    @property
    def path(self) -> str:
        return f"projects/{self.project}/zones/{self.zone}/reservations/{self.name}"

    @property
    def sku(self) -> dict[str, Any]:
        found = self.body.get("specificReservation")
        return found if isinstance(found, dict) else {}

    @property
    def count(self) -> int:
        return int_value(self.sku.get("count")) or 0

    def shared_with(self, project: str) -> bool:
        """Whether a job of `project` may consume it: its own project's, or shared with it (SPECIFIC_PROJECTS)."""
        if same_project(project, self.project):
            return True
        share = self.body.get("shareSettings") or {}
        if share.get("shareType") != "SPECIFIC_PROJECTS":
            return False
        listed = share.get("projectMap") or {}
        return any(project in (key, (value or {}).get("projectId")) or project == project_number(key)
                   for key, value in listed.items())

    @property
    def services_may_consume(self) -> bool:
        """Whether Vertex AI may consume it: its sharing policy allows Google Cloud services (ALLOW_ALL)."""
        policy = self.body.get("reservationSharingPolicy") or {}
        return policy.get("serviceShareType") == ALLOW_ALL


@dataclass
class ReservationStore:
    """Every reservation of one emulator, and the ids its answers draw."""

    reservations: list[Reservation] = field(default_factory=list)
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)

    def clear(self) -> None:
        self.reservations.clear()
        self.operations.clear()

    def find(self, project: str, zone: str, name: str) -> Reservation | None:
        return next((r for r in self.reservations if r.name == name and r.zone == zone
                     and same_project(project, r.project)), None)

