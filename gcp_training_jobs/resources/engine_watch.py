"""The provider dies with its engine: no create, cancel, delete or relabel is sent for an engine that is gone.

The engine (the `pulumi` CLI) starts the dynamic provider (`pulumi-resource-pulumi-python`, a shell script that runs
`python -m pulumi.dynamic ENGINE_ADDRESS`) in a process group of its own, so a SIGKILL of the CLI does not reach it,
and the Python dynamic provider never asks whether its engine still lives: it would serve on, finish a create in
flight, send it again after a backoff, create at the next placement, each a job the state never learns of. Three
signs tell that the engine is gone, none of them asks the engine anything:

- its pipe on the provider's standard input (the engine starts every plugin with one, holds its only writing end and
  never writes: pulumi/pulumi sdk/go/common/resource/plugin/plugin.go, `cmd.StdinPipe()`) reads end-of-file;
- its address (the provider's first argument, the engine's gRPC server) refuses a connection;
- the provider's parent (the script the engine started) is another process.

`start`, called by the provider's `configure` in the engine's provider process only (and by the provider package's
plugin, `resources.package.serve`, before it serves), starts one daemon thread per
process that waits on them and ends the process at once (`os._exit`: no answer in flight is read, nothing else is
sent); `guard`, called by the lifecycle right before each create, cancel, delete or relabel is sent (and before each
of its retries), reads them again and ends the process the same way. Outside the engine's provider process (the
command line, tests, a program) neither does anything.

The watch is process state, not the provider's: the provider is pickled into every job's state and stays tiny (no
thread, no engine on `self`); the one watch a process runs is started once, under a lock.
"""

from __future__ import annotations

import os
import select
import socket
import stat
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

#: How often the watch reads the signs it can only poll (the parent, the address), in seconds.
POLL_SECONDS: Final = 0.25
#: The exit status of a provider ended because its engine is gone (sysexits' EX_UNAVAILABLE).
GONE_STATUS: Final = 69
#: The module `python -m pulumi.dynamic` runs: the engine's dynamic provider process.
PROVIDER_MAIN: Final = "pulumi.dynamic.__main__"


@dataclass(frozen=True)
class Engine:
    """What this process knows of the engine that started it: its gRPC address, the parent it started, and whether
    standard input is the engine's pipe."""

    address: tuple[str, int] | None
    parent: int
    stdin_pipe: bool

    @classmethod
    def of_process(cls, argv: Sequence[str] | None = None, main: str | None = None) -> Engine | None:
        """The engine of this process when it is the engine's dynamic provider (`python -m pulumi.dynamic ADDRESS`),
        else None."""
        if main is None:
            spec = getattr(sys.modules.get("__main__"), "__spec__", None)
            main = getattr(spec, "name", None)
        if main != PROVIDER_MAIN:
            return None
        return cls.of_plugin(sys.argv[1:] if argv is None else argv)

    @classmethod
    def of_plugin(cls, argv: Sequence[str]) -> Engine:
        """The engine of a plugin process whose arguments hold the engine's address: the dynamic provider's, and the
        provider package's (resources.package.serve), started by the engine directly or through a language host."""
        return cls(next((found for arg in argv if (found := address_of(arg)) is not None), None), os.getppid(),
                   _is_pipe(0))

    def gone(self) -> bool:
        """Whether the engine is gone: our parent changed, its pipe reads end-of-file, its address refuses."""
        if os.getppid() != self.parent:
            return True
        if self.stdin_pipe and _at_end(0):
            return True
        return self.address is not None and _refused(self.address)


def address_of(text: str) -> tuple[str, int] | None:
    """`HOST:PORT` (the engine's address as the engine passes it) as a socket address, else None."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def _is_pipe(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


def _at_end(fd: int, timeout: float = 0.0) -> bool:
    """Whether the pipe `fd` reads end-of-file (waiting at most `timeout` seconds for it to be readable). The engine
    never writes to it: anything readable is its end (a byte would be read and dropped)."""
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        return bool(readable) and os.read(fd, 4096) == b""
    except OSError:
        return True  # the descriptor is gone: so is what held it open


def _refused(address: tuple[str, int]) -> bool:
    """Whether the engine's address refuses a connection (nothing listens there any more). A slow answer is not a
    refusal: an engine under load is alive."""
    try:
        with socket.create_connection(address, timeout=2.0):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


def end() -> None:
    """End this process at once: its engine is gone, nobody reads an answer, nothing more may be sent."""
    os._exit(GONE_STATUS)


class _Watch:
    """The one watch of this process: the engine watched (None: not the engine's provider process) and its thread,
    started once under a lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.engine: Engine | None = None

    def start(self, engine: Engine) -> None:
        with self._lock:
            if self.engine is not None:
                return
            self.engine = engine
            threading.Thread(target=_watch, args=(engine,), name="engine-watch", daemon=True).start()


_WATCH: Final = _Watch()


def _watch(engine: Engine) -> None:
    """Wait for a sign that the engine is gone, then end the process: its pipe at once (the read returns the moment
    the engine dies), its parent and address every POLL_SECONDS (its address only where no pipe tells)."""
    while True:
        if engine.stdin_pipe:
            if _at_end(0, POLL_SECONDS):
                end()
        else:
            threading.Event().wait(POLL_SECONDS)
            if engine.address is not None and _refused(engine.address):
                end()
        if os.getppid() != engine.parent:
            end()


def start(engine: Engine | None = None) -> bool:
    """Watch this process's engine (`engine`, else the engine's provider process's own; none: not started); whether a
    watch runs. Called by every provider's `configure`: the first starts it, the others find it started."""
    engine = engine if engine is not None else Engine.of_process()
    if engine is None:
        return _WATCH.engine is not None
    _WATCH.start(engine)
    return True


def guard() -> None:
    """Right before a create, cancel, delete or relabel is sent: end the process if its engine is gone (nothing is
    sent for an engine that cannot record it). Nothing outside the engine's provider process."""
    engine = _WATCH.engine
    if engine is not None and engine.gone():
        end()
