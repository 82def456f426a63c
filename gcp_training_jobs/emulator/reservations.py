"""Compute Engine v1 reservations (compute.googleapis.com): `projects.zones.reservations` insert, get, list,
delete and resize, `projects.aggregated.reservations` (aggregatedList) and the zone operations' get, at
`compute/v1/` of the emulator's endpoint, as google-api-python-client's `discovery.build("compute", "v1")` calls them
(the discovery document it ships, `compute.v1.json`); and what Vertex AI checks of a job that consumes one
(`check_job`).

A reservation's `specificReservation.inUseCount` is not stored: it is the machines the project's live Vertex AI jobs
(a CustomJob, a tuning job's parallel trials) take from it, read on the emulator's clock, so a job raises it while it
lives (QUEUED to RUNNING, CANCELLING, PAUSED) and lowers it when it ends. Operations are answered DONE at once (an
insert is checked and stored before it is answered).

A job consumes a reservation by a pool's `machineSpec.reservationAffinity` of type SPECIFIC_RESERVATION, key
`compute.googleapis.com/reservation-name`, values `projects/P/zones/Z/reservations/NAME`. "A reservation's VM
properties must match exactly with your Vertex AI workload to consume the reservation" (Use reservations with
training, https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/use-reservations,
read 2026-11-28, as the client's catalog cites it), and its sharing policy must let Google Cloud services consume it
(`reservationSharingPolicy.serviceShareType` ALLOW_ALL, the same page's "Allow consumption"): the machine type and
the accelerators, type and count (a Compute Engine accelerator name is Vertex's enum name in lower case with hyphens,
`NVIDIA_H100_80GB` is `nvidia-h100-80gb`; an accelerator-optimized type's built-in GPUs count where either side lists
none, `vertex_limits.FIXED_GPUS`). Google publishes no words for a job refused a reservation (absent, in another
region, not shared with the job's project, another machine, too few free machines): those refusals are the
emulator's own words (marked EMULATOR-WORDS), a 400 naming the pool's field, before the job is stored.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from gcp_training_jobs.emulator import vertex_limits
from gcp_training_jobs.emulator.errors import ApiError, refused
from gcp_training_jobs.emulator.jobs import Job, rfc3339, same_project
from gcp_training_jobs.emulator.reservation_store import Reservation, ReservationStore
from gcp_training_jobs.emulator.routing import Request, Route
from gcp_training_jobs.emulator.state import EmulatorState
from gcp_training_jobs.emulator.validation import int_value, validated

SCHEMA = "Reservation"
#: The key a SPECIFIC_RESERVATION affinity names a reservation by (Vertex AI's ReservationAffinity.key).
NAME_KEY = "compute.googleapis.com/reservation-name"
_VALUE = re.compile(r"^projects/(?P<p>[^/]+)/zones/(?P<z>[^/]+)/reservations/(?P<n>[^/]+)$")
#: Compute Engine's resource names (RFC 1035), the Reservation schema's `name` pattern.
_NAME = re.compile(r"^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$")
_BASE = "https://www.googleapis.com/compute/v1/"
#: Fields Compute Engine sets ("[Output Only]" in the discovery document), dropped from an insert's body.
_OUTPUT_ONLY = frozenset({"id", "kind", "selfLink", "creationTimestamp", "status", "zone", "satisfiesPzs",
                          "resourceStatus", "commitment", "linkedCommitments"})
_PAGE = 500  # maxResults' default and largest value, as Compute Engine documents it


class ComputeError(ApiError):
    """Compute Engine's error shape: {"error": {"code", "message", "errors": [{"domain", "reason", "message"}]}}."""

    def __init__(self, code: int, message: str, reason: str) -> None:
        super().__init__(code, message)
        self.reason = reason

    def payload(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message,
                          "errors": [{"domain": "global", "reason": self.reason, "message": self.message}]}}


def _store(state: EmulatorState) -> ReservationStore:
    store: ReservationStore = state.reservations
    return store


def _not_found(project: str, zone: str, name: str) -> ComputeError:
    return ComputeError(404, f"The resource 'projects/{project}/zones/{zone}/reservations/{name}' was not found",
                        "notFound")


def _found(state: EmulatorState, project: str, zone: str, name: str) -> Reservation:
    found = _store(state).find(project, zone, name)
    if found is None:
        raise _not_found(project, zone, name)
    return found


# ------------------------------------------------------------------------------------------- in use by jobs


def _pool_machines(pool: dict[str, Any]) -> int:
    return max(1, int_value(pool.get("replicaCount")) or 1)


def _consumed(spec: Any) -> list[tuple[str, dict[str, Any]]]:
    """(reservation path as written, pool) of each pool of a CustomJobSpec that names one (SPECIFIC_RESERVATION)."""
    out = []
    for pool in (spec.get("workerPoolSpecs") if isinstance(spec, dict) else None) or []:
        machine = pool.get("machineSpec") if isinstance(pool, dict) else None
        affinity = machine.get("reservationAffinity") if isinstance(machine, dict) else None
        if not isinstance(affinity, dict) or affinity.get("reservationAffinityType") != "SPECIFIC_RESERVATION":
            continue
        values = affinity.get("values") or []
        if affinity.get("key") == NAME_KEY and values and isinstance(values[0], str):
            out.append((values[0], pool))
    return out


def _copies(job: Job) -> tuple[Any, int]:
    """A live job's CustomJobSpec and how many copies of it run at once (a tuning job's parallel trials)."""
    if "trialJobSpec" in job.body:
        return job.body.get("trialJobSpec"), max(1, int_value(job.body.get("parallelTrialCount")) or 1)
    return job.body.get("jobSpec"), 1


def _names(reservation: Reservation, written: str) -> bool:
    match = _VALUE.match(written)
    return bool(match and match["n"] == reservation.name and match["z"] == reservation.zone
                and same_project(match["p"], reservation.project))


def in_use(state: EmulatorState, reservation: Reservation) -> int:
    """The machines live Vertex AI jobs take from the reservation now (each pool's replicas, times parallel trials)."""
    used = 0
    for job in state.live_jobs("aiplatform"):
        spec, copies = _copies(job)
        used += sum(_pool_machines(pool) * copies for written, pool in _consumed(spec) if _names(reservation, written))
    return used


# ---------------------------------------------------------------------------------------------------- answers


def _render(state: EmulatorState, reservation: Reservation) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "compute#reservation", "id": reservation.id,
                           "creationTimestamp": rfc3339(reservation.created)}
    out.update(copy.deepcopy(reservation.body))
    out.update(name=reservation.name, zone=f"{_BASE}projects/{reservation.project}/zones/{reservation.zone}",
               selfLink=_BASE + reservation.path, status="READY")
    out.setdefault("specificReservationRequired", False)
    sku = out.setdefault("specificReservation", {})
    sku["count"] = str(reservation.count)
    sku["inUseCount"] = str(in_use(state, reservation))
    return out


def _operation(state: EmulatorState, project: str, zone: str, kind: str, target: str) -> dict[str, Any]:
    number = state.next_id()
    now = rfc3339(state.now())
    name = f"operation-{number}"
    operation = {"kind": "compute#operation", "id": number, "name": name, "operationType": kind,
                 "zone": f"{_BASE}projects/{project}/zones/{zone}", "targetLink": _BASE + target, "status": "DONE",
                 "progress": 100, "insertTime": now, "startTime": now, "endTime": now,
                 "selfLink": f"{_BASE}projects/{project}/zones/{zone}/operations/{name}"}
    _store(state).operations[f"{project}/{zone}/{name}"] = operation
    return copy.deepcopy(operation)


# ---------------------------------------------------------------------------------------------------- methods


def insert(state: EmulatorState, project: str, zone: str, body: Any) -> dict[str, Any]:
    """reservations.insert: a name, a specificReservation with a count of at least 1 and a machine type; the
    name not taken in the zone (409 alreadyExists)."""
    body = validated(body, "compute", SCHEMA, strict_int64=False)
    user = {k: copy.deepcopy(v) for k, v in body.items() if k not in _OUTPUT_ONLY and v is not None}
    name = user.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ComputeError(400, f"Invalid value for field 'resource.name': '{name or ''}'. Must be a match of regex "
                           "'[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?'", "invalid")
    sku = user.get("specificReservation")
    if not isinstance(sku, dict) or not (int_value(sku.get("count")) or 0) > 0:
        # EMULATOR-WORDS (only specific reservations of one machine type are served)
        raise ComputeError(400, "Invalid value for field 'resource.specificReservation.count': a count of at least "
                           "1 is required.", "invalid")
    sku.pop("inUseCount", None)
    sku.pop("assuredCount", None)
    if not (sku.get("instanceProperties") or {}).get("machineType"):
        # EMULATOR-WORDS
        raise ComputeError(400, "Invalid value for field 'resource.specificReservation.instanceProperties."
                           "machineType': a machine type is required.", "invalid")
    with state.lock:
        if _store(state).find(project, zone, name) is not None:
            raise ComputeError(409, f"The resource 'projects/{project}/zones/{zone}/reservations/{name}' already "
                               "exists", "alreadyExists")
        reservation = Reservation(project, zone, name, user, state.next_id(), state.now())
        _store(state).reservations.append(reservation)
        return _operation(state, project, zone, "insert", reservation.path)


def get(state: EmulatorState, project: str, zone: str, name: str) -> dict[str, Any]:
    with state.lock:
        return _render(state, _found(state, project, zone, name))


def _page(found: list[Reservation], query: dict[str, Any]) -> tuple[list[Reservation], str]:
    size = min(_PAGE, int_value(query.get("maxResults")) or _PAGE)
    start = int_value(query.get("pageToken")) or 0
    rest = found[start:]
    return rest[:size], (str(start + size) if len(rest) > size else "")


def list_zone(state: EmulatorState, project: str, zone: str, query: dict[str, Any]) -> dict[str, Any]:
    """reservations.list: a zone's reservations, oldest first, `maxResults` a page."""
    with state.lock:
        every = [r for r in _store(state).reservations if r.zone == zone and same_project(project, r.project)]
        page, token = _page(every, query)
        out: dict[str, Any] = {"kind": "compute#reservationList", "items": [_render(state, r) for r in page],
                               "selfLink": f"{_BASE}projects/{project}/zones/{zone}/reservations"}
        if token:
            out["nextPageToken"] = token
        return out


def aggregated(state: EmulatorState, project: str, query: dict[str, Any]) -> dict[str, Any]:
    """reservations.aggregatedList: every zone's reservations of the project, keyed `zones/Z` (only zones that hold
    one are listed)."""
    with state.lock:
        every = [r for r in _store(state).reservations if same_project(project, r.project)]
        page, token = _page(every, query)
        items: dict[str, Any] = {}
        for reservation in page:
            items.setdefault(f"zones/{reservation.zone}", {"reservations": []})["reservations"].append(
                _render(state, reservation))
        out: dict[str, Any] = {"kind": "compute#reservationAggregatedList", "items": items,
                               "selfLink": f"{_BASE}projects/{project}/aggregated/reservations"}
        if token:
            out["nextPageToken"] = token
        return out


def delete(state: EmulatorState, project: str, zone: str, name: str) -> dict[str, Any]:
    """reservations.delete: gone at once (jobs that consume it keep running, as VMs do)."""
    with state.lock:
        reservation = _found(state, project, zone, name)
        _store(state).reservations.remove(reservation)
        return _operation(state, project, zone, "delete", reservation.path)


def resize(state: EmulatorState, project: str, zone: str, name: str, body: Any) -> dict[str, Any]:
    """reservations.resize: `specificSkuCount` becomes the count."""
    body = validated(body, "compute", "ReservationsResizeRequest", strict_int64=False)
    count = int_value(body.get("specificSkuCount"))
    if count is None or count < 0:
        raise ComputeError(400, "Invalid value for field 'specificSkuCount': a count of 0 or more is required.",
                           "invalid")  # EMULATOR-WORDS
    with state.lock:
        reservation = _found(state, project, zone, name)
        reservation.body.setdefault("specificReservation", {})["count"] = str(count)
        return _operation(state, project, zone, "resize", reservation.path)


def get_operation(state: EmulatorState, project: str, zone: str, name: str) -> dict[str, Any]:
    """zoneOperations.get of an insert, delete or resize (always DONE)."""
    with state.lock:
        for key, operation in _store(state).operations.items():
            at, where, op_name = key.split("/")
            if op_name == name and where == zone and same_project(project, at):
                return copy.deepcopy(operation)
    raise ComputeError(404, f"The resource 'projects/{project}/zones/{zone}/operations/{name}' was not found",
                       "notFound")


# ------------------------------------------------------------------------------------ a job that consumes one


def _gpus(machine_type: str, listed: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """A machine's accelerators as (Compute Engine name, count): those listed, else its type's built-in GPUs."""
    if listed:
        return sorted(listed)
    fixed = vertex_limits.FIXED_GPUS.get(machine_type)
    return [(_compute_name(fixed[0]), fixed[1])] if fixed else []


def _compute_name(vertex_enum: str) -> str:
    return vertex_enum.lower().replace("_", "-")


def _reserved_machine(reservation: Reservation) -> tuple[str, list[tuple[str, int]]]:
    properties = reservation.sku.get("instanceProperties") or {}
    machine_type = str(properties.get("machineType") or "")
    listed = [(str(a.get("acceleratorType") or "").rsplit("/", 1)[-1], int_value(a.get("acceleratorCount")) or 0)
              for a in properties.get("guestAccelerators") or [] if isinstance(a, dict)]
    return machine_type, _gpus(machine_type, listed)


def _job_machine(pool: dict[str, Any]) -> tuple[str, list[tuple[str, int]]]:
    machine = pool.get("machineSpec") or {}
    machine_type = str(machine.get("machineType") or "")
    kind = machine.get("acceleratorType")
    listed = [(_compute_name(str(kind)), int_value(machine.get("acceleratorCount")) or 0)] \
        if kind and kind != "ACCELERATOR_TYPE_UNSPECIFIED" else []
    return machine_type, _gpus(machine_type, listed)


def _shown(machine: tuple[str, list[tuple[str, int]]]) -> str:
    machine_type, gpus = machine
    return machine_type + "".join(f" + {count} {name}" for name, count in gpus)


def check_job(state: EmulatorState, project: str, location: str, spec: dict[str, Any], at: str,
              copies: int = 1) -> None:
    """The reservations a CustomJobSpec at `at` consumes (its `copies` at once: a tuning job's parallel trials):
    each exists, is in the job's region, is shared with its project, matches the pool's machine exactly and has
    the machines free (the job's pools on one reservation summed). Called under the state's lock; first refusal
    only."""
    wanted: dict[int, int] = {}
    named: dict[int, tuple[Reservation, str]] = {}
    for index, pool in enumerate(spec.get("workerPoolSpecs") or []):
        if not isinstance(pool, dict):
            continue
        for written, _ in _consumed({"workerPoolSpecs": [pool]}):
            where = f"{at}.worker_pool_specs[{index}].machine_spec.reservation_affinity"
            reservation = _usable(state, project, location, written, where)
            reserved, machine = _reserved_machine(reservation), _job_machine(pool)
            if reserved != machine:
                # EMULATOR-WORDS
                raise refused(f"The machine_spec of {at}.worker_pool_specs[{index}] ({_shown(machine)}) does not "
                              f"match the machine of reservation {reservation.path} ({_shown(reserved)}): a "
                              "reservation is consumed only by the exact machine type and accelerators it "
                              "reserves.", where)
            wanted[id(reservation)] = wanted.get(id(reservation), 0) + _pool_machines(pool) * copies
            named[id(reservation)] = (reservation, where)
    for key, need in wanted.items():
        reservation, where = named[key]
        used = in_use(state, reservation)
        if need > reservation.count - used:
            # EMULATOR-WORDS
            raise ApiError(400, f"The job needs {need} machines from reservation {reservation.path}, which has "
                           f"{max(0, reservation.count - used)} free (count {reservation.count}, in use {used}).",
                           "FAILED_PRECONDITION", [(where, "not enough free machines in the reservation")])


def _usable(state: EmulatorState, project: str, location: str, written: str, where: str) -> Reservation:
    match = _VALUE.match(written)
    if match is None:
        raise refused(f"Invalid reservation name {written!r}; expected projects/PROJECT/zones/ZONE/reservations/"
                      "NAME.", where)  # EMULATOR-WORDS (Vertex's own check of the form is vertex_checks')
    if not match["z"].startswith(location + "-"):
        # EMULATOR-WORDS
        raise refused(f"Reservation {written} is in zone {match['z']}, not in the job's region {location}.", where)
    reservation = _store(state).find(match["p"], match["z"], match["n"])
    if reservation is None:
        raise refused(f"Reservation {written} was not found.", where)  # EMULATOR-WORDS
    if not reservation.services_may_consume:
        # EMULATOR-WORDS
        raise refused(f"Reservation {written} does not allow Google Cloud services to consume it; its "
                      "reservationSharingPolicy.serviceShareType must be ALLOW_ALL.", where)
    if not reservation.shared_with(project):
        # EMULATOR-WORDS
        raise refused(f"Reservation {written} is not shared with project {project}.", where)
    return reservation


# ---------------------------------------------------------------------------------------------------- routes

_ZONE = r"^/compute/v1/projects/(?P<p>[^/:]+)/zones/(?P<z>[^/:]+)"
_COLLECTION = _ZONE + "/reservations"
_ITEM = _COLLECTION + r"/(?P<n>[^/:]+)"


def _zone(r: Request) -> str:
    return r.params["z"]


ROUTES: list[Route] = [
    Route("POST", re.compile(_COLLECTION + "$"), "reservations.insert",
          lambda s, r: insert(s, r.project, _zone(r), r.body)),
    Route("GET", re.compile(_COLLECTION + "$"), "reservations.list",
          lambda s, r: list_zone(s, r.project, _zone(r), r.query)),
    Route("GET", re.compile(_ITEM + "$"), "reservations.get",
          lambda s, r: get(s, r.project, _zone(r), r.params["n"])),
    Route("DELETE", re.compile(_ITEM + "$"), "reservations.delete",
          lambda s, r: delete(s, r.project, _zone(r), r.params["n"])),
    Route("POST", re.compile(_ITEM + "/resize$"), "reservations.resize",
          lambda s, r: resize(s, r.project, _zone(r), r.params["n"], r.body)),
    Route("GET", re.compile(r"^/compute/v1/projects/(?P<p>[^/:]+)/aggregated/reservations$"),
          "reservations.aggregatedList", lambda s, r: aggregated(s, r.project, r.query)),
    Route("GET", re.compile(_ZONE + r"/operations/(?P<o>[^/:]+)$"), "zoneOperations.get",
          lambda s, r: get_operation(s, r.project, _zone(r), r.params["o"])),
]

