"""A hyperparameter tuning job under the real Pulumi engine: `pulumi up`, `refresh` and `destroy` of a stack on
backend vertex whose job has a `hyperparameters` block, against the emulator (its hyperparameterTuningJobs).

The job is created as a Vertex AI HyperparameterTuningJob (never a CustomJob that would drop the study), read
back with its trials (the resource's `trialCount` and `bestTrial` outputs), replaced when its study changes,
and deleted with the stack once finished.

Depends on the provider choosing the tuning backend from the job (gcp_training_jobs.backends.backend_for in
gcp_training_jobs/resources/job_provider.py); until it does, the create is refused at check ("makes the job a Vertex
AI HyperparameterTuningJob, not a CustomJob") and these tests fail at their first step.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing engine skips
these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

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

TUNE: dict[str, Any] = {
    "labels": {"team": "vision"},
    "trainingInput": {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-8",
        "masterConfig": {"imageUri": "us-docker.pkg.dev/local-project/trainers/resnet:1.0",
                         "acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 1}},
        "args": ["--epochs=2"],
        "hyperparameters": {
            "goal": "MAXIMIZE",
            "hyperparameterMetricTag": "accuracy",
            "maxTrials": 4,
            "maxParallelTrials": 2,
            "params": [
                {"parameterName": "learning_rate", "type": "DOUBLE", "minValue": 0.0001, "maxValue": 0.1,
                 "scaleType": "UNIT_LOG_SCALE"},
                {"parameterName": "batch_size", "type": "DISCRETE", "discreteValues": [32, 64, 128]},
            ],
        },
    },
}
CONFIG: dict[str, Any] = offline_config("local", {"tune": TUNE}, buckets=LOCAL_BUCKETS, labels={"env": "local"},
                                         tpuAccess={"grant": False})
CREATE, CUSTOM_CREATE = "hyperparameterTuningJobs.create", "customJobs.create"



project = project_fixture(config=CONFIG)


def tuning_outputs(project: Project) -> dict[str, Any]:
    (resource,) = project.resources()
    outputs: dict[str, Any] = resource["outputs"]
    return outputs


# The steps build on each other, in order, on one stack (as a user's successive `pulumi up`s do).

def test_up_creates_one_hyperparameter_tuning_job(project: Project, emulator: Emulator) -> None:
    emulator.control("reset", {})
    project.up()
    assert len(emulator.calls(CREATE)) == 1 and emulator.calls(CUSTOM_CREATE) == []
    ((job_id, job),) = emulator.jobs().items()
    assert job_id.startswith("tune_") and job["name"].split("/")[-2] == "hyperparameterTuningJobs"
    assert job["studySpec"]["metrics"] == [{"metricId": "accuracy", "goal": "MAXIMIZE"}]
    assert (job["maxTrialCount"], job["parallelTrialCount"]) == (4, 2)
    pool = job["trialJobSpec"]["workerPoolSpecs"][0]
    assert pool["machineSpec"]["acceleratorType"] == "NVIDIA_TESLA_T4"
    assert job["trialJobSpec"]["baseOutputDirectory"]["outputUriPrefix"].startswith("gs://local-job-dir-bucket/")
    assert job["labels"]["team"] == "vision" and job["labels"]["env"] == "local"
    outputs = tuning_outputs(project)
    assert outputs["state"] == "QUEUED" and outputs["jobId"] == job_id
    assert outputs["resourceName"] == job["name"]
    assert outputs["trialCount"] == 0 and outputs.get("bestTrial") is None
    assert project.outputs()["jobs"]["tune"]["state"] == "QUEUED"


def test_a_second_up_changes_nothing(project: Project, emulator: Emulator) -> None:
    assert project.pulumi("preview", "--expect-no-changes", "--diff").returncode == 0
    project.up()
    assert len(emulator.calls(CREATE)) == 1


def test_a_study_change_replaces_the_tuning_job(project: Project, emulator: Emulator) -> None:
    (old_id,) = emulator.jobs()

    def more_trials(job: dict[str, Any]) -> None:
        job["trainingInput"]["hyperparameters"]["maxTrials"] = 6
    project.edit_job("tune", more_trials)
    preview = project.pulumi("preview", "--diff")
    assert "replace" in preview.stdout, preview.stdout
    project.up()
    assert len(emulator.calls(CREATE)) == 2
    jobs = emulator.jobs()
    (new_id,) = [j for j in jobs if j != old_id]
    assert jobs[old_id]["state"] == "JOB_STATE_CANCELLED" and jobs[new_id]["maxTrialCount"] == 6
    assert len(emulator.calls("hyperparameterTuningJobs.cancel")) == 1
    assert tuning_outputs(project)["jobId"] == new_id


def test_refresh_records_the_trials_and_the_best_trial(project: Project, emulator: Emulator) -> None:
    emulator.control("phase", {"seconds": 0})
    project.pulumi("refresh", "--yes", "--skip-preview")
    outputs = tuning_outputs(project)
    assert outputs["state"] == "SUCCEEDED" and outputs["trialCount"] == 6
    best = outputs["bestTrial"]
    assert set(best) == {"id", "metrics", "parameters"} and set(best["metrics"]) == {"accuracy"}
    assert set(best["parameters"]) == {"learning_rate", "batch_size"}
    job = emulator.jobs()[outputs["jobId"]]
    values = {t["id"]: t["finalMeasurement"]["metrics"][0]["value"] for t in job["trials"]}
    assert best["id"] == max(values, key=lambda k: values[k])
    emulator.control("phase", {"seconds": 1000000})


def test_destroy_keeps_the_finished_tuning_job_record(project: Project, emulator: Emulator) -> None:
    finished = tuning_outputs(project)["jobId"]
    project.pulumi("destroy", "--yes", "--skip-preview")
    assert project.resources() == []
    assert emulator.calls("hyperparameterTuningJobs.delete") == []
    assert emulator.jobs()[finished]["state"] == "JOB_STATE_SUCCEEDED"
