"""provider_log: a line said once in a run. say_once: an ephemeral line through the engine that started the
provider (tested under the engine in tests/test_e2e_consumer.py: the cost line is said once in a preview); without one,
or when the engine cannot be reached, the line still goes to pulumi.log.info. warn_once: a job's warning, once."""

from __future__ import annotations

import socket

import pytest

from gcp_training_jobs.resources import provider_log


@pytest.fixture
def said(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    lines: list[str] = []
    monkeypatch.setattr("gcp_training_jobs.resources.provider_log.pulumi.log.info",
                        lambda msg, *_, **__: lines.append(msg))
    return lines


@pytest.mark.parametrize(("argv", "address"), [
    (["__main__.py", "127.0.0.1:40123"], "127.0.0.1:40123"),
    (["__main__.py"], None),
    (["pytest", "tests/test_provider_log.py"], None),
    (["__main__.py", "203.0.113.9:40123"], None),  # never a remote address
])
def test_the_engine_address_is_the_first_argument_on_loopback(monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                                              address: str | None) -> None:
    monkeypatch.setattr("sys.argv", argv)
    assert provider_log.engine_address() == address


def test_without_an_engine_the_line_goes_to_the_log(monkeypatch: pytest.MonkeyPatch, said: list[str]) -> None:
    monkeypatch.setattr("sys.argv", ["pytest"])
    provider_log.say_once("job l4: $0.61/h")
    assert said == ["job l4: $0.61/h"]


def test_an_engine_that_cannot_be_reached_still_gets_the_line_said(monkeypatch: pytest.MonkeyPatch,
                                                                  said: list[str]) -> None:
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setattr("sys.argv", ["__main__.py", f"127.0.0.1:{port}"])
    provider_log.say_once("job l4: $0.61/h")
    assert said == ["job l4: $0.61/h"]


def test_a_line_is_said_once_in_a_run_however_often_check_says_it(monkeypatch: pytest.MonkeyPatch,
                                                                  said: list[str]) -> None:
    """On a replacement the engine checks the new inputs twice (with the old ones, then without: step_generator's
    "recompute the default values"): the second check's cost line is not said again; another line is."""
    monkeypatch.setattr("sys.argv", ["pytest"])
    for line in ("job l4: $0.61/h", "job l4: $0.61/h", "job t4: $0.82/h"):
        provider_log.say_once(line)
    assert said == ["job l4: $0.61/h", "job t4: $0.82/h"]


def test_a_jobs_warning_is_warned_once_in_a_run_and_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job's warnings (a credential's, by field and kind) are said once however often the run checks the job; the
    line is masked (a W&B key named as a credential in an echoed arg never reaches the log)."""
    warned: list[str] = []
    monkeypatch.setattr("gcp_training_jobs.resources.provider_log.pulumi.log.warn",
                        lambda msg, *_, **__: warned.append(msg))
    key = "3f9a2c1b7e4d5a6f8091" + "a2b3c4d5e6f708192a3b"
    for line in ("job w: env[0].value: holds what looks like a value named as a credential",) * 2 + \
            (f"job w: arg --wandb_api_key={key} is echoed",):
        provider_log.warn_once(line)
    assert warned == ["job w: env[0].value: holds what looks like a value named as a credential",
                      "job w: arg --wandb_api_key=<value named as a credential, not shown> is echoed"]
