"""The HTTP side: a threading server on 127.0.0.1 that routes API paths to the API surfaces, applies
injected faults, answers in Google's JSON error shape, serves the `/_emulator/...` control endpoints,
and the Emulator object that runs it in a daemon thread."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from gcp_training_jobs.emulator import (
    billing,
    cloudquotas,
    logging_v2,
    ml_v1,
    partial,
    persistent,
    proto_json,
    reservations,
    serviceusage,
    vertex,
    vertex_tuning,
)
from gcp_training_jobs.emulator.errors import ApiError, invalid
from gcp_training_jobs.emulator.jobs import rfc3339
from gcp_training_jobs.emulator.routing import Request, Route, route
from gcp_training_jobs.emulator.state import INJECTED_FAILURE, EmulatorState

ROUTES: list[Route] = [*ml_v1.ROUTES, *vertex.ROUTES, *vertex_tuning.ROUTES, *persistent.ROUTES, *billing.ROUTES,
                       *serviceusage.ROUTES, *cloudquotas.ROUTES, *logging_v2.ROUTES,
                       *reservations.ROUTES]

_CONTROL_POSTS = frozenset(
    {"/_emulator/reset", "/_emulator/faults", "/_emulator/advance", "/_emulator/phase", "/_emulator/fail",
     "/_emulator/quotas", "/_emulator/stockouts", "/_emulator/pause"}
)
_CONTROL_GETS = frozenset({"/_emulator/health", "/_emulator/requests", "/_emulator/jobs", "/_emulator/faults"})
#: Every control endpoint the emulator serves, (verb, path): docs/emulator-and-testing.md documents each one
#: (tests/test_emulator_controls.py holds the page to this list).
CONTROL_ROUTES: tuple[tuple[str, str], ...] = tuple(sorted(
    [("GET", path) for path in _CONTROL_GETS] + [("POST", path) for path in _CONTROL_POSTS]))


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
            if (refused := foreign_request(self.headers, self.command, self.path, self.server.server_address[1])):
                raise ApiError(403, refused, "PERMISSION_DENIED")
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
        found = route(ROUTES, self.command, path)
        if found is None:
            state.record(None, self.command, path, query)
            raise ApiError(404, f"Method not found: {self.command} {path}", "NOT_FOUND")
        served, params = found
        state.record(served.method, self.command, path, query)
        plan = state.take_faults(served.method)
        if plan.delay:
            time.sleep(plan.delay)
        if plan.error is not None:
            raise plan.error
        body = _parse_json(raw) if self.command in ("POST", "PATCH", "PUT") else None
        if plan.page:
            query, body = _first_page(query, body, plan.token)
        try:
            result = served.handler(state, Request(params, query, body))
        except ApiError:
            if plan.drop:
                self.close_connection = True
                return
            raise
        if plan.drop:
            # Executed, answer lost: close without a status line (client: RemoteDisconnected).
            self.close_connection = True
            return
        if served.response is not None:
            result = proto_json.int64_strings(*served.response, result)
            if proto_json.wants_int_enums(query):
                result = proto_json.enum_numbers(*served.response, result)
        if plan.page and isinstance(result, dict):
            result = {**result, "nextPageToken": plan.token}
        if isinstance(query.get("fields"), str):  # Google's partial response
            result = partial.select(result, partial.parse(query["fields"]))
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
                raise invalid("Expected a JSON object.")
            try:
                return _control_post(state, path, body)
            except KeyError as error:
                raise ApiError(404, str(error.args[0] if error.args else error), "NOT_FOUND") from None
            except (ValueError, TypeError) as error:
                raise invalid(str(error)) from None
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


#: The names this machine answers to: a request for any other Host is a page's (DNS rebinding: a name of the page's
#: own resolving to 127.0.0.1 makes it same-origin to the browser).
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})


def foreign_request(headers: Any, verb: str, target: str, port: int) -> str | None:
    """Why a request comes from a web page rather than a client of Google's APIs (which send no Origin and name the
    emulator's own address as Host), or None: an `Origin` other than the emulator's own, a browser's cross-site
    fetch (`Sec-Fetch-Site`), a Host that is not loopback, or a control POST in a type a page may send without
    asking (text/plain, a form): the jobs' env, args and state are never served to a local page, nor its controls
    driven by one (no `Access-Control-Allow-Origin` is ever sent)."""
    host = str(headers.get("Host") or "").lower()
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    if host and name not in _LOOPBACK_HOSTS:
        return f"the emulator answers only requests for its loopback address, not for Host {host[:80]!r}"
    origin = headers.get("Origin")
    own = {f"http://{h}:{port}" for h in _LOOPBACK_HOSTS}
    if origin is not None and origin.lower().rstrip("/") not in own:
        return "the emulator refuses cross-origin requests (from a web page)"
    if str(headers.get("Sec-Fetch-Site") or "").lower() in ("cross-site", "same-site"):
        return "the emulator refuses cross-origin requests (from a web page)"
    kind = str(headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if verb == "POST" and urlsplit(target).path.startswith("/_emulator/") and kind != "application/json":
        return (f"a control request must be Content-Type application/json, not {kind or 'none'!r} (what a web page "
                "may send without asking)")
    return None


def _first_page(query: dict[str, Any], body: Any, token: Any) -> tuple[dict[str, Any], Any]:
    """A list request as a page token fault serves it: the fault's own token (in the query, or the body of a POST
    list such as entries.list) taken away, so the list starts again."""
    if query.get("pageToken") == str(token):
        query = {k: v for k, v in query.items() if k != "pageToken"}
    if isinstance(body, dict) and body.get("pageToken") == token:
        body = {k: v for k, v in body.items() if k != "pageToken"}
    return query, body


def _control_post(state: EmulatorState, path: str, body: dict[str, Any]) -> Any:
    """POST /_emulator/{reset,faults,advance,phase,fail,quotas,stockouts,pause}."""
    if path == "/_emulator/reset":
        state.reset()
        return {}
    if path == "/_emulator/faults":
        method = body.get("method")
        count = int(body.get("count", 1))
        if body.get("drop"):
            state.drop_next_response(method, count)
        elif "nextPageToken" in body:
            state.inject_page_token(method, body["nextPageToken"], count)
        elif body.get("delay") is not None:
            state.inject_delay(float(body["delay"]), count, method)
        else:
            state.inject_faults(int(body.get("status", 503)), count, method, message=body.get("message"))
        return state.pending_faults()
    if path == "/_emulator/advance":
        return {"now": rfc3339(state.advance(float(body.get("seconds", 0))))}
    if path == "/_emulator/phase":
        state.set_phase_seconds(float(body["seconds"]))
        return {"seconds": state.phase_seconds}
    if path == "/_emulator/quotas":  # {"metric", "region", "limit"}: a custom training quota limit
        if "limit" not in body:
            raise ValueError('"limit" is required: units, or -1 for unlimited')
        return state.set_quota(str(body.get("metric") or ""), str(body.get("region") or ""), int(body["limit"]))
    if path == "/_emulator/stockouts":  # {"region", "machineType"}: no capacity left for it there
        region, machine = str(body.get("region") or ""), str(body.get("machineType") or "")
        if body.get("clear"):  # {"region", "machineType"?, "clear": true}: that one (or the region's) back
            return state.clear_stockout(region, machine or None)
        return state.add_stockout(region, machine)
    job = body.get("job")
    if not isinstance(job, str) or not job:
        raise ValueError('"job" (a jobId, a Vertex id or a full name) is required')
    if path == "/_emulator/pause":  # {"job"}: a Vertex AI job paused (JOB_STATE_PAUSED) until cancelled
        return state.pause_job(job)
    replica = str(body.get("replica") or "workerpool0-0")
    if body.get("preempted"):  # {"job", "preempted": true}: a running Spot job's VM reclaimed
        return state.preempt(job, replica)
    if body.get("exitStatus") is not None:  # {"job", "exitStatus": N}: the user's code exited non-zero
        return state.exit_replica(job, int(body["exitStatus"]), replica)
    message = body.get("message") or INJECTED_FAILURE
    return state.fail_job(job, str(message))


def _parse_json(raw: bytes) -> Any:
    if not raw.strip():
        return {}
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise invalid(f"Invalid JSON payload received. {error}") from None


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
