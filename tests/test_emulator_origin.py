"""The emulator serves clients of Google's APIs on this machine, never a web page open in its browser: a request with
another Origin, a browser's cross-site fetch, another Host (DNS rebinding) or a control POST in a type a page may send
without asking (text/plain, a form) is refused with 403, before anything is done or read; no answer allows another
origin (no Access-Control-Allow-Origin)."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from gcp_training_jobs.emulator import Emulator


def ask(emulator: Emulator, verb: str, path: str, headers: dict[str, str], body: Any = None) -> tuple[int, Any, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", emulator.port, timeout=10)
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    connection.request(verb, path, body=data, headers=headers)
    answer = connection.getresponse()
    payload = json.loads(answer.read() or b"null")
    connection.close()
    return answer.status, payload, answer.headers


OWN = {"Content-Type": "application/json"}


@pytest.mark.parametrize(("path", "verb", "headers", "body"), [
    ("/_emulator/reset", "POST", {"Content-Type": "text/plain", "Origin": "http://localhost:8000"}, b"{}"),
    ("/_emulator/reset", "POST", {"Content-Type": "text/plain"}, b"{}"),
    ("/_emulator/reset", "POST", {"Content-Type": "application/x-www-form-urlencoded"}, b"{}"),
    ("/_emulator/reset", "POST", {"Content-Type": "application/json", "Origin": "https://evil.example"}, b"{}"),
    ("/_emulator/jobs", "GET", {"Origin": "http://127.0.0.1:1"}, None),
    ("/_emulator/jobs", "GET", {"Sec-Fetch-Site": "cross-site"}, None),
    ("/_emulator/jobs", "GET", {"Host": "rebound.evil.example"}, None),
    ("/v1/projects/p/locations/us-central1/customJobs", "GET", {"Origin": "null"}, None),
])
def test_a_web_pages_request_is_refused_before_anything_is_done(emulator: Emulator, path: str, verb: str,
                                                                headers: dict[str, str], body: Any) -> None:
    status, payload, answer = ask(emulator, "POST", "/_emulator/faults", OWN,
                                  {"method": "services.list", "status": 503})
    assert status == 200, payload
    status, payload, answer = ask(emulator, verb, path, headers, body)
    assert status == 403, payload
    assert payload["error"]["status"] == "PERMISSION_DENIED"
    assert "access-control-allow-origin" not in {k.lower() for k in answer}
    status, pending, _ = ask(emulator, "GET", "/_emulator/faults", {})  # the reset was not done
    assert status == 200 and pending, pending


def test_clients_on_this_machine_are_served_and_no_origin_is_ever_allowed(emulator: Emulator) -> None:
    own = f"http://127.0.0.1:{emulator.port}"
    for headers in ({}, {"Origin": own}, {"Host": f"localhost:{emulator.port}"}, {"Sec-Fetch-Site": "same-origin"}):
        status, payload, answer = ask(emulator, "GET", "/_emulator/jobs", headers)
        assert status == 200, (headers, payload)
        assert "access-control-allow-origin" not in {k.lower() for k in answer}
    status, payload, _ = ask(emulator, "POST", "/_emulator/reset", OWN, {})
    assert status == 200, payload
