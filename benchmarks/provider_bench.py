"""Benchmark: HTTP requests and wall time per TrainingJob create, read and delete, against the emulator.

Targets: create 2 requests (the lookup of a live job of the resource, then the create), read 1, delete of a
running job 2 (get, cancel); no discovery fetch (static discovery); the googleapiclient service built once
per process per API. Not a test: figures only.
Run: python benchmarks/provider_bench.py [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gcp_training_jobs.backends import transport  # noqa: E402
from gcp_training_jobs.emulator import Emulator  # noqa: E402
from gcp_training_jobs.resources.training_job import TrainingJobProvider  # noqa: E402

JOB = {"trainingInput": {
    "scaleTier": "CUSTOM", "masterType": "n1-highcpu-16",
    "workerType": "n1-highcpu-16", "workerCount": "9",
    "workerConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "4"}},
    "parameterServerType": "n1-highmem-8", "parameterServerCount": "3",
    "region": "us-central1",
    # a custom container: every prebuilt training image is past its end of availability today
    "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "4"},
                     "imageUri": "us-docker.pkg.dev/bench-project/trainers/resnet:1.0"},
}}


def measure(emulator: Emulator, action: Callable[[], Any]) -> tuple[float, list[str]]:
    before = len(emulator.state.requests())
    start = time.perf_counter()
    action()
    elapsed = time.perf_counter() - start
    return elapsed, [r["method"] for r in emulator.state.requests()[before:]]


def _round_trip(url: str, n: int) -> float:
    """The median time of a bare GET of the emulator's control endpoint: the floor of any API call here."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        with urllib.request.urlopen(url + "_emulator/health", timeout=10) as answer:
            answer.read()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=50)
    n = parser.parse_args().jobs
    with Emulator(port=0, phase_seconds=1e9) as emulator:
        os.environ["GCP_TRAINING_JOBS_API_ENDPOINT"] = emulator.url
        provider = TrainingJobProvider()
        for backend in ("ai-platform", "vertex"):
            times: dict[str, list[float]] = {"create": [], "read": [], "delete": []}
            calls: dict[str, set[tuple[str, ...]]] = {"create": set(), "read": set(), "delete": set()}
            for i in range(n):
                inputs = provider.check({}, {"name": f"bench{i}", "project": "bench", "backend": backend,
                                             "job": JOB, "identity": f"bench/bench/bench/bench{i}"}).inputs
                box: dict[str, Any] = {}

                def create(inputs: dict[str, Any] = inputs, box: dict[str, Any] = box) -> None:
                    box["r"] = provider.create(inputs)

                t, m = measure(emulator, create)
                times["create"].append(t)
                calls["create"].add(tuple(m))
                result = box["r"]

                def read(result: Any = result) -> None:
                    provider.read(result.id, result.outs)

                def delete(result: Any = result) -> None:
                    provider.delete(result.id, result.outs)

                t, m = measure(emulator, read)
                times["read"].append(t)
                calls["read"].add(tuple(m))
                t, m = measure(emulator, delete)
                times["delete"].append(t)
                calls["delete"].add(tuple(m))
            print(f"{backend} ({n} jobs, running when deleted):")
            for op in ("create", "read", "delete"):
                (seq,) = calls[op] if len(calls[op]) == 1 else (sorted(calls[op])[0],)
                print(f"  {op:6} {len(seq)} request(s) {list(seq)}  median {statistics.median(times[op]) * 1e3:.2f} ms"
                      f"  p95 {sorted(times[op])[int(0.95 * (n - 1))] * 1e3:.2f} ms")
        floor = _round_trip(emulator.url, n)
        print(f"floor: one bare HTTP GET to the emulator over loopback (urllib, new connection): median "
              f"{floor * 1e3:.2f} ms; vertex create / floor: {statistics.median(times['create']) / floor:.1f}x "
              "(for 2 requests)")
        discovery = [r for r in emulator.state.requests() if "discovery" in r["path"]]
        print(f"discovery fetches: {len(discovery)}; googleapiclient services built in this process: "
              f"{transport.build_count} (one per API)")


if __name__ == "__main__":
    main()
