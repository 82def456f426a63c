"""Benchmark: `python -m components diff --base HEAD` in a monorepo where one stack file of many changed, against
the same diff over that one stack alone.

    venv/bin/python benchmarks/diff_bench.py [--stacks 40] [--jobs 10] [--runs 3]

Writes two scratch git repositories holding this project's Pulumi.yaml and __main__.py: one with `--stacks` stack
files of `--jobs` Vertex jobs each, one with only the first of them; commits them, then changes one job's args in
that first stack (`--epochs=5` -> `--epochs=10`) in both working trees. Each diff runs as a user runs it (a new
process, so imports count). A stack whose files are the same on both sides is judged once, its program not run, so
the diff's cost follows the change: the ratio of the monorepo's best time to the one stack's best time, from the
same run, is the figure (target: at most 2x). It also prints each diff's ratio to the floor any Pulumi program's
plan pays (`import pulumi, pulumi_gcp, pydantic, yaml`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.whole_process import FLOOR, ROOT, floor_seconds, timed_command  # noqa: E402

TARGET_RATIO = 2.0


def job(stack: int, index: int) -> dict[str, Any]:
    """A one-L4 Spot job with its own image tag and epochs."""
    return {"labels": {"team": f"t{stack}"}, "jobSpec": {
        "workerPoolSpecs": [{"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                             "acceleratorCount": 1},
                             "replicaCount": 1,
                             "containerSpec": {"imageUri": f"us-central1-docker.pkg.dev/my-ml-{stack:02d}/t/t:{index}",
                                               "args": [f"--epochs={index + 1}"]}}],
        "scheduling": {"strategy": "SPOT", "timeout": "3600s"}}}


def stack_text(stack: int, jobs: int) -> str:
    project = f"my-ml-{stack:02d}"
    config = {"gcp:project": project, "gcp:region": "us-central1",
              "gcp-training-jobs:buckets": {"staging": f"{project}-staging", "jobDir": f"{project}-jobs"},
              "gcp-training-jobs:jobs": {f"job-{i:02d}": job(stack, i) for i in range(jobs)}}
    return json.dumps({"config": config}, indent=1)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args], cwd=repo,
                   check=True, capture_output=True)


def monorepo(folder: Path, stacks: int, jobs: int) -> Path:
    """A committed project of `stacks` stacks, the first one's job-04 then changed in the working tree."""
    (folder / "stacks").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy2(ROOT / name, folder / name)
    for stack in range(stacks):
        (folder / f"stacks/Pulumi.s{stack:02d}.yaml").write_text(stack_text(stack, jobs))
    _git(folder, "init", "-q", "-b", "main")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-qm", "base")
    changed = folder / "stacks/Pulumi.s00.yaml"
    text = changed.read_text()
    assert '"--epochs=5"' in text
    changed.write_text(text.replace('"--epochs=5"', '"--epochs=10"'))
    return folder


def run_diff(repo: Path, env: dict[str, str]) -> tuple[float, str]:
    return timed_command(["diff", "--base", "HEAD"], cwd=repo, env=env, where=f" in {repo}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stacks", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="diff-bench-") as tmp:
        folder = Path(tmp)
        env = {key: value for key, value in os.environ.items() if not key.startswith("PULUMI_")}
        env.update(PYTHONPATH=str(ROOT), GCP_TRAINING_JOBS_BUILD_DIR=str(folder / "build"),
                   GCP_TRAINING_JOBS_PRICES_FILE=str(folder / "no-refreshed-prices.json"))
        many = monorepo(folder / "many", args.stacks, args.jobs)
        one = monorepo(folder / "one", 1, args.jobs)
        times: dict[str, list[float]] = {"many": [], "one": []}
        outputs: dict[str, str] = {}
        for _ in range(args.runs):  # interleaved, so a busy moment weighs on both
            for label, repo in (("many", many), ("one", one)):
                elapsed, outputs[label] = run_diff(repo, env)
                times[label].append(elapsed)
    if "--epochs=5 -> --epochs=10" not in outputs["many"]:
        print("warning: the monorepo's diff does not say the change in words (--epochs=5 -> --epochs=10)")
    floor = floor_seconds(args.runs)
    best_many, best_one = min(times["many"]), min(times["one"])
    ratio = best_many / best_one
    print(f"floor: `python -c \"{FLOOR}\"`: {floor:.2f} s")
    print(f"diff --base HEAD, {args.stacks} stacks of {args.jobs} jobs, one changed: best {best_many:.2f} s "
          f"({best_many / floor:.1f}x the floor)")
    print(f"diff --base HEAD, that one stack alone: best {best_one:.2f} s ({best_one / floor:.1f}x the floor)")
    print(f"ratio, {args.stacks} stacks to the one stack alone: {ratio:.2f}x (target <= {TARGET_RATIO:.0f}x)")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
