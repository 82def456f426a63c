"""Vertex AI's persistent resources as the emulator keeps them: the record, its states on the emulator's clock, the
long-running operations of its create and delete, and what its machines hold against the quotas. Data and the
clock only; `persistent` serves the API over it and the state (`EmulatorState.persistent`) owns one store.

Clock: a created resource is PROVISIONING for one phase (`EmulatorState.phase_seconds`), then RUNNING (its
startTime), or ERROR when its labels say `emulator-outcome: failed` or a machine type of its pools is stocked out in
its region (`capacity`'s stockout words). A deleted resource is STOPPING for one phase, then gone; its id may be used
again. An ERROR resource holds no machines; every other one holds its pools' machines (`capacity.resource_needs`).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from gcp_training_jobs.emulator import capacity
from gcp_training_jobs.emulator.jobs import rfc3339, same_project

PROVISIONING, RUNNING, STOPPING, ERROR = "PROVISIONING", "RUNNING", "STOPPING", "ERROR"
#: A resource labelled so ends in ERROR instead of RUNNING (the key jobs use to fail: `state.FAIL_LABEL`).
FAIL_LABEL = "emulator-outcome"
#: The error of a resource failed through its label (the emulator's words).
FAILED_MESSAGE = "The persistent resource failed to provision (failure injected by the emulator)."


@dataclass(eq=False)
class Resource:
    """One persistent resource: `body` holds the user's fields as received (enums as names), `judged` their proto3
    reading (what the fit of a job is judged on)."""

    project: str
    location: str
    resource_id: str
    body: dict[str, Any]
    judged: dict[str, Any]
    seq: int
    created: float
    state: str = PROVISIONING
    entered: float = 0.0
    updated: float = 0.0
    start: float | None = None
    error: dict[str, Any] | None = None
    gone: bool = False

    @property
    def name(self) -> str:
        return f"projects/{self.project}/locations/{self.location}/persistentResources/{self.resource_id}"

    @property
    def labels(self) -> dict[str, str]:
        labels = self.body.get("labels")
        return labels if isinstance(labels, dict) else {}

    def render(self) -> dict[str, Any]:
        """The resource's JSON as Vertex answers it (user fields echoed, the name in full, state and times)."""
        out: dict[str, Any] = {"name": self.name}
        out.update({k: copy.deepcopy(v) for k, v in self.body.items() if k != "name"})
        out["state"] = self.state
        if self.error is not None:
            out["error"] = dict(self.error)
        out["createTime"] = rfc3339(self.created)
        if self.start is not None:
            out["startTime"] = rfc3339(self.start)
        out["updateTime"] = rfc3339(self.updated)
        return out


@dataclass(eq=False)
class Operation:
    """A create or delete of a resource, answered as a google.longrunning.Operation whose `done` follows the clock."""

    name: str
    kind: str  # "create" or "delete"
    resource: Resource
    created: float


@dataclass
class ResourceStore:
    """Every persistent resource of one emulator and the operations of their creates and deletes."""

    resources: list[Resource] = field(default_factory=list)
    operations: dict[str, Operation] = field(default_factory=dict)
    _seq: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def clear(self) -> None:
        self.resources.clear()
        self.operations.clear()

    def add(self, project: str, location: str, resource_id: str, body: dict[str, Any], judged: dict[str, Any],
            now: float) -> Resource:
        resource = Resource(project, location, resource_id, body, judged, next(self._seq), now, entered=now,
                            updated=now)
        self.resources.append(resource)
        return resource

    def find(self, project: str, location: str, resource_id: str) -> Resource | None:
        """The resource of that id in the project (by id or number) and location, while it exists."""
        return next((r for r in self.resources if r.resource_id == resource_id and r.location == location
                     and same_project(project, r.project)), None)

    def in_location(self, project: str, location: str) -> list[Resource]:
        return [r for r in self.resources if r.location == location and same_project(project, r.project)]

    def settle(self, now: float, phase_seconds: float, stocked_out: Callable[[Resource], bool]) -> None:
        """Apply every state change due by `now` (lazy clock, as jobs)."""
        for resource in list(self.resources):
            due = resource.entered + phase_seconds
            if now < due:
                continue
            if resource.state == PROVISIONING:
                if resource.labels.get(FAIL_LABEL) == "failed":
                    self._move(resource, ERROR, due, {"code": 13, "message": FAILED_MESSAGE})
                elif stocked_out(resource):
                    message = capacity.STOCKOUT_MESSAGE.format(region=resource.location)
                    self._move(resource, ERROR, due, {"code": capacity.STOCKOUT_CODE, "message": message})
                else:
                    self._move(resource, RUNNING, due, None)
                    resource.start = due
            elif resource.state == STOPPING:
                resource.gone = True
                self.resources.remove(resource)

    def held(self, project: str, location: str) -> dict[str, int]:
        """Metric (full name) -> units the project's settled resources in `location` hold (ERROR ones: none)."""
        out: dict[str, int] = {}
        for resource in self.in_location(project, location):
            if resource.state != ERROR:
                for metric, units in capacity.resource_needs(resource.body).items():
                    out[metric] = out.get(metric, 0) + units
        return out

    @staticmethod
    def stop(resource: Resource, now: float) -> None:
        ResourceStore._move(resource, STOPPING, now, resource.error)

    @staticmethod
    def _move(resource: Resource, state: str, when: float, error: dict[str, Any] | None) -> None:
        resource.state, resource.entered, resource.updated, resource.error = state, when, when, error
