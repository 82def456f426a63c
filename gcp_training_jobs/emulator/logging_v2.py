"""The Cloud Logging v2 surface: `entries.list` (POST /v2/entries:list) over the log entries of the emulator's jobs,
so a client reads a job's log with Google's own client (logging v2, the discovery document google-api-python-client
ships) as it would from Cloud Logging.

Entries are written by the jobs as they move on the emulator's clock, settled when read like the jobs themselves
(a job's log is a function of its record: created, started, ended, its state, its error), so reading never moves
a job and the same read gives the same entries:
- the service (task `service`, textPayload): the job waiting to be provisioned (at create), running (at start),
  and how it ended (succeeded, cancelled, or its error, severity ERROR);
- each replica's trainer (task `workerpool{i}-{r}` on Vertex AI, `master-replica-0`, `worker-replica-{r}`, ... on
  AI Platform Training; jsonPayload.message), from the job's start: what it runs, then a step line every
  STEP_SECONDS of emulated time while it runs (at most MAX_STEPS per replica);
- a replica whose code fails (the job ends FAILED after it started, its error saying a replica "exited with a
  non-zero status", as Vertex AI and AI Platform Training word it): a Python traceback on that replica, one entry
  per line at the job's end, severity ERROR, before the service's error. A job that fails for Google's reasons (a
  preemption, a stockout, an internal fault) logs no traceback: only the service's error.

Every entry is an `ml_job` resource labelled with the job's id (ml v1's jobId, Vertex AI's number), its project
and the task, as both APIs log (what `gcloud ai custom-jobs stream-logs` filters on). List requests: the body is
checked against ListLogEntriesRequest; `resourceNames` (projects/P) is required; `orderBy` "timestamp asc" (the
default) or "timestamp desc" (ties by insertId); `pageSize` default 50, at most 1000; `filter` in Logging's query
language (logging_filter). Hyperparameter tuning jobs log like a custom job of their trial spec.
"""

from __future__ import annotations

import base64
import hashlib
import re
from datetime import UTC, datetime
from typing import Any, Final

from gcp_training_jobs.emulator.errors import invalid
from gcp_training_jobs.emulator.jobs import rfc3339, same_project
from gcp_training_jobs.emulator.logging_filter import compile_filter
from gcp_training_jobs.emulator.routing import Request, Route
from gcp_training_jobs.emulator.state import EmulatorState
from gcp_training_jobs.emulator.validation import int_value, validated

#: A trainer writes a step line every STEP_SECONDS of emulated time while its job runs, at most MAX_STEPS.
STEP_SECONDS: Final = 10.0
MAX_STEPS: Final = 100
DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE = 50, 1000
ORDERS: Final = ("timestamp asc", "timestamp desc")
#: The traceback a failing replica prints (its last line names the emulator, so no one mistakes it for theirs).
TRACEBACK: Final = (
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main',
    '  File "/root/trainer/task.py", line 88, in main',
    "    loss = train_step(model, batch)",
    '  File "/root/trainer/task.py", line 41, in train_step',
    "    raise RuntimeError(message)",
    "RuntimeError: the trainer failed (a failure simulated by the emulator)",
)
_ML_ROLES: Final = (("master", None), ("worker", "workerCount"), ("ps", "parameterServerCount"),
                    ("evaluator", "evaluatorCount"))
#: A replica's exit in a job's error: Vertex AI's `workerpool0-0`, AI Platform Training's `master 0`.
_EXITED = re.compile(r"The replica (?P<replica>[a-z]+\d*-\d+|[a-z]+ \d+) exited with a non-zero status")


def _exited(api: str, message: str, tasks: list[str]) -> str | None:
    """The task of the replica whose exit failed the job (None: it failed for another reason)."""
    match = _EXITED.search(message)
    if match is None or not tasks:
        return None
    replica = match.group("replica")
    task = replica.replace(" ", "-replica-") if api == "ml" else replica
    return task if task in tasks else tasks[0]


def _epoch_seconds(text: Any) -> float | None:
    """An RFC 3339 time as POSIX seconds; None when unset."""
    if not isinstance(text, str) or not text:
        return None
    return datetime.fromisoformat(text).timestamp()


def _tasks(api: str, job: dict[str, Any]) -> list[str]:
    """The replicas of a job, by the task names its log uses."""
    if api == "ml":
        ti = job.get("trainingInput") or {}
        if ti.get("scaleTier", "BASIC") != "CUSTOM":
            return ["master-replica-0"]
        return [f"{role}-replica-{r}" for role, count in _ML_ROLES
                for r in range(1 if count is None else max(0, int_value(ti.get(count)) or 0))]
    spec = job.get("jobSpec") or job.get("trialJobSpec") or {}
    tasks = []
    for i, pool in enumerate(spec.get("workerPoolSpecs") or []):
        if isinstance(pool, dict) and pool.get("machineSpec"):
            tasks += [f"workerpool{i}-{r}" for r in range(max(1, int_value(pool.get("replicaCount")) or 1))]
    return tasks


def _program(api: str, job: dict[str, Any]) -> str:
    """What the primary replica runs, as its first line says it."""
    if api == "ml":
        ti = job.get("trainingInput") or {}
        code = (ti.get("masterConfig") or {}).get("imageUri") or ti.get("pythonModule") or "the trainer"
        args = ti.get("args") or (ti.get("masterConfig") or {}).get("containerArgs") or []
    else:
        pools = (job.get("jobSpec") or job.get("trialJobSpec") or {}).get("workerPoolSpecs") or [{}]
        first = pools[0] if isinstance(pools[0], dict) else {}
        spec = first.get("containerSpec") or first.get("pythonPackageSpec") or {}
        code = spec.get("imageUri") or spec.get("pythonModule") or "the trainer"
        args = spec.get("args") or []
    return " ".join([str(code), *(str(a) for a in args)])


def _entry(project: str, job_id: str, task: str, when: float, severity: str, message: str, insert_id: str,
           *, text: bool) -> dict[str, Any]:
    stamp = rfc3339(when)
    entry: dict[str, Any] = {
        "insertId": insert_id,
        "logName": f"projects/{project}/logs/{task}",
        "resource": {"type": "ml_job", "labels": {"job_id": job_id, "project_id": project, "task_name": task}},
        "timestamp": stamp, "receiveTimestamp": stamp, "severity": severity,
    }
    if text:
        entry["textPayload"] = message
    else:
        entry["jsonPayload"] = {"message": message}
    return entry


def job_entries(api: str, name: str, job: dict[str, Any], now: float) -> list[dict[str, Any]]:
    """The entries a job has written by `now` (emulated epoch seconds), oldest first."""
    project = name.split("/")[1]
    job_id = str(job.get("jobId") or name.rsplit("/", 1)[-1])
    state = str(job.get("state") or "").removeprefix("JOB_STATE_")
    created, start, end = (_epoch_seconds(job.get(k)) for k in ("createTime", "startTime", "endTime"))
    found: list[dict[str, Any]] = []

    def add(task: str, when: float, severity: str, message: str, *, text: bool = False) -> None:
        found.append(_entry(project, job_id, task, when, severity, message, f"{job_id}-{len(found):06d}", text=text))

    if created is not None:
        add("service", created, "INFO", "Waiting for job to be provisioned.", text=True)
    tasks = _tasks(api, job)
    if start is not None:
        add("service", start, "INFO", "Job is running.", text=True)
        until = min(end if end is not None else now, now)
        steps = min(MAX_STEPS, int(max(0.0, until - start) // STEP_SECONDS))
        for task in tasks:
            add(task, start, "INFO", f"Running {_program(api, job)}")
        for step in range(1, steps + 1):
            for task in tasks:
                add(task, start + step * STEP_SECONDS, "INFO", f"step {step}: loss={1.0 / (step + 1):.4f}")
    if end is not None and end <= now:
        error = job.get("error") or {}
        message = str(error.get("message") or job.get("errorMessage") or "")
        if state == "FAILED":
            failed = _exited(api, message, tasks) if start is not None else None
            for line in TRACEBACK if failed else ():
                add(str(failed), end, "ERROR", line)
            add("service", end, "ERROR", message or "Job failed.", text=True)
        elif state == "SUCCEEDED":
            add("service", end, "INFO", "Job completed successfully.", text=True)
        elif state == "CANCELLED":
            add("service", end, "INFO", "Job was cancelled.", text=True)
    return found


def all_entries(state: EmulatorState) -> list[dict[str, Any]]:
    """Every entry of every job, settled at the emulator's time."""
    now = state.now()
    return [entry for job in state.jobs() for entry in job_entries(job["api"], job["name"], job["job"], now)]


def _projects(body: dict[str, Any]) -> list[str]:
    names = list(body.get("resourceNames") or []) + [f"projects/{p}" for p in body.get("projectIds") or []]
    if not names:
        raise invalid("resource_names is required: at least one parent resource, e.g. projects/PROJECT_ID",
                      "resource_names")
    projects = []
    for name in names:
        match = re.fullmatch(r"projects/([^/]+)", str(name))
        if match is None:
            raise invalid(f"Invalid resource name {name!r}: the emulator serves projects/PROJECT_ID only",
                          "resource_names")
        projects.append(match.group(1))
    return projects


def _key(entry: dict[str, Any]) -> tuple[datetime, str]:
    return datetime.fromisoformat(entry["timestamp"]).astimezone(UTC), entry["insertId"]


def _token(fingerprint: str, last: dict[str, Any]) -> str:
    """A page token names the request and the last entry given, not an offset: entries a running job writes
    between two pages never shift the next page (nothing is given twice or skipped)."""
    when, insert_id = _key(last)
    return base64.urlsafe_b64encode(f"{fingerprint}|{when.isoformat()}|{insert_id}".encode()).decode("ascii")


def _after(fingerprint: str, token: str) -> tuple[datetime, str]:
    try:
        named, when, insert_id = base64.urlsafe_b64decode(token.encode("ascii")).decode("ascii").split("|", 2)
        if named != fingerprint:
            raise ValueError(named)
        return datetime.fromisoformat(when), insert_id
    except (ValueError, UnicodeError):
        raise invalid("Invalid page token: it does not belong to this request (same filter, order and resources "
                      "expected).", "page_token") from None


def list_entries(state: EmulatorState, r: Request) -> dict[str, Any]:
    """entries.list: one page of the matching entries, in the order asked, and the next page's token."""
    body = validated(r.body, "logging", "ListLogEntriesRequest", strict_int64=False)
    projects = _projects(body)
    order = str(body.get("orderBy") or ORDERS[0]).strip().lower()
    if order not in ORDERS:
        raise invalid(f"Invalid order_by {body.get('orderBy')!r}; allowed: {', '.join(ORDERS)}", "order_by")
    size = body.get("pageSize")
    if isinstance(size, int) and size < 0:
        raise invalid("page_size must not be negative.", "page_size")
    size = min(size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
    text = str(body.get("filter") or "")
    test = compile_filter(text)
    matching = [e for e in all_entries(state)
                if any(same_project(p, e["resource"]["labels"]["project_id"]) for p in projects) and test(e)]
    newest_first = order == ORDERS[1]
    matching.sort(key=_key, reverse=newest_first)
    fingerprint = hashlib.sha256(repr((sorted(projects), text, order)).encode()).hexdigest()[:16]
    if body.get("pageToken"):
        last = _after(fingerprint, str(body["pageToken"]))
        matching = [e for e in matching if (_key(e) < last if newest_first else _key(e) > last)]
    page = matching[:size]
    answer: dict[str, Any] = {}
    if page:
        answer["entries"] = page
    if len(matching) > size:
        answer["nextPageToken"] = _token(fingerprint, page[-1])
    return answer


ROUTES: list[Route] = [Route("POST", re.compile(r"^/v2/entries:list$"), "entries.list", list_entries)]
