"""The provider's process ends with its engine (resources/engine_watch.py): real processes, a real pipe and a real
socket standing for the engine; the engine under test is gone when its pipe closes or its address refuses. Each wait
is a process's exit within a deadline, never a sleep. tests/test_e2e_crash.py kills the real engine."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gcp_training_jobs.resources import engine_watch
from gcp_training_jobs.resources.engine_watch import GONE_STATUS, Engine

ROOT = Path(__file__).resolve().parents[1]
#: How long a watched process may take to end once its engine is gone (its poll is engine_watch.POLL_SECONDS).
DEADLINE_SECONDS = 10.0


def watched(address: tuple[str, int] | None, stdin: int | None) -> subprocess.Popen[str]:
    """A process whose watch is started on an engine at `address` with `stdin` (a pipe or not), ready when it says so;
    it would wait forever on its own."""
    code = textwrap.dedent(f"""
        import os, stat, sys, threading
        from gcp_training_jobs.resources import engine_watch
        pipe = stat.S_ISFIFO(os.fstat(0).st_mode)
        engine_watch.start(engine_watch.Engine({address!r}, os.getppid(), pipe))
        print("ready", flush=True)
        threading.Event().wait()
        """)
    child = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdin=stdin, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    return child


def test_the_process_ends_when_its_engines_pipe_closes() -> None:
    reading, writing = os.pipe()
    child = watched(None, reading)
    os.close(reading)
    try:
        with pytest.raises(subprocess.TimeoutExpired):  # the engine is there: it runs on
            child.wait(timeout=1.0)
        os.close(writing)  # the engine dies: its end of the pipe closes
        assert child.wait(timeout=DEADLINE_SECONDS) == GONE_STATUS
    finally:
        child.kill()
        child.wait()


def test_the_process_ends_when_its_engines_address_refuses() -> None:
    engine = socket.create_server(("127.0.0.1", 0))
    child = watched(engine.getsockname()[:2], subprocess.DEVNULL)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=1.0)
        engine.close()
        assert child.wait(timeout=DEADLINE_SECONDS) == GONE_STATUS
    finally:
        child.kill()
        child.wait()


def test_an_engine_is_gone_when_its_address_refuses_or_its_process_changed() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        address = server.getsockname()[:2]
        assert not Engine(address, os.getppid(), False).gone()
        assert Engine(address, os.getppid() + 1, False).gone()  # another parent: the one the engine started died
    assert Engine(address, os.getppid(), False).gone()


def test_outside_the_engines_provider_process_nothing_is_watched() -> None:
    assert Engine.of_process(argv=["127.0.0.1:4321"], main="__main__") is None
    assert engine_watch.start() is False  # pytest is not `python -m pulumi.dynamic`
    engine_watch.guard()  # and the guard lets everything through
    found = Engine.of_process(argv=["127.0.0.1:4321"], main=engine_watch.PROVIDER_MAIN)
    assert found is not None and found.address == ("127.0.0.1", 4321) and found.parent == os.getppid()


def test_the_provider_packages_plugin_watches_the_engine_named_in_its_arguments() -> None:
    """The package's plugin (resources.package.serve) is no `python -m pulumi.dynamic`: its engine is read from its
    arguments whatever its main module, so it too ends with its engine."""
    found = Engine.of_plugin(["127.0.0.1:4321"])
    assert found.address == ("127.0.0.1", 4321) and found.parent == os.getppid()
    assert Engine.of_plugin([]).address is None  # no address given: its parent and pipe still tell
