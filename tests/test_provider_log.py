"""provider_log.say_once: an ephemeral line through the engine that started the provider (tested under the engine in
tests/test_e2e_consumer.py: the cost line is said once in a preview); without one, or when the engine cannot be
reached, the line still goes to pulumi.log.info."""

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
