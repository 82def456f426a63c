"""Loopback HTTP emulator of AI Platform Training (ml v1) and Vertex AI custom jobs (aiplatform v1).

Why: tests and users can run the project without a cloud, with Google's own client unchanged:

    build("ml", "v1", static_discovery=True, credentials=AnonymousCredentials(),
          client_options={"api_endpoint": emulator.url})

Both discovery documents have rootUrl "https://{ml,aiplatform}.googleapis.com/" and an empty
servicePath, and `api_endpoint` replaces the whole base, so the client asks for
"http://127.0.0.1:PORT/v1/projects/p/jobs" (ml) and ".../v1/projects/p/locations/l/customJobs"
(Vertex; the regional host is replaced too, the region travels in the path). One server serves both.

State is in memory behind one lock. Jobs move through their phases lazily from a clock that tests can
advance; faults (error statuses, delays, answers lost after the work is done) can be injected, and a
request log (method name, verb, path, query; never headers) can be read back. `/_emulator/...` HTTP
endpoints expose the same controls to tests that run the emulator as a separate process.

Fidelity notes: bodies are checked against the shipped discovery schemas (unknown fields, types,
enums, durations; lowerCamel names only) plus the create-time rules the real services apply (jobId
pattern, region, code location, label syntax, worker pool shape). User fields are echoed exactly as
received (the real API would re-serialise them, e.g. int64 numbers as strings and empty lists
dropped). Names keep the project id as given (real Vertex answers with the project number; paths may
use either here). ml jobs cannot be deleted and jobIds are never reusable, as in the real service.

Standard library only (and components.discovery): it must start fast and never import pulumi.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import copy
import fnmatch
import hashlib
import itertools
import json
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType, TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from components import discovery

__all__ = [
    "API_METHODS",
    "ApiError",
    "Emulator",
    "EmulatorState",
    "FAIL_LABEL",
    "main",
    "project_number",
]

#: Jobs whose labels contain this key with value "failed" end FAILED instead of SUCCEEDED.
FAIL_LABEL = "emulator-outcome"

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
        "operations.get",
    }
)

#: HTTP status -> google.rpc.Code name, for errors and injected faults.
STATUS_NAMES: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_FAULT_MESSAGES: dict[int, str] = {
    429: "Quota exceeded (injected by the emulator).",
    500: "Internal error encountered (injected by the emulator).",
    503: "The service is currently unavailable (injected by the emulator).",
}

_ML_PHASES = ("QUEUED", "PREPARING", "RUNNING")
_ML_FINISHED = frozenset({"SUCCEEDED", "FAILED", "CANCELLED"})
_VX_PHASES = ("JOB_STATE_QUEUED", "JOB_STATE_PENDING", "JOB_STATE_RUNNING")
_VX_FINISHED = frozenset({"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"})

_JOB_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,127}$")
_LABEL_CHARS_RE = re.compile(r"^[\w-]*$")
_ML_EXTRA_OUTPUT = frozenset({"trainingOutput", "predictionOutput", "etag"})
_REDACTED_QUERY = frozenset({"key", "access_token", "oauth_token"})
_ML_FAIL_MESSAGE = "The replica master 0 exited with a non-zero status of 1."
_VX_FAIL_MESSAGE = "The replica workerpool0-0 exited with a non-zero status of 1."
#: Vertex ids are 19-digit decimal strings, increasing, never reused (not even after reset()).
_VX_ID_BASE = 4_000_000_000_000_000_000
_INJECTED_FAILURE = "Job failed (failure injected by the emulator)."
_CONTROL_POSTS = frozenset(
    {"/_emulator/reset", "/_emulator/faults", "/_emulator/advance", "/_emulator/phase", "/_emulator/fail"}
)


class ApiError(Exception):
    """An error answered in Google's JSON shape: {"error": {"code", "message", "status"}}."""

    def __init__(
        self,
        code: int,
        message: str,
        status: str | None = None,
        violations: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or STATUS_NAMES.get(code, "UNKNOWN")
        self.violations = violations or []

    def payload(self) -> dict[str, Any]:
        """The JSON body of the error response (with google.rpc.BadRequest details for field errors)."""
        error: dict[str, Any] = {"code": self.code, "message": self.message, "status": self.status}
        if self.violations:
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [{"field": f, "description": d} for f, d in self.violations],
                }
            ]
        return {"error": error}


def _invalid(message: str, field_name: str | None = None) -> ApiError:
    violations = [(field_name, message)] if field_name else None
    return ApiError(400, message, "INVALID_ARGUMENT", violations)


def project_number(project: str) -> str:
    """A stable fake 12-digit project number for a project id (real APIs know the true one)."""
    digest = int(hashlib.sha256(project.encode("utf-8")).hexdigest(), 16)
    return str(100_000_000_000 + digest % 900_000_000_000)


def _rfc3339(seconds: float) -> str:
    """Epoch seconds as RFC 3339 UTC with microseconds and a Z, as Google's JSON mapping writes it."""
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class _Job:
    """One job of either API; `body` holds the user's fields exactly as received (minus output-only)."""

    api: str  # "ml" or "aiplatform"
    project: str
    location: str  # "" for ml
    job_id: str  # ml jobId, or the Vertex numeric id
    body: dict[str, Any]
    seq: int
    created: float
    state: str
    entered: float
    start: float | None = None
    end: float | None = None
    updated: float = 0.0
    error_message: str | None = None
    error_code: int = 13
    revision: int = 0

    @property
    def name(self) -> str:
        if self.api == "ml":
            return f"projects/{self.project}/jobs/{self.job_id}"
        return f"projects/{self.project}/locations/{self.location}/customJobs/{self.job_id}"

    @property
    def labels(self) -> dict[str, str]:
        labels = self.body.get("labels")
        return labels if isinstance(labels, dict) else {}


@dataclass
class _Fault:
    """A pending fault: `kind` is "error", "drop" or "delay"; `method` None matches every API call."""

    kind: str
    count: int
    method: str | None
    status: int = 503
    message: str | None = None
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "count": self.count,
            "method": self.method,
            "status": self.status,
            "message": self.message,
            "seconds": self.seconds,
        }


@dataclass
class FaultPlan:
    """What the server must do to one request: sleep first, then answer an error or drop the answer."""

    delay: float = 0.0
    error: ApiError | None = None
    drop: bool = False


@dataclass
class _Term:
    """One `field op value` term of a list filter (terms are ANDed)."""

    field: str
    op: str
    value: str
    negate: bool = False


_TERM_RE = re.compile(
    r'\s*(?P<neg>NOT\s+)?(?P<field>[A-Za-z_][A-Za-z0-9_.\-/]*)\s*(?P<op>!=|=|:)\s*'
    r'(?P<value>"(?:[^"\\]|\\.)*"|[^\s"()]+)\s*'
)
_AND_RE = re.compile(r"AND\s+")


def _parse_filter(text: str) -> list[_Term]:
    """Parse `a=b AND labels.k="v" AND NOT state:RUNNING`; OR and parentheses are not supported."""
    terms: list[_Term] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _TERM_RE.match(text, pos)
        if not match:
            raise _invalid(f"Unsupported or malformed filter {text!r} at position {pos}.", "filter")
        value = match.group("value")
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        terms.append(_Term(match.group("field"), match.group("op"), value, bool(match.group("neg"))))
        pos = match.end()
        if pos < len(text):
            joiner = _AND_RE.match(text, pos)
            if not joiner:
                raise _invalid(f"Unsupported filter {text!r}: terms may only be joined by AND.", "filter")
            pos = joiner.end()
    return terms


def _term_matches(term: _Term, actual: str | None) -> bool:
    if term.op == ":":
        if term.value == "*":
            hit = actual is not None
        else:
            hit = actual is not None and fnmatch.fnmatchcase(actual, term.value)
    elif term.op == "=":
        hit = actual == term.value
    else:
        hit = actual != term.value
    return hit != term.negate


def _encode_token(seq: int) -> str:
    return base64.urlsafe_b64encode(f"after:{seq}".encode()).decode("ascii")


def _decode_token(token: str) -> int:
    try:
        text = base64.urlsafe_b64decode(token.encode("ascii")).decode("ascii")
        prefix, _, number = text.partition(":")
        if prefix != "after":
            raise ValueError(text)
        return int(number)
    except (ValueError, UnicodeError) as error:
        raise _invalid("Invalid page token.", "page_token") from error


def _check_labels(labels: Any, field_name: str) -> None:
    """Google's label rules: keys start with a lowercase letter; keys and values <= 63 chars of
    lowercase letters, digits, '_' and '-'; at most 64 labels."""
    if not isinstance(labels, dict):
        return
    if len(labels) > 64:
        raise _invalid(f"Field: {field_name} Error: At most 64 labels are allowed.", field_name)
    for key, value in labels.items():
        if not (
            0 < len(key) <= 63
            and key[0].isalpha()
            and key == key.lower()
            and _LABEL_CHARS_RE.match(key)
        ):
            raise _invalid(
                f"Field: {field_name} Error: Invalid label key {key!r}: keys must start with a lowercase "
                "letter and contain only lowercase letters, digits, '_' and '-' (at most 63 characters).",
                field_name,
            )
        if not isinstance(value, str) or len(value) > 63 or value != value.lower() or not (
            _LABEL_CHARS_RE.match(value)
        ):
            raise _invalid(
                f"Field: {field_name} Error: Invalid value {value!r} of label {key!r}: values contain only "
                "lowercase letters, digits, '_' and '-' (at most 63 characters).",
                field_name,
            )


def _int_value(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
        return int(value)
    return None


class EmulatorState:
    """All jobs, faults and the request log of one emulator, behind one lock.

    Clock: a job spends `phase_seconds` in each of QUEUED, PREPARING, RUNNING (Vertex: JOB_STATE_QUEUED,
    _PENDING, _RUNNING), then SUCCEEDED (or FAILED when its labels say `emulator-outcome: failed`).
    States are settled lazily when a job is read, using the phase length in force at that moment;
    `set_phase_seconds` settles every job first, so states never go backwards. `advance()` moves the
    emulated clock forward. Cancel moves a job to CANCELLING for `cancel_seconds` (default 0: the next
    read shows CANCELLED). `fail_job` fails a job immediately.

    The Vertex id counter survives `reset()` so a fresh emulator state never reuses an old job's name.
    """

    def __init__(
        self,
        phase_seconds: float = 2.0,
        *,
        cancel_seconds: float = 0.0,
        strict_int64: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._lock = threading.RLock()
        self._clock = clock
        self._offset = 0.0
        self._phase_seconds = float(phase_seconds)
        self.cancel_seconds = float(cancel_seconds)
        #: Refuse int64 fields sent as JSON numbers (the real API accepts both; the project sends strings).
        self.strict_int64 = strict_int64
        self._jobs: list[_Job] = []
        self._operations: dict[str, dict[str, Any]] = {}
        self._faults: list[_Fault] = []
        self._log: list[dict[str, Any]] = []
        self._seq = itertools.count(1)
        self._vertex_ids = itertools.count(_VX_ID_BASE + 1)

    # ----------------------------------------------------------------- control (tests, /_emulator/)

    def now(self) -> float:
        """Emulated time in epoch seconds (the real clock plus everything advanced)."""
        with self._lock:
            return self._clock() + self._offset

    def advance(self, seconds: float) -> float:
        """Move the emulated clock forward by `seconds`; return the new emulated time."""
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        with self._lock:
            self._offset += seconds
            return self.now()

    @property
    def phase_seconds(self) -> float:
        """How long each phase lasts (0: jobs finish at once; huge: jobs stay where they are)."""
        return self._phase_seconds

    @phase_seconds.setter
    def phase_seconds(self, seconds: float) -> None:
        self.set_phase_seconds(seconds)

    def set_phase_seconds(self, seconds: float) -> None:
        """Change the phase length from now on (jobs are settled with the old length first)."""
        if seconds < 0:
            raise ValueError("phase_seconds must be >= 0")
        with self._lock:
            now = self.now()
            for job in self._jobs:
                self._settle(job, now)
            self._phase_seconds = float(seconds)

    def reset(self) -> None:
        """Forget all jobs, operations, pending faults and the request log (clock and settings stay)."""
        with self._lock:
            self._jobs.clear()
            self._operations.clear()
            self._faults.clear()
            self._log.clear()

    def inject_faults(
        self, status: int = 503, count: int = 1, method: str | None = None, *, message: str | None = None
    ) -> None:
        """The next `count` API calls named `method` (None: any) answer `status` without doing anything."""
        if not 400 <= status <= 599:
            raise ValueError(f"fault status must be 4xx or 5xx, got {status}")
        self._add_fault(_Fault("error", count, method, status=status, message=message))

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
        self._add_fault(_Fault("drop", count, method))

    def inject_delay(self, seconds: float, count: int = 1, method: str | None = None) -> None:
        """The next `count` matching calls sleep `seconds` before being handled (for timeout tests)."""
        if seconds < 0:
            raise ValueError("delay must be >= 0")
        self._add_fault(_Fault("delay", count, method, seconds=float(seconds)))

    def pending_faults(self) -> list[dict[str, Any]]:
        """Faults not yet consumed, oldest first."""
        with self._lock:
            return [f.as_dict() for f in self._faults]

    def fail_job(self, job: str, message: str = _INJECTED_FAILURE) -> dict[str, Any]:
        """Make a job FAILED right now (errorMessage / error.code 13); return its JSON.

        `job` is an ml jobId, a Vertex numeric id, or a full resource name. KeyError if unknown,
        ValueError if ambiguous or already finished.
        """
        with self._lock:
            found = self._resolve(job)
            now = self.now()
            self._settle(found, now)
            if found.state in _ML_FINISHED | _VX_FINISHED:
                raise ValueError(f"job {found.name} already finished ({found.state})")
            self._finish(found, "FAILED" if found.api == "ml" else "JOB_STATE_FAILED", now, message, 13)
            return self._render(found)

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """The request log (oldest first), optionally only calls of one method name.

        Entries are {"method", "http", "path", "query"}; headers and bodies are never recorded, and
        credential-like query parameters (key, access_token) are redacted.
        """
        with self._lock:
            return [copy.deepcopy(r) for r in self._log if method is None or r["method"] == method]

    def jobs(self) -> list[dict[str, Any]]:
        """Every job of both APIs, oldest first, as {"api", "name", "job"} (job = the API's JSON)."""
        with self._lock:
            now = self.now()
            out = []
            for job in self._jobs:
                self._settle(job, now)
                out.append({"api": job.api, "name": job.name, "job": self._render(job)})
            return out

    # -------------------------------------------------------------------- used by the HTTP server

    def record(self, method: str | None, http_method: str, path: str, query: dict[str, Any]) -> None:
        """Append one API request to the log (never headers)."""
        safe = {k: ("<redacted>" if k.lower() in _REDACTED_QUERY else v) for k, v in query.items()}
        with self._lock:
            self._log.append({"method": method, "http": http_method, "path": path, "query": safe})

    def take_faults(self, method: str) -> FaultPlan:
        """Consume the faults that apply to one call of `method` (first delay, first error/drop)."""
        plan = FaultPlan()
        with self._lock:
            took_delay = took_action = False
            for fault in list(self._faults):
                if fault.method is not None and fault.method != method:
                    continue
                if fault.kind == "delay" and not took_delay:
                    took_delay = True
                    plan.delay = fault.seconds
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

    # ------------------------------------------------------------------------------- ml v1 API

    def get_config(self, project: str) -> dict[str, Any]:
        """projects.getConfig: the service accounts AI Platform uses in this project."""
        number = project_number(project)
        return {
            "serviceAccount": f"service-{number}@cloud-ml.google.com.iam.gserviceaccount.com",
            "serviceAccountProject": number,
            "config": {"tpuServiceAccount": f"service-{number}@cloud-tpu.iam.gserviceaccount.com"},
        }

    def ml_create(self, project: str, body: Any) -> dict[str, Any]:
        """projects.jobs.create: validate like the real API, store, answer the QUEUED job."""
        body = self._validated(body, "ml", "GoogleCloudMlV1__Job")
        output_only = discovery.output_only_fields("ml", "GoogleCloudMlV1__Job") | _ML_EXTRA_OUTPUT
        user = {k: copy.deepcopy(v) for k, v in body.items() if k not in output_only and v is not None}
        job_id = user.get("jobId")
        if not job_id:
            raise _invalid("Field: job_id Error: A job id must be specified.", "job_id")
        if not _JOB_ID_RE.match(job_id):
            raise _invalid(
                "Field: job_id Error: A name should start with a letter and contain only letters, numbers "
                "and underscores (at most 128 characters).",
                "job_id",
            )
        _check_labels(user.get("labels"), "labels")
        training = user.get("trainingInput")
        if not isinstance(training, dict):
            raise _invalid(
                "Field: training_input Error: A training input must be specified.", "training_input"
            )
        _check_training_input(training)
        with self._lock:
            if any(j.api == "ml" and j.project == project and j.job_id == job_id for j in self._jobs):
                raise ApiError(
                    409,
                    f"Resource in projects [{project}] is the subject of a conflict: Field: job.job_id "
                    "Error: A job with this id already exists.",
                    "ALREADY_EXISTS",
                )
            job = self._new_job("ml", project, "", job_id, user)
            return self._render(job)

    def ml_get(self, project: str, job_id: str) -> dict[str, Any]:
        """projects.jobs.get."""
        with self._lock:
            return self._render(self._ml_job(project, job_id))

    def ml_list(
        self,
        project: str,
        page_size: int | None = None,
        page_token: str | None = None,
        filter: str | None = None,
    ) -> dict[str, Any]:
        """projects.jobs.list: newest first; filter on labels.KEY, state, jobId (=, !=, :, AND)."""
        with self._lock:
            jobs = [j for j in self._jobs if j.api == "ml" and _same_project(project, j.project)]
            page, token = self._page(jobs, page_size, page_token, filter, 20, 100, _ml_field)
            result: dict[str, Any] = {}
            if page:
                result["jobs"] = page
            if token:
                result["nextPageToken"] = token
            return result

    def ml_cancel(self, project: str, job_id: str) -> dict[str, Any]:
        """projects.jobs.cancel: {} ; a finished job answers 400 FAILED_PRECONDITION."""
        with self._lock:
            job = self._ml_job(project, job_id)
            self._cancel(job)
            return {}

    def ml_patch(self, project: str, job_id: str, update_mask: str | None, body: Any) -> dict[str, Any]:
        """projects.jobs.patch: only `labels` (and `etag`) may be in the mask; stale etag -> 409 ABORTED."""
        body = self._validated(body, "ml", "GoogleCloudMlV1__Job")
        paths = [p.strip() for p in (update_mask or "").split(",") if p.strip()]
        if not paths:
            raise _invalid("Field: update_mask Error: An update mask must be specified.", "update_mask")
        unsupported = [p for p in paths if p not in ("labels", "etag")]
        if unsupported:
            raise _invalid(
                f"Field: update_mask Error: Unsupported update mask path(s) {', '.join(unsupported)}; "
                "currently the only supported update masks are labels and etag.",
                "update_mask",
            )
        with self._lock:
            job = self._ml_job(project, job_id)
            etag = body.get("etag")
            if etag is not None and etag != _etag(job):
                raise ApiError(
                    409,
                    f"etag mismatch: job {job.name} has been modified since the etag was read.",
                    "ABORTED",
                )
            if "labels" in paths:
                labels = body.get("labels") or {}
                _check_labels(labels, "labels")
                if labels != job.labels:
                    if labels:
                        job.body["labels"] = copy.deepcopy(labels)
                    else:
                        job.body.pop("labels", None)
                    job.revision += 1
                    job.updated = self.now()
            return self._render(job)

    # ------------------------------------------------------------------------- Vertex AI v1 API

    def vertex_create(self, project: str, location: str, body: Any) -> dict[str, Any]:
        """projects.locations.customJobs.create: server-assigned id, QUEUED job answered."""
        body = self._validated(body, "aiplatform", "GoogleCloudAiplatformV1CustomJob")
        output_only = discovery.output_only_fields("aiplatform", "GoogleCloudAiplatformV1CustomJob")
        user = {k: copy.deepcopy(v) for k, v in body.items() if k not in output_only and v is not None}
        display_name = user.get("displayName")
        if not display_name:
            raise _invalid("Field: custom_job.display_name Error: Required field is not set.",
                           "custom_job.display_name")
        if len(display_name) > 128:
            raise _invalid("Field: custom_job.display_name Error: Display name must be at most 128 "
                           "characters.", "custom_job.display_name")
        _check_labels(user.get("labels"), "custom_job.labels")
        _check_job_spec(user.get("jobSpec"))
        with self._lock:
            job = self._new_job("aiplatform", project, location, str(next(self._vertex_ids)), user)
            return self._render(job)

    def vertex_get(self, project: str, location: str, job_id: str) -> dict[str, Any]:
        """projects.locations.customJobs.get."""
        with self._lock:
            return self._render(self._vertex_job(project, location, job_id))

    def vertex_list(
        self,
        project: str,
        location: str,
        page_size: int | None = None,
        page_token: str | None = None,
        filter: str | None = None,
    ) -> dict[str, Any]:
        """projects.locations.customJobs.list: newest first; filter on labels.KEY, display_name, state."""
        with self._lock:
            jobs = [
                j
                for j in self._jobs
                if j.api == "aiplatform" and j.location == location and _same_project(project, j.project)
            ]
            page, token = self._page(jobs, page_size, page_token, filter, 100, 1000, _vertex_field)
            result: dict[str, Any] = {}
            if page:
                result["customJobs"] = page
            if token:
                result["nextPageToken"] = token
            return result

    def vertex_cancel(self, project: str, location: str, job_id: str) -> dict[str, Any]:
        """projects.locations.customJobs.cancel: {} ; a finished job answers 400 FAILED_PRECONDITION."""
        with self._lock:
            self._cancel(self._vertex_job(project, location, job_id))
            return {}

    def vertex_delete(self, project: str, location: str, job_id: str) -> dict[str, Any]:
        """projects.locations.customJobs.delete: a done Operation; unfinished jobs must be cancelled first."""
        with self._lock:
            job = self._vertex_job(project, location, job_id)
            if job.state not in _VX_FINISHED:
                raise ApiError(
                    400,
                    f"CustomJob {job.name} is in state {job.state} and cannot be deleted: it must be "
                    "cancelled first (only finished jobs can be deleted).",
                    "FAILED_PRECONDITION",
                )
            self._jobs.remove(job)
            now = _rfc3339(self.now())
            name = f"projects/{project}/locations/{location}/operations/{next(self._vertex_ids)}"
            operation = {
                "name": name,
                "metadata": {
                    "@type": "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata",
                    "genericMetadata": {"createTime": now, "updateTime": now},
                },
                "done": True,
                "response": {"@type": "type.googleapis.com/google.protobuf.Empty"},
            }
            self._operations[name] = operation
            return copy.deepcopy(operation)

    def operation_get(self, project: str, location: str, operation_id: str) -> dict[str, Any]:
        """projects.locations.operations.get (the operations returned by delete)."""
        with self._lock:
            for name, operation in self._operations.items():
                _, p, _, loc, _, op_id = name.split("/")
                if op_id == operation_id and loc == location and _same_project(project, p):
                    return copy.deepcopy(operation)
        raise ApiError(404, f"Operation projects/{project}/locations/{location}/operations/{operation_id} "
                       "not found.", "NOT_FOUND")

    # -------------------------------------------------------------------------------- internals

    def _add_fault(self, fault: _Fault) -> None:
        if fault.count < 1:
            raise ValueError("count must be >= 1")
        if fault.method is not None and fault.method not in API_METHODS:
            raise ValueError(f"unknown method {fault.method!r}; expected one of {sorted(API_METHODS)}")
        with self._lock:
            self._faults.append(fault)

    def _validated(self, body: Any, api: str, schema: str) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise _invalid("Invalid JSON payload received. Expected a JSON object.")
        problems = discovery.validate_body(api, schema, body, strict_int64=self.strict_int64)
        if problems:
            raise ApiError(
                400,
                "Invalid JSON payload received. " + "; ".join(problems),
                "INVALID_ARGUMENT",
                [(p.partition(": ")[0], p) for p in problems],
            )
        return body

    def _new_job(self, api: str, project: str, location: str, job_id: str, user: dict[str, Any]) -> _Job:
        now = self.now()
        phases = _ML_PHASES if api == "ml" else _VX_PHASES
        job = _Job(api, project, location, job_id, user, next(self._seq), now, phases[0], now, updated=now)
        self._jobs.append(job)
        self._settle(job, now)
        return job

    def _resolve(self, ref: str) -> _Job:
        matches = [j for j in self._jobs if ref in (j.name, j.job_id)]
        if not matches:
            raise KeyError(f"no job {ref!r}")
        if len(matches) > 1:
            raise ValueError(f"job reference {ref!r} is ambiguous; use the full name")
        return matches[0]

    def _ml_job(self, project: str, job_id: str) -> _Job:
        for job in self._jobs:
            if job.api == "ml" and job.job_id == job_id and _same_project(project, job.project):
                self._settle(job, self.now())
                return job
        raise ApiError(
            404, f"Field: name Error: Job projects/{project}/jobs/{job_id} not found.", "NOT_FOUND"
        )

    def _vertex_job(self, project: str, location: str, job_id: str) -> _Job:
        for job in self._jobs:
            if (
                job.api == "aiplatform"
                and job.job_id == job_id
                and job.location == location
                and _same_project(project, job.project)
            ):
                self._settle(job, self.now())
                return job
        raise ApiError(
            404,
            f"CustomJob projects/{project}/locations/{location}/customJobs/{job_id} not found.",
            "NOT_FOUND",
        )

    def _settle(self, job: _Job, now: float) -> None:
        """Apply every phase change due by `now` (lazy clock)."""
        phases = _ML_PHASES if job.api == "ml" else _VX_PHASES
        cancelling = "CANCELLING" if job.api == "ml" else "JOB_STATE_CANCELLING"
        while True:
            if job.state in phases:
                due = job.entered + self._phase_seconds
                if now < due:
                    return
                index = phases.index(job.state)
                if index + 1 < len(phases):
                    self._transition(job, phases[index + 1], due)
                    if job.state == phases[-1]:
                        job.start = due
                elif job.labels.get(FAIL_LABEL) == "failed":
                    message = _ML_FAIL_MESSAGE if job.api == "ml" else _VX_FAIL_MESSAGE
                    self._finish(job, "FAILED" if job.api == "ml" else "JOB_STATE_FAILED", due, message, 13)
                else:
                    self._finish(job, "SUCCEEDED" if job.api == "ml" else "JOB_STATE_SUCCEEDED", due, None, 0)
            elif job.state == cancelling:
                due = job.entered + self.cancel_seconds
                if now < due:
                    return
                message = "Job cancelled by the user." if job.api == "ml" else "CANCELED"
                self._finish(job, "CANCELLED" if job.api == "ml" else "JOB_STATE_CANCELLED", due, message, 1)
            else:
                return

    def _transition(self, job: _Job, state: str, when: float) -> None:
        job.state = state
        job.entered = when
        job.updated = when
        job.revision += 1

    def _finish(self, job: _Job, state: str, when: float, message: str | None, code: int) -> None:
        self._transition(job, state, when)
        job.end = when
        job.error_message = message
        job.error_code = code

    def _cancel(self, job: _Job) -> None:
        finished = _ML_FINISHED if job.api == "ml" else _VX_FINISHED
        if job.state in finished:
            raise ApiError(
                400,
                f"Job {job.name} is in state {job.state} and cannot be cancelled.",
                "FAILED_PRECONDITION",
            )
        if job.state in ("CANCELLING", "JOB_STATE_CANCELLING"):
            return
        now = self.now()
        self._transition(job, "CANCELLING" if job.api == "ml" else "JOB_STATE_CANCELLING", now)
        self._settle(job, now)

    def _page(
        self,
        jobs: list[_Job],
        page_size: int | None,
        page_token: str | None,
        filter_text: str | None,
        default_size: int,
        max_size: int,
        field_of: Callable[[_Job, str], str | None],
    ) -> tuple[list[dict[str, Any]], str | None]:
        if page_size is not None and page_size < 0:
            raise _invalid("Field: page_size Error: The page size must not be negative.", "page_size")
        size = min(page_size or default_size, max_size)
        terms = _parse_filter(filter_text) if filter_text else []
        now = self.now()
        for job in jobs:
            self._settle(job, now)
        selected = [j for j in jobs if all(_term_matches(t, field_of(j, t.field)) for t in terms)]
        selected.sort(key=lambda j: j.seq, reverse=True)
        if page_token:
            after = _decode_token(page_token)
            selected = [j for j in selected if j.seq < after]
        page = selected[:size]
        token = _encode_token(page[-1].seq) if len(selected) > size else None
        return [self._render(j) for j in page], token

    def _render(self, job: _Job) -> dict[str, Any]:
        """The job's JSON as the real API answers it (user fields echoed as received)."""
        out: dict[str, Any]
        if job.api == "ml":
            out = copy.deepcopy(job.body)
            out["state"] = job.state
            out["createTime"] = _rfc3339(job.created)
            if job.start is not None:
                out["startTime"] = _rfc3339(job.start)
            if job.end is not None:
                out["endTime"] = _rfc3339(job.end)
            if job.state in ("FAILED", "CANCELLED") and job.error_message:
                out["errorMessage"] = job.error_message
            if job.state == "SUCCEEDED":
                out["trainingOutput"] = {"consumedMLUnits": 1.5}
            out["etag"] = _etag(job)
            return out
        out = {"name": job.name}
        out.update(copy.deepcopy(job.body))
        out["state"] = job.state
        out["createTime"] = _rfc3339(job.created)
        out["updateTime"] = _rfc3339(job.updated)
        if job.start is not None:
            out["startTime"] = _rfc3339(job.start)
        if job.end is not None:
            out["endTime"] = _rfc3339(job.end)
        if job.state in ("JOB_STATE_FAILED", "JOB_STATE_CANCELLED") and job.error_message:
            out["error"] = {"code": job.error_code, "message": job.error_message}
        return out


def _etag(job: _Job) -> str:
    """A base64 etag that changes with every change of the job (state, labels)."""
    digest = hashlib.sha256(f"{job.name}#{job.seq}#{job.revision}".encode()).digest()
    return base64.b64encode(digest[:8]).decode("ascii")


def _same_project(given: str, stored: str) -> bool:
    """A path may name the project by id or by (fake) number, as with the real APIs."""
    return given == stored or given == project_number(stored)


def _ml_field(job: _Job, name: str) -> str | None:
    if name.startswith("labels."):
        return job.labels.get(name[len("labels."):])
    if name == "state":
        return job.state
    if name in ("jobId", "job_id"):
        return job.job_id
    raise _invalid(f"Unsupported filter field {name!r} (supported: labels.KEY, state, jobId).", "filter")


def _vertex_field(job: _Job, name: str) -> str | None:
    if name.startswith("labels."):
        return job.labels.get(name[len("labels."):])
    if name == "state":
        return job.state
    if name in ("display_name", "displayName"):
        value = job.body.get("displayName")
        return value if isinstance(value, str) else None
    raise _invalid(
        f"Unsupported filter field {name!r} (supported: labels.KEY, state, display_name).", "filter"
    )


def _check_training_input(training: dict[str, Any]) -> None:
    """The ml create checks beyond JSON shape that the project relies on."""
    if not training.get("region"):
        raise _invalid(
            "Field: training_input.region Error: A region must be specified.", "training_input.region"
        )
    if training.get("scaleTier") == "CUSTOM" and not training.get("masterType"):
        raise _invalid(
            "Field: training_input.master_type Error: A master type must be specified when the scale tier "
            "is CUSTOM.",
            "training_input.master_type",
        )
    master = training.get("masterConfig")
    has_image = isinstance(master, dict) and bool(master.get("imageUri"))
    if not has_image:
        if not training.get("pythonModule"):
            raise _invalid(
                "Field: training_input.python_module Error: A python module (with package URIs) or "
                "masterConfig.imageUri must be specified.",
                "training_input.python_module",
            )
        if not training.get("packageUris"):
            raise _invalid(
                "Field: training_input.package_uris Error: At least one package URI must be specified.",
                "training_input.package_uris",
            )
    for role in ("worker", "parameterServer", "evaluator"):
        count = _int_value(training.get(f"{role}Count")) or 0
        if count < 0:
            raise _invalid(f"Field: training_input.{role}_count Error: The count must not be negative.")
        if count > 0 and training.get("scaleTier") == "CUSTOM" and not training.get(f"{role}Type"):
            snake = re.sub(r"([A-Z])", r"_\1", role).lower()
            raise _invalid(
                f"Field: training_input.{snake}_type Error: A {snake} type must be specified when "
                f"{snake}_count is positive.",
                f"training_input.{snake}_type",
            )


def _check_job_spec(spec: Any) -> None:
    """Vertex CustomJobSpec checks: non-empty worker pools with machine, replicas and code."""
    pools = spec.get("workerPoolSpecs") if isinstance(spec, dict) else None
    if not pools:
        raise _invalid(
            "Field: custom_job.job_spec.worker_pool_specs Error: At least one worker pool spec is required.",
            "custom_job.job_spec.worker_pool_specs",
        )
    for index, pool in enumerate(pools):
        where = f"custom_job.job_spec.worker_pool_specs[{index}]"
        if not pool:
            if index == 0:
                raise _invalid(f"Field: {where} Error: The first worker pool spec must not be empty.", where)
            continue
        machine = pool.get("machineSpec") or {}
        if not machine.get("machineType"):
            raise _invalid(f"Field: {where}.machine_spec.machine_type Error: Required field is not set.",
                           f"{where}.machine_spec.machine_type")
        replicas = _int_value(pool.get("replicaCount"))
        if replicas is None or replicas < 1:
            raise _invalid(f"Field: {where}.replica_count Error: The replica count must be at least 1.",
                           f"{where}.replica_count")
        if index == 0 and replicas != 1:
            raise _invalid(f"Field: {where}.replica_count Error: The first worker pool must have exactly "
                           "one replica.", f"{where}.replica_count")
        python, container = pool.get("pythonPackageSpec"), pool.get("containerSpec")
        if bool(python) == bool(container):
            raise _invalid(
                f"Field: {where} Error: Exactly one of python_package_spec or container_spec must be set.",
                where,
            )
        if python:
            for key, snake in (("executorImageUri", "executor_image_uri"), ("packageUris", "package_uris"),
                               ("pythonModule", "python_module")):
                if not python.get(key):
                    raise _invalid(f"Field: {where}.python_package_spec.{snake} Error: Required field is "
                                   "not set.", f"{where}.python_package_spec.{snake}")
        elif not container.get("imageUri"):
            raise _invalid(f"Field: {where}.container_spec.image_uri Error: Required field is not set.",
                           f"{where}.container_spec.image_uri")


# ------------------------------------------------------------------------------------ HTTP layer

_P = r"^/v1/projects/(?P<p>[^/:]+)"
_L = _P + r"/locations/(?P<l>[^/:]+)"
_ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    ("GET", re.compile(_P + r":getConfig$"), "projects.getConfig"),
    ("POST", re.compile(_P + r"/jobs$"), "jobs.create"),
    ("GET", re.compile(_P + r"/jobs$"), "jobs.list"),
    ("GET", re.compile(_P + r"/jobs/(?P<j>[^/:]+)$"), "jobs.get"),
    ("PATCH", re.compile(_P + r"/jobs/(?P<j>[^/:]+)$"), "jobs.patch"),
    ("POST", re.compile(_P + r"/jobs/(?P<j>[^/:]+):cancel$"), "jobs.cancel"),
    ("POST", re.compile(_L + r"/customJobs$"), "customJobs.create"),
    ("GET", re.compile(_L + r"/customJobs$"), "customJobs.list"),
    ("GET", re.compile(_L + r"/customJobs/(?P<j>[^/:]+)$"), "customJobs.get"),
    ("DELETE", re.compile(_L + r"/customJobs/(?P<j>[^/:]+)$"), "customJobs.delete"),
    ("POST", re.compile(_L + r"/customJobs/(?P<j>[^/:]+):cancel$"), "customJobs.cancel"),
    ("GET", re.compile(_L + r"/operations/(?P<o>[^/:]+)$"), "operations.get"),
]


def _route(http_method: str, path: str) -> tuple[str, dict[str, str]] | None:
    for verb, pattern, name in _ROUTES:
        match = pattern.match(path)
        if match and verb == http_method:
            return name, match.groupdict()
    return None


def _page_size(query: dict[str, Any]) -> int | None:
    raw = query.get("pageSize")
    if raw in (None, ""):
        return None
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise _invalid(f"Invalid value at 'page_size' (TYPE_INT32), \"{raw}\"", "page_size") from None


def _call(state: EmulatorState, method: str, p: dict[str, str], query: dict[str, Any], body: Any) -> Any:
    """Run one API method against the state; returns the JSON answer or raises ApiError."""
    filt = query.get("filter") or None
    token = query.get("pageToken") or None
    if method == "projects.getConfig":
        return state.get_config(p["p"])
    if method == "jobs.create":
        return state.ml_create(p["p"], body)
    if method == "jobs.list":
        return state.ml_list(p["p"], _page_size(query), token, filt)
    if method == "jobs.get":
        return state.ml_get(p["p"], p["j"])
    if method == "jobs.patch":
        return state.ml_patch(p["p"], p["j"], query.get("updateMask"), body)
    if method == "jobs.cancel":
        return state.ml_cancel(p["p"], p["j"])
    if method == "customJobs.create":
        return state.vertex_create(p["p"], p["l"], body)
    if method == "customJobs.list":
        return state.vertex_list(p["p"], p["l"], _page_size(query), token, filt)
    if method == "customJobs.get":
        return state.vertex_get(p["p"], p["l"], p["j"])
    if method == "customJobs.cancel":
        return state.vertex_cancel(p["p"], p["l"], p["j"])
    if method == "customJobs.delete":
        return state.vertex_delete(p["p"], p["l"], p["j"])
    if method == "operations.get":
        return state.operation_get(p["p"], p["l"], p["o"])
    raise ApiError(501, f"Method {method} is not implemented by the emulator.")  # pragma: no cover


class _Server(ThreadingHTTPServer):
    """ThreadingHTTPServer carrying the emulator state; handler threads are daemons."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], state: EmulatorState, verbose: bool) -> None:
        super().__init__(address, _Handler)
        self.state = state
        self.verbose = verbose

    def handle_error(self, request: Any, client_address: Any) -> None:
        """No traceback on stderr when a client hangs up mid-answer (e.g. a client-side timeout)."""
        if self.verbose:
            print(f"connection error: {sys.exc_info()[1]!r}", file=sys.stderr, flush=True)


class _Handler(BaseHTTPRequestHandler):
    """One HTTP/1.0 exchange (connection closed after each answer); quiet unless --verbose."""

    server: _Server
    server_version = "gcp-training-jobs-emulator"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence http.server's per-request stderr lines (they would include client details)."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._dispatch()

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch()

    def do_PATCH(self) -> None:  # noqa: N802
        self._dispatch()

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch()

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch()

    def _dispatch(self) -> None:
        try:
            split = urlsplit(self.path)
            path = unquote(split.path)
            parsed = parse_qs(split.query, keep_blank_values=True)
            query = {k: (v[0] if len(v) == 1 else v) for k, v in parsed.items()}
            raw = self._read_body()
            if self.server.verbose:
                print(f"{self.command} {path}", file=sys.stderr, flush=True)
            if path == "/_emulator" or path.startswith("/_emulator/"):
                self._send(200, self._control(path, query, raw))
            else:
                self._api(path, query, raw)
        except ApiError as error:
            self._send(error.code, error.payload())
        except Exception as error:  # noqa: BLE001 - an emulator bug must still answer in Google's shape
            failure = ApiError(500, f"Emulator internal error: {type(error).__name__}: {error}")
            self._send(500, failure.payload())

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _api(self, path: str, query: dict[str, Any], raw: bytes) -> None:
        state = self.server.state
        found = _route(self.command, path)
        if found is None:
            state.record(None, self.command, path, query)
            raise ApiError(404, f"Method not found: {self.command} {path}", "NOT_FOUND")
        method, params = found
        state.record(method, self.command, path, query)
        plan = state.take_faults(method)
        if plan.delay:
            time.sleep(plan.delay)
        if plan.error is not None:
            raise plan.error
        body = _parse_json(raw) if self.command in ("POST", "PATCH", "PUT") else None
        try:
            result = _call(state, method, params, query, body)
        except ApiError:
            if plan.drop:
                self.close_connection = True
                return
            raise
        if plan.drop:
            # Executed, answer lost: close without a status line (client: RemoteDisconnected).
            self.close_connection = True
            return
        self._send(200, result)

    def _control(self, path: str, query: dict[str, Any], raw: bytes) -> Any:
        state = self.server.state
        verb = self.command
        if verb == "GET" and path == "/_emulator/health":
            return {"ok": True}
        if verb == "GET" and path == "/_emulator/requests":
            return state.requests(query.get("method") or None)
        if verb == "GET" and path == "/_emulator/jobs":
            return state.jobs()
        if verb == "GET" and path == "/_emulator/faults":
            return state.pending_faults()
        if verb == "POST" and path in _CONTROL_POSTS:
            body = _parse_json(raw)
            if not isinstance(body, dict):
                raise _invalid("Expected a JSON object.")
            try:
                return _control_post(state, path, body)
            except KeyError as error:
                raise ApiError(404, str(error.args[0] if error.args else error), "NOT_FOUND") from None
            except (ValueError, TypeError) as error:
                raise _invalid(str(error)) from None
        raise ApiError(404, f"Unknown emulator control endpoint: {verb} {path}", "NOT_FOUND")

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout): nothing to do
            self.close_connection = True


def _control_post(state: EmulatorState, path: str, body: dict[str, Any]) -> Any:
    """POST /_emulator/{reset,faults,advance,phase,fail}."""
    if path == "/_emulator/reset":
        state.reset()
        return {}
    if path == "/_emulator/faults":
        method = body.get("method")
        count = int(body.get("count", 1))
        if body.get("drop"):
            state.drop_next_response(method, count)
        elif body.get("delay") is not None:
            state.inject_delay(float(body["delay"]), count, method)
        else:
            state.inject_faults(int(body.get("status", 503)), count, method, message=body.get("message"))
        return state.pending_faults()
    if path == "/_emulator/advance":
        return {"now": _rfc3339(state.advance(float(body.get("seconds", 0))))}
    if path == "/_emulator/phase":
        state.set_phase_seconds(float(body["seconds"]))
        return {"seconds": state.phase_seconds}
    job = body.get("job")
    if not isinstance(job, str) or not job:
        raise ValueError('"job" (a jobId, a Vertex id or a full name) is required')
    message = body.get("message") or _INJECTED_FAILURE
    return state.fail_job(job, str(message))


def _parse_json(raw: bytes) -> Any:
    if not raw.strip():
        return {}
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _invalid(f"Invalid JSON payload received. {error}") from None


class Emulator:
    """The HTTP server around an EmulatorState, on 127.0.0.1 in a daemon thread.

    `with Emulator(port=0) as emu:` starts it on a free port; `emu.url` is the api_endpoint to give
    googleapiclient, `emu.state` controls it in-process.
    """

    def __init__(
        self,
        port: int = 0,
        phase_seconds: float = 2.0,
        *,
        host: str = "127.0.0.1",
        cancel_seconds: float = 0.0,
        strict_int64: bool = False,
        verbose: bool = False,
        state: EmulatorState | None = None,
    ) -> None:
        self.state = state or EmulatorState(
            phase_seconds, cancel_seconds=cancel_seconds, strict_int64=strict_int64
        )
        self._host = host
        self._port = port
        self._verbose = verbose
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port (the real one once started with port=0)."""
        return self._server.server_address[1] if self._server else self._port

    @property
    def url(self) -> str:
        """Base URL for client_options={"api_endpoint": url}, e.g. "http://127.0.0.1:8085/"."""
        return f"http://{self._host}:{self.port}/"

    def start(self) -> Emulator:
        """Bind and serve in a daemon thread; returns self."""
        if self._server is not None:
            return self
        self._server = _Server((self._host, self._port), self.state, self._verbose)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="emulator", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._port = server.server_address[1]

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """CLI: serve on 127.0.0.1 until SIGINT/SIGTERM, after printing `emulator listening on URL`."""
    description = __doc__.splitlines()[0] if __doc__ else None
    parser = argparse.ArgumentParser(prog="emulator", description=description)
    parser.add_argument("--port", type=int, default=8085, help="TCP port (0: any free port; default 8085)")
    parser.add_argument("--phase-seconds", type=float, default=2.0, help="duration of each job phase")
    parser.add_argument("--cancel-seconds", type=float, default=0.0, help="how long CANCELLING lasts")
    parser.add_argument("--strict-int64", action="store_true", help="refuse int64 fields sent as numbers")
    parser.add_argument("--verbose", action="store_true", help="print the verb and path of every request")
    args = parser.parse_args(argv)
    if args.phase_seconds < 0 or args.cancel_seconds < 0:
        parser.error("durations must be >= 0")

    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    previous: dict[signal.Signals, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):  # not the main thread: the caller must stop us
            previous[signum] = signal.signal(signum, on_signal)
    emulator = Emulator(
        args.port,
        args.phase_seconds,
        cancel_seconds=args.cancel_seconds,
        strict_int64=args.strict_int64,
        verbose=args.verbose,
    )
    try:
        emulator.start()
        print(f"emulator listening on {emulator.url}", flush=True)
        while not stopping.wait(0.2):
            pass
    finally:
        emulator.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
