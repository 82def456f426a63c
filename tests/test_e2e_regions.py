"""Jobs in three regions under the real Pulumi engine, against the emulator: a `jobSpec` with its own `region`, a
`tuningJob` in another, a `trainingInput` in a third. `pulumi up` makes each in its region (its resource name's
location), a second `up` changes nothing, and `status`, `logs` and `spend` find and read each where it runs.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing engine skips
these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e_support import (  # noqa: F401 (the emulator fixture)
    LOCAL_BUCKETS,
    Emulator,
    Project,
    offline_config,
    process_emulator,
    project_fixture,
    require_pulumi,
)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()

IMAGE = "us-docker.pkg.dev/local-project/trainers/example:0.1"
L4 = {"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
      "replicaCount": 1, "containerSpec": {"imageUri": IMAGE, "args": ["--epochs=2"]}}
JOBS: dict[str, Any] = {
    "spec": {"region": "europe-west2", "labels": {"team": "vision"},
             "jobSpec": {"workerPoolSpecs": [L4], "scheduling": {"timeout": "3600s"}}},
    "sweep": {"region": "europe-west4", "labels": {"team": "search"}, "tuningJob": {
        "maxTrialCount": 4, "parallelTrialCount": 2,
        "studySpec": {"metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
                      "parameters": [{"parameterId": "lr", "doubleValueSpec": {"minValue": 0.0001, "maxValue": 0.1}}]},
        "trialJobSpec": {"workerPoolSpecs": [L4], "scheduling": {"timeout": "3600s"}}}},
    "legacy": {"labels": {"team": "vision"}, "trainingInput": {
        "region": "asia-southeast1", "scaleTier": "CUSTOM", "masterType": "n1-standard-8",
        "masterConfig": {"imageUri": IMAGE, "acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 1}},
        "scheduling": {"maxRunningTime": "3600s"}}},
}
REGIONS = {"spec": "europe-west2", "sweep": "europe-west4", "legacy": "asia-southeast1"}
CONFIG: dict[str, Any] = offline_config("local", JOBS, buckets=LOCAL_BUCKETS, tpuAccess={"grant": False})


project = project_fixture("regions", CONFIG)


def test_up_makes_each_job_in_its_region(project: Project, emulator: Emulator) -> None:
    emulator.control("reset", {})
    project.up()
    made = {job["labels"]["pulumi-job"].rsplit("_", 1)[0]: job["name"] for job in emulator.jobs().values()}
    assert {name: where.split("/")[3] for name, where in made.items()} == REGIONS
    assert made["sweep"].split("/")[4] == "hyperparameterTuningJobs"
    assert made["spec"].split("/")[4] == made["legacy"].split("/")[4] == "customJobs"
    assert len(emulator.calls("hyperparameterTuningJobs.create")) == 1
    assert len(emulator.calls("customJobs.create")) == 2
    outputs = {r["inputs"]["name"]: r["outputs"] for r in project.resources()}
    assert {name: outputs[name]["resourceName"] for name in REGIONS} == made


def test_a_second_up_changes_nothing(project: Project) -> None:
    assert project.pulumi("preview", "--expect-no-changes", "--diff").returncode == 0


def test_status_logs_and_spend_follow_each_job_to_its_region(project: Project, emulator: Emulator) -> None:
    emulator.control("phase", {"seconds": 0.5})  # every job, made seconds ago, ran for a moment and ended
    try:
        done = project.components("status", "--stack", "regions", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        status = {job["name"]: job for job in json.loads(done.stdout)["jobs"]}
        assert set(status) == set(REGIONS)
        assert {name: (job["region"], job["state"]) for name, job in status.items()} == \
            {name: (region, "SUCCEEDED") for name, region in REGIONS.items()}
        for name, region in REGIONS.items():
            assert status[name]["resourceName"].startswith(f"projects/local-project/locations/{region}/")
        for name in REGIONS:
            logs = project.components("logs", "--stack", "regions", name)
            assert logs.returncode == 0 and logs.stdout.strip(), (name, logs.stderr)
        spent = project.components("spend", "--stack", "regions", "--json")
        assert spent.returncode == 0, spent.stderr
        rows = {row["name"]: row for row in json.loads(spent.stdout)["jobs"]}
        assert {name: rows[name]["region"] for name in REGIONS} == REGIONS
        assert all(rows[name]["hours"] > 0 and rows[name]["complete"] for name in REGIONS)
    finally:
        emulator.control("phase", {"seconds": 1000000})
