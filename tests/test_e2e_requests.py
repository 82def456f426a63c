"""The requests of `pulumi up` under the real engine, counted by the emulator (a separate process): a run's checks
read the quota limits once and the region's live jobs once, however many jobs (gcp_training_jobs.backends.run_cache);
each
job adds its lookup (a live job left by a dead run) and its create. A second `up` is a run of its own. (Checks in
several regions, in threads: tests/test_run_cache.py.)

Needs the `pulumi` CLI, as tests/test_e2e.py does.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_support import Emulator, Project, offline_config, process_emulator, require_pulumi  # noqa: F401 (the fixture)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()
L4 = "custom_model_training_nvidia_l4_gpus"
REGION = "us-central1"


def l4_job(index: int) -> dict[str, Any]:
    return {"jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/req-project/trainers/t:1",
                                             "args": [f"--shard={index}"]}}],
        "scheduling": {"timeout": "7200s"}}}


def requests(emulator: Emulator) -> Counter[str]:
    """The API requests since the last reset, by method and, for a listing, whether it is a region's live jobs
    (the quota review's read: no filter) or one resource's lookup (filtered by its label), and where."""
    counted: Counter[str] = Counter()
    for request in emulator.control("requests"):
        method = request["method"]
        if method.endswith(".list") and method != "quotaInfos.list":
            kind = "lookup" if request["query"].get("filter") else "held"
            method = f"{method} {kind} {request['path'].split('/')[5]}"
        counted[method] += 1
    return counted


def test_a_run_reads_the_quotas_once_and_each_job_adds_a_lookup_and_a_create(tmp_path: Path,
                                                                                        emulator: Emulator) -> None:
    emulator.control("reset", {})
    emulator.control("quotas", {"metric": L4, "region": REGION, "limit": 20})  # a limit: the live jobs are read
    jobs = {f"job-{i}": l4_job(i) for i in range(9)}
    project = Project.copy(tmp_path, PULUMI, emulator, config=offline_config("req", jobs))
    project.up()
    assert requests(emulator) == Counter({"quotaInfos.list": 1, f"customJobs.list held {REGION}": 1,
                                          f"hyperparameterTuningJobs.list held {REGION}": 1,
                                          f"customJobs.list lookup {REGION}": 9, "customJobs.create": 9})
    requests_before = requests(emulator)
    project.edit_config(lambda config: config["gcp-training-jobs:jobs"].update(
        {f"job-{i}": l4_job(i) for i in range(9, 12)}))
    project.up()  # a run of its own: it reads them again, once, for its three new jobs
    second = requests(emulator) - requests_before
    assert {k: v for k, v in second.items() if "lookup" not in k and "get" not in k} == {
        "quotaInfos.list": 1, f"customJobs.list held {REGION}": 1, f"hyperparameterTuningJobs.list held {REGION}": 1,
        "customJobs.create": 3}
