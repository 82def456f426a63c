"""The command line: `python -m components emulator` (or `python -m components.emulator`) serves on
127.0.0.1 until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from types import FrameType
from typing import Any

from components.emulator.server import Emulator

DESCRIPTION = "Loopback HTTP emulator of AI Platform Training (ml v1) and Vertex AI custom jobs (aiplatform v1)."


def main(argv: list[str] | None = None) -> int:
    """CLI: serve on 127.0.0.1 until SIGINT/SIGTERM, after printing `emulator listening on URL`."""
    parser = argparse.ArgumentParser(prog="emulator", description=DESCRIPTION)
    parser.add_argument("--port", type=int, default=8085, help="TCP port (0: any free port; default 8085)")
    parser.add_argument("--phase-seconds", type=float, default=2.0, help="duration of each job phase")
    parser.add_argument("--cancel-seconds", type=float, default=0.0, help="how long CANCELLING lasts")
    parser.add_argument("--strict-int64", action="store_true", help="refuse int64 fields sent as numbers")
    parser.add_argument("--verbose", action="store_true", help="print the verb and path of every request")
    args = parser.parse_args(argv)
    if args.phase_seconds < 0 or args.cancel_seconds < 0:
        parser.error("durations must be >= 0")

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
