"""`plan --json` is the same text from run to run (a reviewer diffs it): keys sorted, whatever the hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def plan_json(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run([sys.executable, "-m", "components", "plan", "--stack", "local", "--json"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_plan_json_is_identical_across_runs_and_its_keys_are_sorted() -> None:
    first, second = plan_json("1"), plan_json("2")
    assert first == second
    assert first == json.dumps(json.loads(first), indent=2, sort_keys=True) + "\n"
