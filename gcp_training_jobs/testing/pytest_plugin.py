"""pytest fixtures for testing Vertex AI code offline: `vertex_emulator`, a `VertexEmulator` with a clean
loopback emulator behind it.

Loaded by pytest itself when the package is installed (the `pytest11` entry point in pyproject.toml, named after
this module), or by `pytest_plugins = ["gcp_training_jobs.testing.pytest_plugin"]` in a conftest.py (both at once is
fine: pytest finds the module already registered under that name).

One emulator serves the session. Each test gets it clean: no jobs, faults or request log, jobs that finish at
once (phase length 0: a job is JOB_STATE_SUCCEEDED as soon as it is created, so the SDK's `run()` returns
without sleeping), CANCELLING that ends at once, int64 leniency; and the SDK's global configuration is restored
after the test. Set `vertex_emulator.state.set_phase_seconds(60)` and `.state.advance(...)` to watch a job move.
The ini options `vertex_emulator_project` and `vertex_emulator_region` name where jobs go.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.testing.vertex_emulator import DEFAULT_PROJECT, DEFAULT_REGION, VertexEmulator


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("vertex_emulator_project", "project of the vertex_emulator fixture", default=DEFAULT_PROJECT)
    parser.addini("vertex_emulator_region", "region of the vertex_emulator fixture", default=DEFAULT_REGION)


@pytest.fixture(scope="session")
def vertex_emulator_server() -> Iterator[Emulator]:
    """The session's emulator, on a free loopback port."""
    with Emulator(port=0, phase_seconds=0) as emulator:
        yield emulator


@pytest.fixture
def vertex_emulator(vertex_emulator_server: Emulator, pytestconfig: pytest.Config) -> Iterator[VertexEmulator]:
    """A clean emulator as Vertex AI: `.endpoint`, `.project`, `.region`, `.parent`, `.state` and the clients
    `.job_client()`, `.aiplatform()`, `.discovery_client()`."""
    state = vertex_emulator_server.state
    state.reset()
    state.set_phase_seconds(0)
    state.cancel_seconds = 0.0
    state.strict_int64 = False
    offline = VertexEmulator(vertex_emulator_server, str(pytestconfig.getini("vertex_emulator_project")),
                             str(pytestconfig.getini("vertex_emulator_region")))
    try:
        yield offline
    finally:
        offline.restore()
        state.reset()
