"""The command line: `python -m components emulator` (or `python -m gcp_training_jobs.emulator`) serves on
127.0.0.1 until SIGINT/SIGTERM. `add_arguments` is the one definition of the options: both commands use it, so
every option the emulator has reaches it whichever way it is started."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from types import FrameType
from typing import Any

DESCRIPTION = ("Loopback HTTP emulator of AI Platform Training (ml v1) and Vertex AI custom and hyperparameter "
               "tuning jobs (aiplatform v1).")


def _duration_arg(text: str) -> float:
    """An option's number of seconds, 0 or more (argparse's type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"durations must be >= 0, got {text}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The emulator's options (every setting of `Emulator`), on `parser`."""
    parser.add_argument("--port", type=int, default=8085, help="TCP port on 127.0.0.1 (0: any free port; default 8085)")
    parser.add_argument("--phase-seconds", type=_duration_arg, default=2.0,
                        help="how long a job stays in each state (QUEUED, PREPARING/PENDING, RUNNING); default 2")
    parser.add_argument("--cancel-seconds", type=_duration_arg, default=0.0,
                        help="how long a cancelled job stays CANCELLING before CANCELLED (default 0)")
    parser.add_argument("--strict-int64", action="store_true",
                        help="refuse int64 fields sent as JSON numbers (the real APIs take numbers and strings)")
    parser.add_argument("--verbose", action="store_true", help="print the verb and path of every request on stderr")


def main(argv: list[str] | None = None) -> int:
    """CLI: serve on 127.0.0.1 until SIGINT/SIGTERM, after printing `emulator listening on URL`."""
    parser = argparse.ArgumentParser(prog="emulator", description=DESCRIPTION)
    add_arguments(parser)
    return serve(parser.parse_args(argv))


def serve(args: argparse.Namespace) -> int:
    """Serve with the options of `add_arguments` until SIGINT/SIGTERM."""
    from gcp_training_jobs.emulator.server import Emulator

    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    previous: dict[signal.Signals, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):  # not the main thread: the caller must stop us
            previous[signum] = signal.signal(signum, on_signal)
    emulator = Emulator(
        args.port,
        args.phase_seconds,
        cancel_seconds=args.cancel_seconds,
        strict_int64=args.strict_int64,
        verbose=args.verbose,
    )
    try:
        emulator.start()
        print(f"emulator listening on {emulator.url}", flush=True)
        while not stopping.wait(0.2):
            pass
    finally:
        emulator.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
