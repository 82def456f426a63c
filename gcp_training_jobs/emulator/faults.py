"""Fault injection: pending faults (error statuses such as 429/5xx, delays, answers dropped after the
work is done, a list's page token that never ends), matched by API method name and consumed by the HTTP server one
call at a time."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from gcp_training_jobs.emulator.errors import ApiError

#: The method names used by the request log and by fault injection.
API_METHODS: frozenset[str] = frozenset(
    {
        "projects.getConfig",
        "jobs.create",
        "jobs.get",
        "jobs.list",
        "jobs.patch",
        "jobs.cancel",
        "customJobs.create",
        "customJobs.get",
        "customJobs.list",
        "customJobs.cancel",
        "customJobs.delete",
        "hyperparameterTuningJobs.create",
        "hyperparameterTuningJobs.get",
        "hyperparameterTuningJobs.list",
        "hyperparameterTuningJobs.cancel",
        "hyperparameterTuningJobs.delete",
        "operations.get",
        "persistentResources.create",
        "persistentResources.get",
        "persistentResources.list",
        "persistentResources.delete",
        "persistentResources.operations.get",
        "services.list",
        "services.skus.list",
        "entries.list",
        "consumerQuotaMetrics.list",
        "consumerQuotaMetrics.get",
        "quotaInfos.list",
        "quotaInfos.get",
        "reservations.insert",
        "reservations.get",
        "reservations.list",
        "reservations.aggregatedList",
        "reservations.resize",
        "reservations.delete",
        "zoneOperations.get",
    }
)

_FAULT_MESSAGES: dict[int, str] = {
    429: "Quota exceeded (injected by the emulator).",
    500: "Internal error encountered (injected by the emulator).",
    503: "The service is currently unavailable (injected by the emulator).",
}


@dataclass
class Fault:
    """A pending fault: `kind` is "error", "drop", "delay" or "page"; `method` None matches every API call."""

    kind: str
    count: int
    method: str | None
    status: int = 503
    message: str | None = None
    seconds: float = 0.0
    token: Any = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "count": self.count,
            "method": self.method,
            "status": self.status,
            "message": self.message,
            "seconds": self.seconds,
            "nextPageToken": self.token,
        }


@dataclass
class FaultPlan:
    """What the server must do to one request: sleep first, then answer an error or drop the answer; `page`: serve a
    request carrying `token` as the first page, and name `token` as the answer's next page."""

    delay: float = 0.0
    error: ApiError | None = None
    drop: bool = False
    page: bool = False
    token: Any = None


class FaultInjection:
    """The pending faults of one emulator state and the controls that add and consume them.

    A base of EmulatorState: it shares the state's lock, and `reset()` clears it through `_clear_faults`.
    """

    def __init__(self, lock: threading.RLock) -> None:
        self._fault_lock = lock
        self._faults: list[Fault] = []

    def inject_faults(
        self, status: int = 503, count: int = 1, method: str | None = None, *, message: str | None = None
    ) -> None:
        """The next `count` API calls named `method` (None: any) answer `status` without doing anything."""
        if not 400 <= status <= 599:
            raise ValueError(f"fault status must be 4xx or 5xx, got {status}")
        self._add_fault(Fault("error", count, method, status=status, message=message))

    def drop_next_response(self, method: str | None = "jobs.create", count: int = 1) -> None:
        """The next `count` matching calls ARE executed, then the connection closes with no answer.

        What the client sees (httplib2 0.32 / googleapiclient 2.202): httplib2 reads EOF instead of a
        status line -> http.client.RemoteDisconnected (a BadStatusLine and a ConnectionResetError).
        httplib2 itself silently re-sends the request once when that happens on the first attempt, so
        ONE dropped ml create is re-sent and surfaces as HttpError 409 ALREADY_EXISTS (the first copy
        created the job), and one dropped Vertex create yields two jobs. With two drops httplib2 gives up
        and raises RemoteDisconnected; googleapiclient's execute(num_retries=N) catches it as a
        ConnectionError and retries (N=0 lets it propagate).
        """
        self._add_fault(Fault("drop", count, method))

    def inject_delay(self, seconds: float, count: int = 1, method: str | None = None) -> None:
        """The next `count` matching calls sleep `seconds` before being handled (for timeout tests)."""
        if seconds < 0:
            raise ValueError("delay must be >= 0")
        self._add_fault(Fault("delay", count, method, seconds=float(seconds)))

    def inject_page_token(self, method: str | None, token: Any, count: int = 1) -> None:
        """The next `count` answers of the list `method` name `token` as their nextPageToken, and a request that
        carries `token` is served as the first page: a server that hands out the same token forever (a client that
        follows it reads the first page again and again), or, `token` not text (a number), one a client cannot
        send back."""
        if method is None:
            raise ValueError("a page token fault names its list method")
        self._add_fault(Fault("page", count, method, token=token))

    def pending_faults(self) -> list[dict[str, Any]]:
        """Faults not yet consumed, oldest first."""
        with self._fault_lock:
            return [f.as_dict() for f in self._faults]

    def take_faults(self, method: str) -> FaultPlan:
        """Consume the faults that apply to one call of `method` (first delay, first error/drop, first page)."""
        plan = FaultPlan()
        with self._fault_lock:
            took_delay = took_action = took_page = False
            for fault in list(self._faults):
                if fault.method is not None and fault.method != method:
                    continue
                if fault.kind == "delay" and not took_delay:
                    took_delay = True
                    plan.delay = fault.seconds
                elif fault.kind == "page" and not took_page:
                    took_page = plan.page = True
                    plan.token = fault.token
                elif fault.kind in ("error", "drop") and not took_action:
                    took_action = True
                    if fault.kind == "drop":
                        plan.drop = True
                    else:
                        text = fault.message or _FAULT_MESSAGES.get(fault.status, "Injected fault.")
                        plan.error = ApiError(fault.status, text)
                else:
                    continue
                fault.count -= 1
                if fault.count <= 0:
                    self._faults.remove(fault)
        return plan

    def _clear_faults(self) -> None:
        with self._fault_lock:
            self._faults.clear()

    def _add_fault(self, fault: Fault) -> None:
        if fault.count < 1:
            raise ValueError("count must be >= 1")
        if fault.method is not None and fault.method not in API_METHODS:
            raise ValueError(f"unknown method {fault.method!r}; expected one of {sorted(API_METHODS)}")
        with self._fault_lock:
            self._faults.append(fault)
