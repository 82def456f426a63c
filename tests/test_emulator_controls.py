"""The emulator's control endpoints (`/_emulator/...`), each one documented: docs/emulator-and-testing.md lists every
route the emulator serves (emulator.server.CONTROL_ROUTES), and the list is the server's own (each GET answers, a
route not in it is a 404)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.emulator.server import CONTROL_ROUTES

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "emulator-and-testing.md"


def documented() -> set[tuple[str, str]]:
    """The control endpoints the page's table lists (`| `VERB /_emulator/NAME` | ...`)."""
    found = set()
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `GET /_emulator/") or line.startswith("| `POST /_emulator/"):
            verb, path = line.split("`")[1].split(" ", 1)
            found.add((verb, path))
    return found


def test_every_control_endpoint_is_documented_and_every_documented_one_is_served() -> None:
    routes = set(CONTROL_ROUTES)
    assert {path.rsplit("/", 1)[1] for _, path in routes} >= {"phase", "advance", "jobs", "stockouts"}
    assert routes - documented() == set(), f"not in {PAGE.name}'s control endpoints: {sorted(routes - documented())}"
    assert documented() - routes == set(), f"{PAGE.name} lists endpoints the emulator does not serve"


def _get(emulator: Emulator, path: str) -> int:
    try:
        with urllib.request.urlopen(emulator.url.rstrip("/") + path, timeout=10) as answer:
            json.loads(answer.read())
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_the_list_is_the_server_s_own(emulator: Emulator) -> None:
    for verb, path in CONTROL_ROUTES:
        if verb == "GET":
            assert _get(emulator, path) == 200, path
    assert _get(emulator, "/_emulator/nothing") == 404
    request = urllib.request.Request(emulator.url + "_emulator/nothing", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 404
