"""Google API clients and calls, shared by every backend: one discovery build per process, retries.

The googleapiclient service is built from the discovery document shipped in the package (no discovery
fetch), once per (API, endpoint) per process and cached here at module level, never on the provider
object (which Pulumi pickles into state). Credentials come from Application Default Credentials at call
time and travel only over TLS to Google's API hosts (jobspec/core/endpoints.py): a loopback endpoint (the
emulator) gets anonymous credentials, and any other endpoint that is not https:// to a Google API host or a host
$GCP_TRAINING_JOBS_ALLOWED_ENDPOINT_HOSTS names is refused before a credential is even resolved. Each thread executes
with its own httplib2 connection, because httplib2 is not thread-safe and Pulumi calls providers from a
thread pool.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

from gcp_training_jobs.jobspec.catalog.quotas import QUOTA_EXCEEDED_PREFIX
from gcp_training_jobs.jobspec.core import endpoints
from gcp_training_jobs.jobspec.core.endpoints import is_loopback, shown
from gcp_training_jobs.jobspec.core.env import RETRY_BASE_SECONDS, env_settings
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})

_services: dict[tuple[str, str, str], Any] = {}
#: Collections of the cached clients, by client and path (`collection`): they live as long as their client.
_collections: dict[tuple[int, tuple[str, ...]], Any] = {}
_lock = threading.Lock()
_local = threading.local()

#: How many discovery builds this process made (the benchmark reports it; the target is one per API).
build_count = 0


class ApiError(TrainingJobsError):
    """A Google API error answer: HTTP status, Google's status name and its message."""

    def __init__(self, status: int, reason: str, message: str, method: str = ""):
        self.status, self.reason, self.message, self.method = status, reason, message, method
        super().__init__(f"{method + ': ' if method else ''}HTTP {status} {reason}: {message}")


class QuotaExceeded(ApiError):
    """A 429 that is not a rate limit: the request asks for more than a quota allows ("The following quota metrics
    exceed quota limits: aiplatform.googleapis.com/<metric>", or a google.rpc.QuotaFailure). Asking again cannot
    help, so it is never retried; `metrics` names what is over its limit."""

    def __init__(self, status: int, reason: str, message: str, method: str = "", metrics: tuple[str, ...] = ()):
        super().__init__(status, reason, message, method)
        self.metrics = metrics


#: How Vertex AI words a create refused for quota (gcp_training_jobs.jobspec.catalog.quotas, with its sources).
QUOTA_EXCEEDED = re.compile(re.escape(QUOTA_EXCEEDED_PREFIX) + r"\s*(?P<metrics>.*)", re.DOTALL)


def quota_metrics(message: str, details: Any = None) -> tuple[str, ...]:
    """The quota metrics a 429 names as exceeded (its message, or a google.rpc.QuotaFailure's violations); () for a
    429 that is a rate limit ("Quota exceeded for ... requests per minute" names no limit exceeded for good)."""
    found = QUOTA_EXCEEDED.search(message or "")
    metrics = [m.strip() for m in re.split(r"[,\s]+", found.group("metrics")) if m.strip()] if found else []
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("google.rpc.QuotaFailure"):
            metrics += [str(v.get("subject") or v.get("description") or "") for v in detail.get("violations") or []
                        if isinstance(v, dict)]
    return tuple(dict.fromkeys(m for m in metrics if m))


class TransportError(TrainingJobsError):
    """No answer at all. `sent` False: the request never left (connection refused, no DNS answer, the
    credential refresh before it failed), so it had no effect; True (reset, timeout): it may have."""

    def __init__(self, message: str, *, sent: bool = True):
        super().__init__(message)
        self.sent = sent


class InsecureEndpointError(TrainingJobsError):
    """An endpoint Google credentials must not go to (http:// to a non-loopback host, a host that is not one of
    Google's API hosts nor allowed by $GCP_TRAINING_JOBS_ALLOWED_ENDPOINT_HOSTS, a user name or password in it)."""


class CredentialsError(TrainingJobsError):
    """Application Default Credentials could not be refreshed, for a reason retrying will not fix."""


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter, capped."""

    attempts: int = 6
    base_seconds: float = RETRY_BASE_SECONDS
    cap_seconds: float = 30.0

    def delay(self, attempt: int) -> float:
        return float(random.uniform(0, min(self.cap_seconds, self.base_seconds * 2**attempt)))

    @classmethod
    def from_env(cls) -> RetryPolicy:
        """The default policy with the first wait of $GCP_TRAINING_JOBS_RETRY_BASE_SECONDS (tests and the emulator
        shorten it; env.EnvSettings)."""
        return cls(base_seconds=env_settings().retry_base_seconds)


def endpoint_problem(endpoint: str, *, named: bool = True) -> str | None:
    """The refusal of an endpoint Google credentials must not go to (endpoints.refusal, with the hosts
    $GCP_TRAINING_JOBS_ALLOWED_ENDPOINT_HOSTS allows), or None when they may."""
    return endpoints.refusal(endpoint, env_settings().endpoint_hosts, named=named)


def _credentials(endpoint: str | None) -> Any:
    """Anonymous credentials for loopback (the emulator); Application Default Credentials over TLS only."""
    if is_loopback(endpoint):
        from google.auth.credentials import AnonymousCredentials

        return AnonymousCredentials()
    problem = endpoint_problem(endpoint or "")
    if problem is not None:
        raise InsecureEndpointError(f"refusing to send credentials: {problem}")
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    try:
        credentials, _ = google.auth.default(scopes=list(SCOPES))
    except DefaultCredentialsError as error:
        raise CredentialsError(f"no Application Default Credentials for {shown(endpoint or '')} ({error}); "
                               "run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS"
                               ) from None
    return credentials


def http_timeout() -> float:
    """The client's HTTP timeout in seconds: $GCP_TRAINING_JOBS_HTTP_TIMEOUT_SECONDS, else 60 (env.EnvSettings)."""
    return env_settings().http_timeout_seconds


def service(api: str, version: str, endpoint: str) -> Any:
    """The cached googleapiclient Resource for an API at an endpoint (built on first use)."""
    global build_count
    key = (api, version, endpoint)
    with _lock:
        if key not in _services:
            from googleapiclient.discovery import build

            _services[key] = build(
                api,
                version,
                static_discovery=True,
                client_options={"api_endpoint": endpoint},
                http=_http(endpoint),
                cache_discovery=False,
            )
            build_count += 1
        return _services[key]


def collection(svc: Any, *path: str) -> Any:
    """`svc.path[0]().path[1]()...`, the collection of a cached client (`service`) that requests are made on, built
    once per client and path: googleapiclient builds every method of a resource (with its documentation) each time
    one is asked for, which was most of what a request cost. Shared across threads like the client: a collection
    only builds requests, each sent with its thread's own HTTP object (execute_once)."""
    key = (id(svc), path)
    with _lock:
        found = _collections.get(key)
        if found is None:
            found = svc
            for name in path:
                found = getattr(found, name)()
            _collections[key] = found
        return found


def rest_get(endpoint: str, path: str, query: dict[str, Any] | None = None) -> Any:
    """A GET of `path` under `endpoint` for an API googleapiclient ships no discovery document for (Cloud Quotas v1),
    as a request `execute_once` sends like any other (this thread's authorized HTTP, the same errors)."""
    from urllib.parse import urlencode

    from googleapiclient.http import HttpRequest
    from googleapiclient.model import JsonModel

    given = {k: v for k, v in (query or {}).items() if v is not None}
    uri = f"{endpoint.rstrip('/')}/{path.lstrip('/')}" + (f"?{urlencode(given)}" if given else "")
    return HttpRequest(None, JsonModel(False).response, uri, method="GET", headers={"accept": "application/json"})


def _http(endpoint: str) -> Any:
    """This thread's authorized HTTP object for an endpoint (credentials resolved lazily, per thread)."""
    cache: dict[tuple[str, float], Any] = _local.__dict__.setdefault("http", {})
    key = (endpoint, http_timeout())
    if key not in cache:
        import google_auth_httplib2

        cache[key] = google_auth_httplib2.AuthorizedHttp(_credentials(endpoint), http=_SendOnceHttp(timeout=key[1]))
    return cache[key]


def _send_once_http_class() -> type:
    import http.client

    import httplib2

    class SendOnceConnection:
        """A connection whose lost answer is a ConnectionResetError, which httplib2 raises rather than
        re-sending (it re-sends silently after a BadStatusLine, to survive stale keep-alive sockets)."""

        def __init__(self, conn: Any):
            self._conn = conn

        def __getattr__(self, name: str) -> Any:
            return getattr(self._conn, name)

        def getresponse(self) -> Any:
            try:
                return self._conn.getresponse()
            except (http.client.BadStatusLine, http.client.ResponseNotReady) as error:
                raise ConnectionResetError(f"connection closed before the answer: {error!r}") from None

    class SendOnceHttp(httplib2.Http):  # type: ignore[misc]
        """httplib2.Http that never re-sends a POST: a create re-sent blindly is a second job on Vertex AI
        (server-assigned ids). Our own retries reconcile a create before repeating it (lifecycle.py)."""

        def _conn_request(self, conn: Any, request_uri: str, method: str, body: Any, headers: Any) -> Any:
            if method == "POST":
                conn = SendOnceConnection(conn)
            return super()._conn_request(conn, request_uri, method, body, headers)

    return SendOnceHttp


def _SendOnceHttp(**kwargs: Any) -> Any:  # noqa: N802 - a lazily built class
    global _send_once_class
    if _send_once_class is None:
        _send_once_class = _send_once_http_class()
    return _send_once_class(**kwargs)


_send_once_class: type | None = None


def _api_error(error: Any, method: str) -> ApiError:
    status = int(getattr(error.resp, "status", 0) or 0)
    reason, message, details = "", str(error), None
    try:
        body = json.loads(error.content.decode("utf-8"))["error"]
        reason, message, details = body.get("status", ""), body.get("message", message), body.get("details")
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    if status == 429 and (metrics := quota_metrics(message, details)):
        return QuotaExceeded(status, reason, message, method, metrics)
    return ApiError(status, reason, message, method)


def retryable(error: ApiError) -> bool:
    """Whether asking again may succeed: 429 (a rate limit, not a quota) and 5xx."""
    return error.status in RETRYABLE_STATUS and not isinstance(error, QuotaExceeded)


def execute_once(request: Any, endpoint: str, method: str) -> Any:
    """Send one request; map failures to ApiError (an answer) or TransportError (no answer)."""
    import socket

    from google.auth import exceptions as auth
    from googleapiclient.errors import HttpError

    def lost(error: BaseException, sent: bool = True) -> TransportError:
        return TransportError(f"{method}: no answer from {shown(endpoint)}: {error!r}", sent=sent)

    try:
        return request.execute(http=_http(endpoint), num_retries=0)
    except HttpError as error:
        raise _api_error(error, method) from None
    except auth.RefreshError as error:  # the token refresh before the request: nothing was sent
        if error.retryable:
            raise lost(error, sent=False) from None
        raise CredentialsError(f"{method}: Application Default Credentials cannot be refreshed ({error}); "
                               "run `gcloud auth application-default login` or fix the service account") from None
    except auth.TransportError as error:  # no answer from the token endpoint: nothing was sent
        raise lost(error, sent=False) from None
    except (ConnectionRefusedError, socket.gaierror) as error:  # no connection: nothing was sent
        raise lost(error, sent=False) from None
    except (ConnectionError, TimeoutError) as error:
        raise lost(error) from None
    except OSError as error:  # httplib2 raises plain OSErrors for refused and reset connections
        raise lost(error) from None
    except Exception as error:  # httplib2.HttpLib2Error and its kin
        if type(error).__name__ == "ServerNotFoundError":  # httplib2's name for a failed DNS lookup
            raise lost(error, sent=False) from None
        if type(error).__module__.startswith("httplib2"):
            raise lost(error) from None
        raise


def is_create(method: str) -> bool:
    """Whether `method` (`api.create`, `customJobs.create`, `reservations.insert`) makes something on each send."""
    return method.rsplit(".", 1)[-1] in ("create", "insert")


def call(
    make_request: Callable[[], Any],
    endpoint: str,
    method: str,
    *,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """An idempotent call (get, list, cancel, patch): retried on 429 (a rate limit; a quota refusal never), 5xx and
    lost connections. A create is not idempotent (Vertex AI assigns ids: a create sent again is a second job) and is
    refused here: lifecycle.Jobs.create sends it once per attempt, looking for the job before each retry."""
    if is_create(method):
        raise ValueError(f"{method}: a create is never retried by the transport (lifecycle.Jobs.create sends it)")
    policy = policy or RetryPolicy.from_env()
    for attempt in range(policy.attempts):
        try:
            return execute_once(make_request(), endpoint, method)
        except ApiError as error:
            if not retryable(error) or attempt == policy.attempts - 1:
                raise
        except TransportError:
            if attempt == policy.attempts - 1:
                raise
        sleep(policy.delay(attempt))
    raise AssertionError("unreachable")


def reset_for_tests() -> None:
    """Forget cached services and connections (a test that restarts the emulator on a new port)."""
    global build_count
    with _lock:
        _services.clear()
        _collections.clear()
        build_count = 0
    _local.__dict__.pop("http", None)


#: The most pages one list read follows (`pages`) before it is refused: the bound, in requests, time and memory, on a
#: list whose tokens never end and never repeat. The smallest default page of a list read here is ml v1 jobs.list's
#: 20 jobs (https://cloud.google.com/ai-platform/prediction/docs/reference/rest/v1/projects.jobs/list, read
#: 2026-11-28): 1000 pages are 20,000 jobs of one project (quotas read every job of a region, unfiltered), or, at
#: services.skus.list's 5000 a page (billing.PAGE_SIZE), 5,000,000 SKUs, past any list a project holds; and a list
#: that never ends stops after 1000 requests, not never.
MAX_PAGES: Final = 1000


class PagingError(ApiError):
    """A list read that cannot be whole: a page that is not a JSON object, a nextPageToken that repeats one already
    followed (the API would hand out the same pages forever) or is not text, or more pages than the bound. The pages
    read are a partial answer, never taken for the whole: each caller says this in its own error (billing's
    BillingAnswerError, quotas' QuotaUnreadable). An ApiError (the API's answer was wrong, HTTP 200), so whatever
    handles an API error handles this one, and nothing retries it (asking again follows the same tokens)."""

    def __init__(self, endpoint: str, method: str, page: int, why: str):
        super().__init__(200, "", why, method)
        self.endpoint, self.page, self.why = endpoint, page, why
        self.args = (f"{method} at {shown(endpoint)}: page {page}: {why}; the answer is partial",)


class TooManyPages(PagingError):
    """More pages than the bound (`pages`' max_pages): the list may be whole past it, but is not read."""


def pages(make_request: Callable[[str | None], Any], endpoint: str, method: str, *,
          send: Callable[..., Any] | None = None, max_pages: int = MAX_PAGES) -> Iterator[dict[str, Any]]:
    """Every page of a list method, in order, each as it arrives, until an answer has no `nextPageToken`: the one
    pager of every list read. `make_request(page_token)` builds one page's request; `send(build, endpoint, method)`
    sends it (`call` unless given: retried). A caller checks each page as it comes, before its token is followed.
    A list that cannot be read whole raises PagingError naming the endpoint, the method and the page: a page that
    is not a JSON object, a token that repeats or is not text, more than `max_pages` pages."""
    send_one = send or call
    seen: set[str] = set()
    token: str | None = None
    for number in range(1, max_pages + 1):
        answer = send_one(partial(make_request, token), endpoint, method)
        if not isinstance(answer, dict):
            raise PagingError(endpoint, method, number, f"expected a JSON object, got {type(answer).__name__}")
        yield answer
        following = answer.get("nextPageToken") or None
        if following is None:
            return
        if not isinstance(following, str) or following in seen:
            raise PagingError(endpoint, method, number, f"nextPageToken {following!r} repeats or is not text")
        seen.add(following)
        token = following
    raise TooManyPages(endpoint, method, max_pages, f"more than {max_pages} pages")
