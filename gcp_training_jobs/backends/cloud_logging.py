"""A training job's log lines, from Cloud Logging (logging v2, `entries.list`), through the shared transport.

Which entries are a job's, as `gcloud ai custom-jobs stream-logs` and `gcloud ai-platform jobs stream-logs` find
them (google-cloud-sdk-unofficial/google-cloud-sdk lib/googlecloudsdk/command_lib/ai/log_util.py `_LogFilters` @
01f043c2289d, called with the job's id by lib/surface/ai/custom_jobs/stream_logs.py @ 8256a5cb364b): both APIs log
a job under the monitored resource `ml_job`, labelled with the job's id (`resource.type="ml_job" AND
resource.labels.job_id="ID"`, plus `resource.labels.task_name="..."` for one replica). The id is the job's
`jobId` on AI Platform Training and the number that ends its resource name on Vertex AI.

A line is gcloud's (`_EntryToDict`, `_SplitMultiline` of the same file): the entry's severity, timestamp, task
(`resource.labels.task_name`, else "unknown_task") and message (`jsonPayload.message`, else `textPayload`), one
line per line of a multi-line message.

Following (`follow`) polls, as gcloud's LogFetcher (lib/googlecloudsdk/command_lib/logs/stream.py @ 01f043c2289d)
does, with a lower bound on the timestamp. Instead of its upper bound (now - 5 s, which assumes the caller's
clock is the server's), each poll looks back LOOK_BACK_SECONDS before the newest entry seen and skips the entries
it has printed (by insertId), so an entry that arrives a little late is still printed, once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from gcp_training_jobs.backends import transport
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.review.run_cost import parse_time

ENDPOINT: Final = "https://logging.googleapis.com/"
#: What errors name: the API and its method.
API_NAME: Final = "Cloud Logging (logging.googleapis.com)"
METHOD: Final = "entries.list"
#: entries.list's largest page (gcloud's LogFetcher.LOG_BATCH_SIZE: "API max").
PAGE_SIZE: Final = 1000
#: The most pages one read follows (a bound on one call, never a silent cut: `entries` says when it stops).
MAX_PAGES: Final = 200
#: How far before the newest entry seen each poll of `follow` looks again (entries ingested late).
LOOK_BACK_SECONDS: Final = 60.0
ASCENDING, DESCENDING = "timestamp asc", "timestamp desc"


class LoggingError(TrainingJobsError):
    """Cloud Logging could not be read: the API, the method, and the status or what went wrong."""


@dataclass(frozen=True)
class LogLine:
    """One line of a job's log, as gcloud shows it."""

    timestamp: str
    severity: str
    task: str
    message: str
    insert_id: str = ""

    def text(self) -> str:
        """`2026-11-23T10:00:00.000000Z INFO workerpool0-0 epoch 1/5: loss=0.93`."""
        return f"{self.timestamp} {self.severity} {self.task} {self.message}"


def job_filter(job_id: str, task: str | None = None) -> str:
    """The filter of a job's entries (gcloud's `_LogFilters`), optionally of one replica (task)."""
    terms = ['resource.type="ml_job"', f'resource.labels.job_id="{_quoted(job_id)}"']
    if task:
        terms.append(f'resource.labels.task_name="{_quoted(task)}"')
    return " AND ".join(terms)


def log_job_id(job: dict[str, Any]) -> str:
    """The id a job's entries carry: ml v1's `jobId`, or the number that ends a Vertex AI job's name."""
    return str(job.get("jobId") or str(job.get("name") or "").rsplit("/", 1)[-1])


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def endpoint_of(override: str | None) -> str:
    """Where entries.list goes: the endpoint override (the emulator serves every API on one), else Google's."""
    return override or ENDPOINT


def lines_of(entry: dict[str, Any]) -> list[LogLine]:
    """The lines of one LogEntry (gcloud's _EntryToDict, then one line per line of its message)."""
    payload = entry.get("jsonPayload")
    message = str((payload.get("message") if isinstance(payload, dict) else entry.get("textPayload")) or "")
    labels = (entry.get("resource") or {}).get("labels") or {}
    task = str(labels.get("task_name") or "unknown_task")
    stamp, severity = str(entry.get("timestamp") or ""), str(entry.get("severity") or "DEFAULT")
    insert_id = str(entry.get("insertId") or "")
    return [LogLine(stamp, severity, task, text, insert_id) for text in (message.splitlines() or [""])]


class Reader:
    """entries.list of one project at one endpoint (ADC over TLS, anonymous to loopback: the transport's rules)."""

    def __init__(self, project: str, endpoint: str | None = None, *, sleep: Callable[[float], None] = time.sleep):
        self.project, self.root, self._sleep = project, endpoint_of(endpoint), sleep

    def _send(self, request: Callable[[], Any], root: str, method: str) -> Any:
        """One page's request through the transport (retried), its failures as LoggingError."""
        from google.auth.exceptions import GoogleAuthError

        try:
            return transport.call(request, root, method, sleep=self._sleep)
        except (transport.ApiError, transport.TransportError, transport.CredentialsError,
                transport.InsecureEndpointError) as error:
            raise LoggingError(f"{API_NAME} {_with_method(str(error))}") from None
        except GoogleAuthError as error:  # no Application Default Credentials at all
            raise LoggingError(f"{API_NAME} {METHOD}: no credentials ({error}); run `gcloud auth "
                               "application-default login`") from None

    def entries(self, flt: str, order: str = ASCENDING, limit: int | None = None) -> Iterator[dict[str, Any]]:
        """Every entry matching `flt` in `order`, page by page through the one pager, transport.pages (at most
        `limit`; a page token that repeats or is not text, or more than MAX_PAGES pages, is a LoggingError)."""
        given = 0

        def request(token: str | None) -> Any:
            size = PAGE_SIZE if limit is None else max(1, min(PAGE_SIZE, limit - given))
            body: dict[str, Any] = {"resourceNames": [f"projects/{self.project}"], "filter": flt, "orderBy": order,
                                    "pageSize": size}
            if token:
                body["pageToken"] = token
            return transport.service("logging", "v2", self.root).entries().list(body=body)

        try:
            for answer in transport.pages(request, self.root, METHOD, send=self._send, max_pages=MAX_PAGES):
                page = answer.get("entries") or []
                if not isinstance(page, list) or not all(isinstance(e, dict) for e in page):
                    raise LoggingError(f"{API_NAME} {METHOD}: `entries` is not a list of log entries")
                for entry in page:
                    if limit is not None and given >= limit:
                        return
                    given += 1
                    yield entry
                if limit is not None and given >= limit:
                    return
        except transport.TooManyPages as error:
            raise LoggingError(f"{API_NAME} {error} (pages of {PAGE_SIZE} entries): narrow the read (--since, "
                               "--tail)") from None
        except transport.PagingError as error:
            raise LoggingError(f"{API_NAME} {error}") from None

    def lines(self, job_id: str, *, since: datetime | None = None, task: str | None = None) -> list[LogLine]:
        """Every line of a job's log (since a time), oldest first."""
        flt = job_filter(job_id, task) + (f' AND timestamp>="{stamp(since)}"' if since else "")
        return [line for entry in self.entries(flt) for line in lines_of(entry)]

    def tail(self, job_id: str, count: int, *, since: datetime | None = None, task: str | None = None
             ) -> list[LogLine]:
        """The last `count` lines of a job's log (a multi-line entry counts its lines), oldest first."""
        if count <= 0:
            return []
        flt = job_filter(job_id, task) + (f' AND timestamp>="{stamp(since)}"' if since else "")
        found: list[LogLine] = []
        for entry in self.entries(flt, DESCENDING, limit=count):  # newest first: at most `count` entries
            found = lines_of(entry) + found
            if len(found) >= count:
                break
        return found[-count:]

    def follow(self, job_id: str, finished: Callable[[], bool], *, since: datetime | None = None,
               task: str | None = None, poll_seconds: float = 10.0, start: Sequence[LogLine] = ()
               ) -> Iterator[LogLine]:
        """The job's lines as they come, until `finished()` says the job has ended (then one last read).
        `start`: the lines already shown (e.g. a tail): only entries after the newest of them follow."""
        seen: dict[str, datetime] = {}  # insertId -> timestamp, of the entries shown within the look-back
        floor: tuple[datetime, str] | None = None  # (timestamp, insertId) of the newest entry shown before
        for line in start:
            if (when := parse_time(line.timestamp)) is not None:
                seen[line.insert_id] = when
                floor = max(floor, (when, line.insert_id)) if floor is not None else (when, line.insert_id)
        newest = floor[0] if floor is not None else since
        while True:
            done = finished()  # asked before the read: the last read comes after the job ended
            bound = newest - timedelta(seconds=LOOK_BACK_SECONDS) if newest is not None else None
            if since is not None and (bound is None or bound < since):
                bound = since
            seen = {key: when for key, when in seen.items() if bound is None or when >= bound}
            flt = job_filter(job_id, task) + (f' AND timestamp>="{stamp(bound)}"' if bound else "")
            for entry in self.entries(flt):
                key, when = str(entry.get("insertId") or ""), parse_time(entry.get("timestamp"))
                if key in seen or (floor is not None and when is not None and (when, key) <= floor):
                    continue
                if key and when is not None:
                    seen[key] = when
                if when is not None and (newest is None or when > newest):
                    newest = when
                yield from lines_of(entry)
            if done:
                return
            self._sleep(poll_seconds)


def stamp(when: datetime) -> str:
    """A time as the filter language takes it: RFC 3339 in UTC, `2026-11-23T10:00:00.000000Z`."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _with_method(text: str) -> str:
    """The transport's error, which names the method (`entries.list: HTTP 403 ...`), or it with the method."""
    return text if text.startswith(METHOD) else f"{METHOD}: {text}"
