"""Pytest fixtures around the loopback emulator (components.emulator), for any test module.

One emulator serves the whole session (binding and building clients once keeps tests fast); every
test that asks for `emulator` gets a clean state whose jobs stay where they are (phase length huge),
no pending faults and an empty request log. `ml_client` / `vertex_client` are Google's own clients
pointed at it, exactly as the project builds them (static discovery, anonymous credentials).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `components` importable however pytest was started
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402
from google.auth.credentials import AnonymousCredentials  # noqa: E402
from googleapiclient.discovery import build  # noqa: E402

from components.emulator import Emulator  # noqa: E402

#: A phase length no test outlives: jobs stay QUEUED until a test advances the clock or sets 0.
FROZEN_PHASE_SECONDS = 1e9


def build_client(api: str, url: str) -> Any:
    """googleapiclient for "ml" or "aiplatform" v1 against `url`, as the project builds it."""
    return build(
        api,
        "v1",
        static_discovery=True,
        client_options={"api_endpoint": url},
        credentials=AnonymousCredentials(),
        cache_discovery=False,
    )


@pytest.fixture(scope="session")
def emulator_server() -> Iterator[Emulator]:
    """The session's emulator (started on a free port, stopped at the end)."""
    with Emulator(port=0, phase_seconds=FROZEN_PHASE_SECONDS) as emulator:
        yield emulator


@pytest.fixture
def emulator(emulator_server: Emulator) -> Iterator[Emulator]:
    """The session emulator with a clean state: no jobs, faults or log; frozen clock phases."""
    state = emulator_server.state
    state.reset()
    state.set_phase_seconds(FROZEN_PHASE_SECONDS)
    state.cancel_seconds = 0.0
    state.strict_int64 = False
    yield emulator_server
    state.reset()


@pytest.fixture(scope="session")
def ml_client(emulator_server: Emulator) -> Any:
    """AI Platform Training (ml v1) client against the emulator."""
    return build_client("ml", emulator_server.url)


@pytest.fixture(scope="session")
def vertex_client(emulator_server: Emulator) -> Any:
    """Vertex AI (aiplatform v1) client against the emulator (every region hits it)."""
    return build_client("aiplatform", emulator_server.url)
