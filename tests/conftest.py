"""Fixtures shared by every test module: the loopback emulator and Google's clients pointed at it."""

from typing import Any

import pytest

from gcp_training_jobs.backends.run_cache import RUN
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.jobspec.catalog.prices import PRICES_FILE_ENV

# gcp_training_jobs.testing.pytest_plugin: the `vertex_emulator` fixture the package offers its users, loaded the way
# a user's conftest.py does (installed, the pytest11 entry point loads it too: registering twice is a no-op).
pytest_plugins = ["tests.conftest_emulator", "gcp_training_jobs.testing.pytest_plugin"]


@pytest.fixture(autouse=True)
def _bundled_prices(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Estimates read the bundled price table, never the user's refreshed one (~/.cache/gcp-training-jobs): the
    table file is a path that does not exist (a test that writes one sets the variable itself; subprocesses,
    the Pulumi engine and its providers included, inherit it)."""
    monkeypatch.setenv(PRICES_FILE_ENV, str(tmp_path_factory.getbasetemp() / "no-refreshed-prices.json"))


@pytest.fixture
def provider_clock() -> Any:
    """The clock the `provider` fixture's lifecycle (retries, reconcile window, waits) runs on: None, the real one. A
    module that drives it overrides this fixture with a tests.helpers.FakeClock."""
    return None


@pytest.fixture
def provider_env() -> dict[str, str]:
    """The variables the `provider` fixture runs under besides its endpoint: its retries' first wait 1 ms. A module
    that needs others (a reconcile window) overrides this fixture."""
    return {"GCP_TRAINING_JOBS_RETRY_BASE_SECONDS": "0.001"}


@pytest.fixture
def provider(emulator: Emulator, monkeypatch: pytest.MonkeyPatch, provider_clock: Any,
             provider_env: dict[str, str]) -> Any:
    """The TrainingJob provider against the emulator, under `provider_env`, on `provider_clock` (Pulumi imported
    only here): the one provider every test of the provider takes."""
    from gcp_training_jobs.resources.training_job import TrainingJobProvider

    monkeypatch.setenv("GCP_TRAINING_JOBS_API_ENDPOINT", emulator.url)
    for name, value in provider_env.items():
        monkeypatch.setenv(name, value)
    made = TrainingJobProvider()
    return provider_clock.drive(made) if provider_clock is not None else made


@pytest.fixture
def logged(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """What the provider logs through Pulumi (`pulumi.log.info`, `warn`, `error`), by level."""
    lines: dict[str, list[str]] = {"info": [], "warn": [], "error": []}
    for level in lines:
        monkeypatch.setattr(f"pulumi.log.{level}", lambda msg, *_, level=level, **__: lines[level].append(msg))
    return lines


@pytest.fixture(autouse=True)
def _a_run_per_test() -> None:
    """Each test is a run of its own: what an earlier test's checks read once per run (the session's emulator
    serves every test at one address) is not this test's answer."""
    RUN.clear()
