"""Benchmark: the whole-process time of `python -m components plan` on a stack of 100 jobs.

    venv/bin/python benchmarks/plan_bench.py [--jobs 100] [--runs 3]

Generates `Pulumi.bench.yaml` (GPU jobs of varied shapes, TPU jobs, container jobs; one trainer package
shared by the package jobs) into a temporary folder, runs the plan as a user would (a new process, so
imports and the program's whole run count) and prints the best and median wall times and the number of
resources registered. Target: under 5 s for 100 jobs.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.whole_process import FLOOR, ROOT, floor_seconds, timed_command  # noqa: E402

TARGET_SECONDS = 5.0
#: (machine type, GPU, count) shapes the AI Platform Training GPU guide allows on n1 machines in us-central1.
SHAPES = [("n1-standard-8", "NVIDIA_TESLA_T4", 1), ("n1-standard-8", "NVIDIA_TESLA_T4", 2),
          ("n1-highcpu-16", "NVIDIA_TESLA_T4", 4), ("n1-standard-16", "NVIDIA_TESLA_V100", 2),
          ("n1-highmem-8", "NVIDIA_TESLA_P100", 1), ("n1-standard-4", None, None)]


def job(index: int) -> dict[str, Any]:
    """Job number `index`: mostly packaged GPU clusters, every tenth a container job."""
    if index % 10 == 9:
        return {"trainingInput": {"scaleTier": "CUSTOM", "masterType": "n1-standard-8",
                                  "masterConfig": {"imageUri": f"us-docker.pkg.dev/my-ml-bench/trainers/t:{index}"},
                                  "args": [f"--seed={index}"]}}
    machine, gpu, count = SHAPES[index % len(SHAPES)]
    ti: dict[str, Any] = {"scaleTier": "CUSTOM", "masterType": machine, "runtimeVersion": "2.11",
                          "pythonVersion": "3.7", "pythonModule": "trainer.task",
                          "args": [f"--seed={index}", "--job-dir=${jobDir}"]}
    if gpu:
        ti["masterConfig"] = {"acceleratorConfig": {"type": gpu, "count": count}}
    if index % 3 == 0:
        ti.update(workerType=machine, workerCount=index % 8 + 1,
                  workerConfig=ti.get("masterConfig", {}), parameterServerType="n1-highmem-8",
                  parameterServerCount=2)
        if not ti["workerConfig"]:
            del ti["workerConfig"]
    return {"trainer": {"path": "trainers/example"}, "labels": {"batch": f"b{index // 25}"}, "trainingInput": ti}


def write_stack(folder: Path, jobs: int) -> Path:
    config = {
        "gcp:project": "my-ml-bench",
        "gcp:region": "us-central1",
        "gcp-training-jobs:labels": {"env": "bench"},
        "gcp-training-jobs:jobs": {f"job-{i:03d}": job(i) for i in range(jobs)},
    }
    path = folder / "Pulumi.bench.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False), encoding="utf-8")
    return path


def run_once(stacks: Path, build: Path) -> tuple[float, str]:
    # The packaged shapes run on prebuilt runtime containers, all past their end of availability on Google's
    # page today: the stack is judged as of a day they were offered, so the workload stays comparable.
    env = {**os.environ, "GCP_TRAINING_JOBS_BUILD_DIR": str(build), "GCP_TRAINING_JOBS_TODAY": "2024-06-01"}
    return timed_command(["plan", "--stack", "bench", "--stacks-dir", str(stacks)], cwd=ROOT, env=env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="plan-bench-") as tmp:
        folder = Path(tmp)
        write_stack(folder, args.jobs)
        times, output = [], ""
        for _ in range(args.runs):
            elapsed, output = run_once(folder, folder / "build")
            times.append(elapsed)
    summary = re.search(r"^(\d+) resources to create \((\d+) custom resources, (\d+) components\)$", output,
                        re.MULTILINE)
    resources = summary.group(0) if summary else "(no summary line)"
    best, median = min(times), statistics.median(times)
    floor = floor_seconds(args.runs)
    print(f"floor: `python -c \"{FLOOR}\"` (what any plan of a Pulumi program pays): {floor:.2f} s")
    print(f"plan of {args.jobs} jobs, {args.runs} runs: best {best:.2f} s, median {median:.2f} s "
          f"(target < {TARGET_SECONDS:.0f} s); {resources}")
    print(f"ratio to the floor: {best / floor:.1f}x")
    return 0 if best < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
