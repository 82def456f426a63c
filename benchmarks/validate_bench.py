"""Benchmark: judge 1,000 generated job specs in one process, then `validate` a folder of them.

Prints specs per second in-process, the whole-process wall time of `python -m components validate` on the
folder, and its ratio to the floor measured in the same run: `python -c "import pydantic, yaml"`, the
least any Python validator of these files must pay (targets on a 2-core machine: one file at most 3x, the
folder at most 4x). Best of --repeat runs each. Not a test: figures only.
Run: python benchmarks/validate_bench.py [--count N]
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gcp_training_jobs.jobspec import catalog  # noqa: E402
from gcp_training_jobs.jobspec.core.errors import SpecError  # noqa: E402
from gcp_training_jobs.jobspec.load import load_job  # noqa: E402


def generated(count: int) -> list[dict[str, Any]]:
    """Specs from the GPU table: every machine/GPU/count cell and its neighbours, cycled to `count`."""
    cells = [(m, g, c) for m, row in catalog.GPU_COUNTS.items() for g, counts in row.items()
             for c in (*counts, max(counts) + 1)]
    regions = itertools.cycle(catalog.GPU_REGIONS)
    specs = []
    for i, (machine, gpu, n) in zip(range(count), itertools.cycle(cells), strict=False):
        specs.append({"trainingInput": {
            "scaleTier": "CUSTOM", "masterType": machine, "region": next(regions) if i % 3 else "us-central1",
            "masterConfig": {"acceleratorConfig": {"type": gpu, "count": n}},
            "workerType": machine, "workerCount": i % 10,
            "runtimeVersion": "2.11", "pythonModule": "trainer.task",
            "packageUris": ["gs://bench-bucket/trainer.tar.gz"],
        }})
    return specs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    count, repeat = options.count, options.repeat
    specs = generated(count)

    start = time.perf_counter()
    valid = 0
    for spec in specs:
        try:
            load_job(spec)
            valid += 1
        except SpecError:
            pass
    elapsed = time.perf_counter() - start
    print(f"in-process: {count} specs ({valid} valid, {count - valid} invalid) in {elapsed:.3f} s "
          f"= {count / elapsed:,.0f} specs/s")

    # The project's modules byte-compiled, as pip compiles the floor's packages at install: a checkout where
    # PYTHONDONTWRITEBYTECODE is set (CI, sandboxes) would otherwise compile them from source on every run.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "gcp_training_jobs")], check=True,
                   capture_output=True)
    with tempfile.TemporaryDirectory() as folder:
        for i, spec in enumerate(specs):
            Path(folder, f"job_{i:04d}.yaml").write_text(yaml.safe_dump(spec))
        floor = best(repeat, [sys.executable, "-c", "import pydantic, yaml"])
        one = best(repeat, [sys.executable, "-m", "components", "validate", "-q", str(Path(folder, "job_0000.yaml"))])
        wall = best(repeat, [sys.executable, "-m", "components", "validate", "-q", folder])
        done = subprocess.run([sys.executable, "-m", "components", "validate", "-q", folder], cwd=ROOT,
                              capture_output=True, text=True)
        problems = len(done.stdout.splitlines())
    print(f"floor: `python -c \"import pydantic, yaml\"`: {floor:.3f} s")
    print(f"whole process: `python -m components validate -q` on one file: {one:.3f} s, "
          f"{one / floor:.1f}x the floor (target: at most 3x)")
    print(f"whole process: `python -m components validate -q` on a folder of {count} files: {wall:.3f} s "
          f"(exit {done.returncode}, {problems} problem lines), {wall / floor:.1f}x the floor (target: at most 4x)")


def best(repeat: int, command: list[str]) -> float:
    """The fastest of `repeat` runs of a command, in seconds (the least disturbed by the machine)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
    return min(times)


if __name__ == "__main__":
    main()
