"""Pytest fixtures around the loopback emulator (gcp_training_jobs.emulator), for any test module.

One emulator serves the whole session (binding and building clients once keeps tests fast); every
test that asks for `emulator` gets a clean state whose jobs stay where they are (phase length huge),
no pending faults and an empty request log. `ml_client` / `vertex_client` are Google's own clients
pointed at it, exactly as the project builds them (static discovery, anonymous credentials). `held_delays`
holds the emulator's injected delays until the test releases them, so that no test depends on real time.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `components` importable however pytest was started
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402
from google.auth.credentials import AnonymousCredentials  # noqa: E402
from googleapiclient.discovery import build  # noqa: E402

import gcp_training_jobs.emulator.server as emulator_http  # noqa: E402
from gcp_training_jobs.emulator import Emulator, EmulatorState  # noqa: E402

#: A phase length no test outlives: jobs stay QUEUED until a test advances the clock or sets 0.
FROZEN_PHASE_SECONDS = 1e9
#: How long a held call or its handler is waited for before the test fails (a bound on a hang, not a timing).
LIVENESS_SECONDS = 60.0


def build_client(api: str, url: str, version: str = "v1") -> Any:
    """googleapiclient for an API ("ml" or "aiplatform" v1, "logging" v2) against `url`, as the project builds it."""
    return build(
        api,
        version,
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


#: Where a frozen emulator's clock stands (2026-11-23T10:00:00Z) until a test advances it.
FROZEN_AT = 1_795_428_000.0


@pytest.fixture(scope="session")
def frozen_emulator_server() -> Iterator[Emulator]:
    """An emulator whose clock moves only when a test advances it (no real time passes for its jobs): for tests
    that assert what jobs did over a span of emulated time (run time, cost, log lines) on a busy machine."""
    with Emulator(port=0, state=EmulatorState(FROZEN_PHASE_SECONDS, clock=lambda: FROZEN_AT)) as emulator:
        yield emulator


@pytest.fixture
def frozen_emulator(frozen_emulator_server: Emulator) -> Iterator[Emulator]:
    """The frozen emulator with a clean state (as `emulator`); its clock stays where the last test left it."""
    state = frozen_emulator_server.state
    state.reset()
    state.set_phase_seconds(FROZEN_PHASE_SECONDS)
    yield frozen_emulator_server
    state.reset()


@pytest.fixture(scope="session")
def ml_client(emulator_server: Emulator) -> Any:
    """AI Platform Training (ml v1) client against the emulator."""
    return build_client("ml", emulator_server.url)


@pytest.fixture(scope="session")
def vertex_client(emulator_server: Emulator) -> Any:
    """Vertex AI (aiplatform v1) client against the emulator (every region hits it)."""
    return build_client("aiplatform", emulator_server.url)


class HeldDelays:
    """The emulator's injected delays (`state.inject_delay`) held until the test lets them go, instead of slept:
    a call whose client gave up goes on when the test says, not when a real delay ends, so no outcome depends
    on how busy the machine is. `seconds`: the delays the server was asked to sleep, in order."""

    def __init__(self) -> None:
        self._gate = threading.Event()
        self._lock = threading.Lock()
        self._held: list[tuple[float, threading.Thread]] = []

    def sleep(self, seconds: float) -> None:
        """What the emulator's server calls for a delay: wait until `release`."""
        with self._lock:
            self._held.append((seconds, threading.current_thread()))
        self._gate.wait(LIVENESS_SECONDS)

    @property
    def seconds(self) -> list[float]:
        with self._lock:
            return [seconds for seconds, _ in self._held]

    def release(self) -> None:
        """Let every held call (and any later one) go on, and wait until their handlers are done: what they
        did is in the emulator's state when this returns."""
        self._gate.set()
        with self._lock:
            threads = [thread for _, thread in self._held]
        for thread in threads:
            thread.join(LIVENESS_SECONDS)
            assert not thread.is_alive(), "a released emulator call did not finish"


class _TimeWithHeldSleep:
    """The `time` module as the emulator's server sees it, with `sleep` held."""

    def __init__(self, sleep: Callable[[float], None]) -> None:
        self.sleep = sleep

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@pytest.fixture
def held_delays(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldDelays]:
    """The emulator with its injected delays held until `release()` (released at the end of the test at the
    latest, before the state is cleaned: no late call lands in the next test)."""
    held = HeldDelays()
    monkeypatch.setattr(emulator_http, "time", _TimeWithHeldSleep(held.sleep))
    yield held
    held.release()
