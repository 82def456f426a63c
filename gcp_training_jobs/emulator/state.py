"""The shared store of one emulator: jobs of both APIs, the clock that moves them through their
states, the request log, kept operations, and the job operations both API surfaces share (store, look
up with Google's 404, list with filter and paging, cancel), parametrised by each API's Vocabulary."""

from __future__ import annotations

import copy
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

from gcp_training_jobs.emulator import capacity, listing, persistent_store, reservation_store
from gcp_training_jobs.emulator.errors import ApiError, failed_precondition
from gcp_training_jobs.emulator.faults import FaultInjection
from gcp_training_jobs.emulator.jobs import Job, Vocabulary, same_project

#: Jobs whose labels contain this key with value "failed" end FAILED instead of SUCCEEDED.
FAIL_LABEL = "emulator-outcome"
#: The errorMessage of a job failed through fail_job / POST /_emulator/fail.
INJECTED_FAILURE = "Job failed (failure injected by the emulator)."

_REDACTED_QUERY = frozenset({"key", "access_token", "oauth_token"})
#: Server-assigned ids (Vertex jobs, operations) are 19-digit decimal strings, increasing, never reused
#: (not even after reset()).
_SERVER_ID_BASE = 4_000_000_000_000_000_000


class EmulatorState(FaultInjection):
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
        #: Held by the API surfaces across a read-modify-write of the store.
        self.lock = threading.RLock()
        super().__init__(self.lock)
        self._clock = clock
        self._offset = 0.0
        self._phase_seconds = float(phase_seconds)
        self.cancel_seconds = float(cancel_seconds)
        #: Refuse int64 fields sent as JSON numbers (the real API accepts both; the project sends strings).
        self.strict_int64 = strict_int64
        self._jobs: list[Job] = []
        self._operations: dict[str, dict[str, Any]] = {}
        self._log: list[dict[str, Any]] = []
        self._seq = itertools.count(1)
        self._server_ids = itertools.count(_SERVER_ID_BASE + 1)
        #: Cloud Billing Catalog SKUs a test serves instead of billing.default_catalog(), by service id.
        self.billing_skus: dict[str, list[Any]] = {}
        #: Vertex AI custom training quota limits, (metric full name, region) -> units (`capacity`); unset: none.
        self.quota_limits: dict[tuple[str, str], int] = {}
        #: (region, machine type) pairs Vertex has no capacity for: their jobs fail before they run (`capacity`).
        self.stockouts: set[tuple[str, str]] = set()
        #: Vertex AI's persistent resources and their operations (`persistent` serves them).
        self.persistent = persistent_store.ResourceStore()
        #: Compute Engine's reservations (`reservations` serves them; their inUseCount is read from the live jobs).
        self.reservations = reservation_store.ReservationStore()

    # ----------------------------------------------------------------- control (tests, /_emulator/)

    def now(self) -> float:
        """Emulated time in epoch seconds (the real clock plus everything advanced)."""
        with self.lock:
            return self._clock() + self._offset

    def advance(self, seconds: float) -> float:
        """Move the emulated clock forward by `seconds`; return the new emulated time."""
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        with self.lock:
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
        with self.lock:
            now = self.now()
            for job in self._jobs:
                self._settle(job, now)
            self.settle_resources()
            self._phase_seconds = float(seconds)

    def reset(self) -> None:
        """Forget all jobs, operations, pending faults and the request log (clock and settings stay)."""
        with self.lock:
            self._jobs.clear()
            self._operations.clear()
            self._clear_faults()
            self._log.clear()
            self.billing_skus.clear()
            self.quota_limits.clear()
            self.stockouts.clear()
            self.persistent.clear()
            self.reservations.clear()

    def fail_job(self, job: str, message: str = INJECTED_FAILURE, code: int = 13) -> dict[str, Any]:
        """Make a job FAILED right now (errorMessage / error.code `code`, 13 INTERNAL by default); return its JSON.

        `job` is an ml jobId, a Vertex numeric id, or a full resource name. KeyError if unknown,
        ValueError if ambiguous or already finished.
        """
        with self.lock:
            found = self._resolve(job)
            now = self.now()
            self._settle(found, now)
            if found.state in found.vocab.finished:
                raise ValueError(f"job {found.name} already finished ({found.state})")
            self._finish(found, found.vocab.state("FAILED"), now, message, code)
            return found.vocab.render(found)

    def pause_job(self, job: str) -> dict[str, Any]:
        """Pause a Vertex AI job that has not finished (JOB_STATE_PAUSED: it stays there, holding its quota, until
        cancelled). ml v1 has no paused state: ValueError, as for a finished job."""
        with self.lock:
            found = self._resolve(job)
            self._settle(found, self.now())
            if found.vocab.prefix != "JOB_STATE_" or found.state not in found.vocab.running_phases:
                raise ValueError(f"job {found.name} is {found.state}: only a Vertex AI job that is queued, pending or "
                                 "running can be paused")
            self._transition(found, found.vocab.state("PAUSED"), self.now())
            return found.vocab.render(found)

    def exit_replica(self, job: str, status: int, replica: str = "workerpool0-0") -> dict[str, Any]:
        """A replica of a job exits with a non-zero `status`: the user's code failed (Vertex's message and code 3)."""
        if status == 0:
            raise ValueError("an exit status of 0 is a success, not a failure; allowed: a non-zero status")
        message = capacity.USER_EXIT_MESSAGE.format(replica=replica, status=status)
        return self.fail_job(job, message, capacity.USER_EXIT_CODE)

    def preempt(self, job: str, replica: str = "workerpool0-0") -> dict[str, Any]:
        """Compute Engine reclaims a running Spot job's VM: the job fails (Google's fault, not the user's)."""
        with self.lock:
            found = self._resolve(job)
            self._settle(found, self.now())
            if found.state != found.vocab.state("RUNNING") or not capacity.is_spot(found.body):
                raise ValueError(f"job {found.name} is {found.state}: only a RUNNING job on SPOT can be preempted")
            return self.fail_job(job, capacity.PREEMPTED.format(replica=replica), capacity.PREEMPTED_CODE)

    def set_quota(self, metric: str, region: str, limit: int) -> dict[str, Any]:
        """The limit of a custom training quota metric in a region (for every project), enforced on create; -1 is
        unlimited, as Google reports it (served, never enforced)."""
        if limit < -1 or not metric or not region:
            raise ValueError('"metric", "region" and a "limit" of 0 or more (-1: unlimited) are required')
        with self.lock:
            self.quota_limits[(capacity.full_name(metric), region)] = int(limit)
            return {"metric": capacity.full_name(metric), "region": region, "limit": int(limit)}

    def quota_table(self) -> dict[str, list[tuple[str, int]]]:
        """Metric (full name) -> [(region, limit)] of every limit set, by metric then region (what the quota APIs
        serve: Service Usage's buckets, Cloud Quotas' dimensions)."""
        with self.lock:
            limits = sorted(self.quota_limits.items())
        table: dict[str, list[tuple[str, int]]] = {}
        for (metric, region), limit in limits:
            table.setdefault(metric, []).append((region, limit))
        return table

    def add_stockout(self, region: str, machine_type: str) -> list[dict[str, str]]:
        """Vertex has no `machine_type` left in `region`: its jobs there fail before they run."""
        if not region or not machine_type:
            raise ValueError('"region" and "machineType" are required')
        with self.lock:
            self.stockouts.add((region, machine_type))
            return [{"region": r, "machineType": m} for r, m in sorted(self.stockouts)]

    def clear_stockout(self, region: str, machine_type: str | None) -> list[dict[str, str]]:
        """Capacity back for `machine_type` in `region` (None: every machine type stocked out there), the others
        kept; the stockouts left. KeyError (404) when there is no such stockout."""
        if not region:
            raise ValueError('"region" is required (and "machineType", else every stockout of the region clears)')
        with self.lock:
            cleared = {(r, m) for r, m in self.stockouts if r == region and machine_type in (None, m)}
            if not cleared:
                raise KeyError(f"no stockout of {machine_type or 'any machine type'} in {region}")
            self.stockouts -= cleared
            return [{"region": r, "machineType": m} for r, m in sorted(self.stockouts)]

    def quota_refusal(self, project: str, location: str, need: dict[str, int]) -> str | None:
        """Vertex's 429 message when the needs of a new CustomJob or PersistentResource plus what the project's live
        jobs and persistent resources in `location` hold pass a limit (None: it fits). Called under the lock, before
        the new one is stored."""
        with self.lock:
            limited = {m: limit for (m, where), limit in self.quota_limits.items() if where == location and limit >= 0}
            if not any(metric in limited for metric in need):
                return None
            self.settle_resources()
            held = self.persistent.held(project, location)
            now = self.now()
            for job in self._jobs:
                if job.vocab.collection != "customJobs" or job.location != location \
                        or not same_project(project, job.project):
                    continue
                self._settle(job, now)
                if job.state not in job.vocab.finished:
                    for metric, units in capacity.needs(job.body).items():
                        held[metric] = held.get(metric, 0) + units
            over = [m for m, units in need.items() if m in limited and units + held.get(m, 0) > limited[m]]
            return capacity.quota_message(over) if over else None

    def settle_resources(self) -> None:
        """Move the persistent resources on the clock (PROVISIONING to RUNNING or ERROR, STOPPING to gone)."""
        with self.lock:
            self.persistent.settle(self.now(), self._phase_seconds, lambda r: any(
                (r.location, machine) in self.stockouts for machine in capacity.machine_types(r.body)))

    def live_jobs(self, api: str) -> list[Job]:
        """The jobs of an API ("aiplatform": custom and tuning jobs) that have not finished, settled now."""
        with self.lock:
            now = self.now()
            live = []
            for job in self._jobs:
                if job.vocab.api == api:
                    self._settle(job, now)
                    if job.state not in job.vocab.finished:
                        live.append(job)
            return live

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """The request log (oldest first), optionally only calls of one method name.

        Entries are {"method", "http", "path", "query"}; headers and bodies are never recorded, and
        credential-like query parameters (key, access_token) are redacted.
        """
        with self.lock:
            return [copy.deepcopy(r) for r in self._log if method is None or r["method"] == method]

    def jobs(self) -> list[dict[str, Any]]:
        """Every job of both APIs, oldest first, as {"api", "name", "job"} (job = the API's JSON)."""
        with self.lock:
            now = self.now()
            out = []
            for job in self._jobs:
                self._settle(job, now)
                out.append({"api": job.api, "name": job.name, "job": job.vocab.render(job)})
            return out

    def record(self, method: str | None, http_method: str, path: str, query: dict[str, Any]) -> None:
        """Append one API request to the log (never headers)."""
        safe = {k: ("<redacted>" if k.lower() in _REDACTED_QUERY else v) for k, v in query.items()}
        with self.lock:
            self._log.append({"method": method, "http": http_method, "path": path, "query": safe})

    # ------------------------------------------------------ job operations both API surfaces share

    def next_id(self) -> str:
        """A new server-assigned id (19 decimal digits, increasing, never reused)."""
        with self.lock:
            return str(next(self._server_ids))

    def add_job(self, vocab: Vocabulary, project: str, location: str, job_id: str, user: dict[str, Any]) -> Job:
        """Store a new job in the API's first phase (settled at once when phases last 0 s)."""
        with self.lock:
            now = self.now()
            first = vocab.running_phases[0]
            job = Job(vocab, project, location, job_id, user, next(self._seq), now, first, now, updated=now)
            self._jobs.append(job)
            self._settle(job, now)
            return job

    def has_job(self, vocab: Vocabulary, project: str, job_id: str) -> bool:
        """Whether this exact project id has ever had the job (ids that may never be reused)."""
        with self.lock:
            return any(j.vocab is vocab and j.project == project and j.job_id == job_id for j in self._jobs)

    def find_job(self, vocab: Vocabulary, project: str, location: str, job_id: str) -> Job:
        """The settled job, or the API's 404 NOT_FOUND."""
        with self.lock:
            for job in self._jobs:
                if job.vocab is vocab and job.job_id == job_id and self._in(job, vocab, project, location):
                    self._settle(job, self.now())
                    return job
        raise ApiError(404, vocab.not_found.format(name=vocab.name(project, location, job_id)), "NOT_FOUND")

    def get_job(self, vocab: Vocabulary, project: str, location: str, job_id: str) -> dict[str, Any]:
        """jobs.get / customJobs.get: the job's JSON."""
        with self.lock:
            return vocab.render(self.find_job(vocab, project, location, job_id))

    def list_jobs(
        self,
        vocab: Vocabulary,
        project: str,
        location: str,
        page_size: int | None = None,
        page_token: str | None = None,
        filter_text: str | None = None,
    ) -> dict[str, Any]:
        """jobs.list / customJobs.list: newest first, filtered, one page and the next page's token."""
        with self.lock:
            size = listing.page_size(page_size, *vocab.page_sizes)
            terms = listing.parse_filter(filter_text) if filter_text else []
            jobs = [j for j in self._jobs if self._in(j, vocab, project, location)]
            now = self.now()
            for job in jobs:
                self._settle(job, now)
            page, token = listing.select_page(jobs, terms, size, page_token, vocab.filter_fields)
            result: dict[str, Any] = {}
            if page:
                result[vocab.collection] = [(vocab.listed or vocab.render)(j) for j in page]
            if token:
                result["nextPageToken"] = token
            return result

    def cancel_job(self, vocab: Vocabulary, project: str, location: str, job_id: str) -> dict[str, Any]:
        """jobs.cancel / customJobs.cancel: {} ; a finished job answers 400 FAILED_PRECONDITION."""
        with self.lock:
            job = self.find_job(vocab, project, location, job_id)
            if job.state in vocab.finished:
                raise failed_precondition(f"Job {job.name} is in state {job.state} and cannot be cancelled.")
            if job.state != vocab.state("CANCELLING"):
                now = self.now()
                self._transition(job, vocab.state("CANCELLING"), now)
                self._settle(job, now)
            return {}

    def touch(self, job: Job) -> None:
        """Record a user change of a job (a new revision, hence a new etag, and updateTime)."""
        with self.lock:
            job.revision += 1
            job.updated = self.now()

    def remove_job(self, job: Job) -> None:
        with self.lock:
            self._jobs.remove(job)

    def save_operation(self, operation: dict[str, Any]) -> dict[str, Any]:
        """Keep a long-running operation (by its name) until reset; return a copy."""
        with self.lock:
            self._operations[operation["name"]] = operation
            return copy.deepcopy(operation)

    def find_operation(self, match: Callable[[str], bool]) -> dict[str, Any] | None:
        """A copy of the first kept operation whose name `match`es, or None."""
        with self.lock:
            for name, operation in self._operations.items():
                if match(name):
                    return copy.deepcopy(operation)
        return None

    # -------------------------------------------------------------------------------- internals

    @staticmethod
    def _in(job: Job, vocab: Vocabulary, project: str, location: str) -> bool:
        return job.vocab is vocab and job.location == location and same_project(project, job.project)

    def _resolve(self, ref: str) -> Job:
        matches = [j for j in self._jobs if ref in (j.name, j.job_id)]
        if not matches:
            raise KeyError(f"no job {ref!r}")
        if len(matches) > 1:
            raise ValueError(f"job reference {ref!r} is ambiguous; use the full name")
        return matches[0]

    def _settle(self, job: Job, now: float) -> None:
        """Apply every phase change due by `now` (lazy clock); record when, for what the job's JSON shows."""
        job.seen, job.phase_seconds = now, self._phase_seconds
        vocab = job.vocab
        phases = vocab.running_phases
        fail_message, cancel_message = vocab.messages
        while True:
            if job.state in phases:
                due = job.entered + self._phase_seconds
                if now < due:
                    return
                index = phases.index(job.state)
                if index + 2 == len(phases) and self._stocked_out(job):  # it would run now: no capacity
                    self._finish(job, vocab.state("FAILED"), due,
                                 capacity.STOCKOUT_MESSAGE.format(region=job.location), capacity.STOCKOUT_CODE)
                elif index + 1 < len(phases):
                    self._transition(job, phases[index + 1], due)
                    if job.state == phases[-1]:
                        job.start = due
                elif job.labels.get(FAIL_LABEL) == "failed":
                    self._finish(job, vocab.state("FAILED"), due, fail_message, 13)
                else:
                    self._finish(job, vocab.state("SUCCEEDED"), due, None, 0)
            elif job.state == vocab.state("CANCELLING"):
                due = job.entered + self.cancel_seconds
                if now < due:
                    return
                self._finish(job, vocab.state("CANCELLED"), due, cancel_message, 1)
            else:
                return

    def _stocked_out(self, job: Job) -> bool:
        return job.vocab.collection == "customJobs" and any(
            (job.location, machine) in self.stockouts for machine in capacity.machine_types(job.body))

    def _transition(self, job: Job, state: str, when: float) -> None:
        job.state = state
        job.entered = when
        job.updated = when
        job.revision += 1

    def _finish(self, job: Job, state: str, when: float, message: str | None, code: int) -> None:
        self._transition(job, state, when)
        job.end = when
        job.error_message = message
        job.error_code = code
