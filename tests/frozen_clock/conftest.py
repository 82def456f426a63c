"""The fixtures of this folder's tests: the emulator on a frozen clock (its jobs move only as a test advances it,
never with real time, so what a test reads of a job's timeline holds on a busy machine), and Google's clients
pointed at it."""

from __future__ import annotations

from typing import Any

import pytest

from gcp_training_jobs.emulator import Emulator
from tests.conftest_emulator import build_client


@pytest.fixture
def emulator(frozen_emulator: Emulator) -> Emulator:
    """The emulator on a frozen clock: its jobs move only as the test advances it, never with real time."""
    return frozen_emulator


@pytest.fixture(scope="module")
def vertex_client(frozen_emulator_server: Emulator) -> Any:
    return build_client("aiplatform", frozen_emulator_server.url)


@pytest.fixture(scope="module")
def ml_client(frozen_emulator_server: Emulator) -> Any:
    return build_client("ml", frozen_emulator_server.url)
