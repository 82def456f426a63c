"""Google API clients and calls, shared by every backend: one discovery build per process, retries.

The googleapiclient service is built from the discovery document shipped in the package (no discovery
fetch), once per (API, endpoint) per process and cached here at module level, never on the provider
object (which Pulumi pickles into state). Credentials come from Application Default Credentials at call
time; a loopback endpoint (the emulator) gets anonymous credentials. Each thread executes with its own
httplib2 connection, because httplib2 is not thread-safe and Pulumi calls providers from a thread pool.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
HTTP_TIMEOUT_SECONDS = 60.0

_services: dict[tuple[str, str, str], Any] = {}
_lock = threading.Lock()
_local = threading.local()

#: How many discovery builds this process made (the benchmark reports it; the target is one per API).
build_count = 0


class ApiError(Exception):
    """A Google API error answer: HTTP status, Google's status name and its message."""

    def __init__(self, status: int, reason: str, message: str, method: str = ""):
        self.status, self.reason, self.message, self.method = status, reason, message, method
        super().__init__(f"{method + ': ' if method else ''}HTTP {status} {reason}: {message}")


class TransportError(Exception):
    """No answer at all (connection reset, timeout): the call may or may not have taken effect."""


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter, capped."""

    attempts: int = 6
    base_seconds: float = 0.5
    cap_seconds: float = 30.0

    def delay(self, attempt: int) -> float:
        return float(random.uniform(0, min(self.cap_seconds, self.base_seconds * 2**attempt)))

    @classmethod
    def from_env(cls) -> RetryPolicy:
        """GCP_TRAINING_JOBS_RETRY_BASE_SECONDS shortens the waits (tests and the emulator)."""
        base = os.environ.get("GCP_TRAINING_JOBS_RETRY_BASE_SECONDS")
        return cls(base_seconds=float(base)) if base else cls()


def is_loopback(endpoint: str | None) -> bool:
    host = urlparse(endpoint or "").hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def _credentials(endpoint: str | None) -> Any:
    if is_loopback(endpoint):
        from google.auth.credentials import AnonymousCredentials

        return AnonymousCredentials()
    import google.auth

    credentials, _ = google.auth.default(scopes=list(SCOPES))
    return credentials


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


def _http(endpoint: str) -> Any:
    """This thread's authorized HTTP object for an endpoint (credentials resolved lazily, per thread)."""
    cache: dict[str, Any] = _local.__dict__.setdefault("http", {})
    if endpoint not in cache:
        import google_auth_httplib2


        cache[endpoint] = google_auth_httplib2.AuthorizedHttp(
            _credentials(endpoint), http=_SendOnceHttp(timeout=HTTP_TIMEOUT_SECONDS)
        )
    return cache[endpoint]


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
    reason, message = "", str(error)
    try:
        body = json.loads(error.content.decode("utf-8"))["error"]
        reason, message = body.get("status", ""), body.get("message", message)
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    return ApiError(status, reason, message, method)


def execute_once(request: Any, endpoint: str, method: str) -> Any:
    """Send one request; map failures to ApiError (an answer) or TransportError (no answer)."""
    from googleapiclient.errors import HttpError

    try:
        return request.execute(http=_http(endpoint), num_retries=0)
    except HttpError as error:
        raise _api_error(error, method) from None
    except (ConnectionError, TimeoutError) as error:
        raise TransportError(f"{method}: no answer from {endpoint}: {error!r}") from None
    except OSError as error:  # httplib2 raises plain OSErrors for refused and reset connections
        raise TransportError(f"{method}: no answer from {endpoint}: {error!r}") from None
    except Exception as error:  # httplib2.HttpLib2Error and its kin
        if type(error).__module__.startswith("httplib2"):
            raise TransportError(f"{method}: no answer from {endpoint}: {error!r}") from None
        raise


def call(
    make_request: Callable[[], Any],
    endpoint: str,
    method: str,
    *,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """An idempotent call (get, list, cancel, patch): retried on 429, 5xx and lost connections."""
    policy = policy or RetryPolicy.from_env()
    for attempt in range(policy.attempts):
        try:
            return execute_once(make_request(), endpoint, method)
        except ApiError as error:
            if error.status not in RETRYABLE_STATUS or attempt == policy.attempts - 1:
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
        build_count = 0
    _local.__dict__.pop("http", None)
