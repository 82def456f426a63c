"""What the whole-process benchmarks share (plan_bench, diff_bench): a command run as a user runs it, in a new
process so that imports count, and the floor any plan of a Pulumi program pays."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What any plan of a Pulumi program pays before it does anything: its imports.
FLOOR = "import pulumi, pulumi_gcp, pydantic, yaml"


def timed_command(args: list[str], *, cwd: Path, env: Mapping[str, str] | None = None,
                  where: str = "") -> tuple[float, str]:
    """`python -m components ARGS` in `cwd`: its wall time and output. A failure ends the benchmark with the
    command's output (`where`: after its exit code, e.g. ` in FOLDER`)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "components", *args], cwd=cwd, env=env, capture_output=True,
                          text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{args[0]} failed ({done.returncode}){where}:\n{done.stdout}{done.stderr}")
    return elapsed, done.stdout


def floor_seconds(runs: int) -> float:
    """The best of `runs` wall times of `python -c FLOOR`."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", FLOOR], cwd=ROOT, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return min(times)
