"""Compute Engine reservations as the client reads them (compute v1, `reservations.get`, and
`reservations.aggregatedList` when a job names a reservation without its zone, through the one transport): the
reservations a stack's jobs name, each read once into `jobspec.review.reservations.Reservation` (`Reads`), and the
stack's jobs held to them by the one rule (`review`: jobspec.review.reservations.fit), for `plan --online` and the
provider's check.

Compute Engine's endpoint is `https://compute.googleapis.com/compute/v1/`; an endpoint override (the stack's
apiEndpoint, the emulator's address) serves it under `compute/v1/`, as Google's client calls it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gcp_training_jobs.backends import transport
from gcp_training_jobs.jobspec.review.reservations import (
    Named,
    Need,
    Reservation,
    Taker,
    Verdict,
    fit,
    missing,
    reservation_of,
)

#: Where Compute Engine's v1 API is served, under an endpoint's root.
SERVICE_PATH = "compute/v1/"


def endpoint_of(endpoint: str | None) -> str:
    """Compute Engine's endpoint: Google's, or `compute/v1/` under an override."""
    if not endpoint:
        return "https://compute.googleapis.com/" + SERVICE_PATH
    return endpoint.rstrip("/") + "/" + SERVICE_PATH


def _reservations(at: str) -> Any:
    return transport.collection(transport.service("compute", "v1", at), "reservations")


def get(project: str, zone: str, name: str, endpoint: str | None = None) -> dict[str, Any] | None:
    """reservations.get: the reservation, or None when there is none (404)."""
    at = endpoint_of(endpoint)
    try:
        answer = transport.call(lambda: _reservations(at).get(project=project, zone=zone, reservation=name), at,
                                "reservations.get")
    except transport.ApiError as error:
        if error.status == 404:
            return None
        raise
    return dict(answer)


def aggregated(project: str, endpoint: str | None = None) -> list[dict[str, Any]]:
    """reservations.aggregatedList: every reservation of the project in every zone, all pages."""
    at = endpoint_of(endpoint)
    answers = transport.pages(lambda page: _reservations(at).aggregatedList(project=project, pageToken=page), at,
                              "reservations.aggregatedList")
    return [reservation for answer in answers for scoped in (answer.get("items") or {}).values()
            for reservation in (scoped or {}).get("reservations") or []]


@dataclass(frozen=True)
class Looked:
    """What Compute Engine said of a reservation a job names: why no job can take from it (none there, or several
    zones hold that name), else None; and the reservation read."""

    why_not: str | None
    reservation: Reservation | None = None


def look_up(named: Named, project: str, region: str | None = None, endpoint: str | None = None) -> Looked:
    """The reservation a job names, read once: by `reservations.get` at the project and zone of its path, or, when
    the path names no zone, by `aggregatedList` of `project` (in `region`'s zones when given). An API error or a lost
    connection is raised (transport.ApiError, transport.TransportError)."""
    owner = named.project or project
    if named.zone is not None:
        answer = get(owner, named.zone, named.name, endpoint)
        if answer is None:
            return Looked(missing(named))
        return Looked(None, reservation_of(answer, owner))
    found = [reservation_of(a, owner) for a in aggregated(owner, endpoint) if a.get("name") == named.name]
    if region:
        found = [r for r in found if r.zone.startswith(region + "-")]
    if not found:
        return Looked(missing(named))
    if len(found) > 1:
        zones = ", ".join(r.zone for r in found)
        return Looked(f"reservation {named.name} is in several zones ({zones}); allowed: its full name, "
                      f"projects/{owner}/zones/ZONE/reservations/{named.name}")
    return Looked(None, found[0])


Look = Callable[[Named, str, "str | None", "str | None"], Looked]
"""How a reservation is read: look_up, or a reader that keeps its answers (the provider's, once per run)."""

#: The errors of a read that leave a reservation unchecked (a warning, never a failure).
UNREAD = (transport.ApiError, transport.TransportError, transport.CredentialsError)


class Reads:
    """The reservations one review holds jobs to, each read at most once (`look`, per reservation as written and
    region) as `fit` asks for them; `unread`, why each that could not be read was not (nothing is held to it)."""

    def __init__(self, project: str, endpoint: str | None = None, look: Look = look_up):
        self.project, self.endpoint, self.look = project, endpoint, look
        self.unread: dict[Named, Exception] = {}
        self._read: dict[tuple[str, str | None], Reservation | str | None] = {}

    def __call__(self, need: Need) -> Reservation | str | None:
        key = (need.named.written, need.region)
        if key not in self._read:
            try:
                looked = self.look(need.named, self.project, need.region, self.endpoint)
                self._read[key] = looked.reservation or looked.why_not
            except UNREAD as error:
                self.unread.setdefault(need.named, error)
                self._read[key] = None
        return self._read[key]


def offline(error: Exception) -> bool:
    """A read that failed for want of credentials (said as a note, not a warning)."""
    return isinstance(error, transport.CredentialsError) or bool(getattr(error, "offline", False))


def review(stack: Sequence[Taker], project: str, endpoint: str | None = None,
           look: Look = look_up) -> tuple[tuple[Verdict, ...], Mapping[Named, Exception]]:
    """The stack's jobs that name reservations (in the stack's order; only jobs not yet running) held to them by the
    one rule (`jobspec.review.reservations.fit`), each reservation read once: the verdicts, and the reservations
    that could not be read (why)."""
    reads = Reads(project, endpoint, look)
    return fit(stack, reads), reads.unread
