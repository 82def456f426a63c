"""Files from outside the project, as people who ran them on Vertex AI wrote them, judged as Vertex judges them: each
written to disk and read by `validate` (exit code and the project's words), and, for a CustomJobSpec, sent to the
emulator's create, whose verdict must agree (its own transcription of Vertex's limits)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from googleapiclient.errors import HttpError

from gcp_training_jobs.emulator import Emulator, vertex_limits
from gcp_training_jobs.jobspec import catalog

ROOT = Path(__file__).resolve().parents[1]
PARENT = "projects/demo-project/locations/us-central1"
IMAGE = "us-docker.pkg.dev/my-proj/trainers/llm:1.0"


def pool(machine: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"machineSpec": machine, "replicaCount": 1, "containerSpec": {"imageUri": IMAGE}, **fields}


H200_ON_PD_SSD = {"workerPoolSpecs": [pool(
    {"machineType": "a3-ultragpu-8g", "acceleratorType": "NVIDIA_H200_141GB", "acceleratorCount": 8},
    diskSpec={"bootDiskType": "pd-ssd", "bootDiskSizeGb": 1000})]}
NO_ACCELERATOR = {"workerPoolSpecs": [pool({"machineType": "e2-standard-4",
                                            "acceleratorType": "ACCELERATOR_TYPE_UNSPECIFIED"})]}
TPU_V6E = {"workerPoolSpecs": [pool({"machineType": "cloud-tpu", "acceleratorType": "TPU_V6E",
                                     "acceleratorCount": 8})]}
#: A TPU v3 Pod (32 cores on cloud-tpu), as Google's TPU v2/v3 recipe writes one: it runs in europe-west4 only.
TPU_V3_POD = {"workerPoolSpecs": [pool({"machineType": "cloud-tpu", "acceleratorType": "TPU_V3",
                                         "acceleratorCount": 32})]}
UNEXPANDED = {"workerPoolSpecs": [pool({"machineType": "n1-standard-4"})],
              "baseOutputDirectory": {"outputUriPrefix": "gs://${BUCKET_NAME}/runs"}}
PARAMETERS_OUTSIDE_STUDY = {
    "studySpec": {"metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}]},
    "parameters": [{"parameterId": "lr", "doubleValueSpec": {"minValue": 0.001, "maxValue": 0.1}}],
    "trialJobSpec": {"workerPoolSpecs": [pool({"machineType": "n1-standard-4"})]},
    "maxTrialCount": 4, "parallelTrialCount": 2}
PARAMS_BESIDE_HYPERPARAMETERS = {"trainingInput": {
    "scaleTier": "BASIC", "region": "us-central1", "masterConfig": {"imageUri": IMAGE},
    "hyperparameters": {"goal": "MAXIMIZE", "hyperparameterMetricTag": "accuracy", "maxTrials": 4},
    "params": [{"parameterName": "lr", "type": "DOUBLE", "minValue": 0.001, "maxValue": 0.1}]}}
WAIT_ON_STANDARD = {"trainingInput": {
    "scaleTier": "BASIC", "region": "us-central1", "masterConfig": {"imageUri": IMAGE},
    "scheduling": {"maxRunningTime": "7200s", "maxWaitTime": "3600s"}}}


def validate(tmp_path: Path, name: str, job: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(job), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "components", "validate", "--backend", "vertex", "--region",
                           "us-central1", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("name", "job", "path", "words"), [
    ("h200-pd-ssd", H200_ON_PD_SSD, "workerPoolSpecs[0].diskSpec.bootDiskType",
     "a3-ultragpu-8g boots only from Hyperdisk, not Persistent Disk"),
    ("tpu-v6e", TPU_V6E, "workerPoolSpecs[0].machineSpec.acceleratorType",
     "allowed: machineType ct6e-standard-1t, ct6e-standard-4t, ct6e-standard-8t with a tpuTopology"),
    ("tpu-v3-pod", TPU_V3_POD, "workerPoolSpecs[0].machineSpec.acceleratorCount",
     "32 TPU_V3 cores is a TPU v3 Pod, which Vertex AI does not offer for training in us-central1; allowed: 8 cores "
     "(one TPU v3) in us-central1, or a TPU v3 Pod in europe-west4"),
    ("bucket-variable", UNEXPANDED, "baseOutputDirectory.outputUriPrefix",
     "holds an unexpanded variable (${BUCKET_NAME})"),
    ("parameters-outside", PARAMETERS_OUTSIDE_STUDY, "parameters",
     "it belongs inside studySpec; allowed: studySpec.parameters"),
    ("params-beside", PARAMS_BESIDE_HYPERPARAMETERS, "trainingInput.params",
     "it belongs inside hyperparameters; allowed: trainingInput.hyperparameters.params"),
])
def test_a_file_vertex_refuses_is_refused_with_its_fix(tmp_path: Path, name: str, job: dict[str, Any], path: str,
                                                       words: str) -> None:
    done = validate(tmp_path, name, job)
    assert done.returncode == 1, done.stderr
    told = done.stdout + done.stderr
    assert f"{path}: " in told and words in told and "Traceback" not in told
    assert "did you mean" not in told and "has '$'" not in told


def test_no_accelerator_is_no_accelerator(tmp_path: Path) -> None:
    done = validate(tmp_path, "e2", NO_ACCELERATOR)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_wait_limit_vertex_would_drop_is_a_warning_naming_it(tmp_path: Path) -> None:
    done = validate(tmp_path, "wait", WAIT_ON_STANDARD)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning: trainingInput.scheduling.maxWaitTime: 3600s is not kept on Vertex AI" in done.stderr
    assert "FLEX_START" in done.stderr


def test_the_emulator_judges_them_as_vertex_does(emulator: Emulator, vertex_client: Any) -> None:
    jobs = vertex_client.projects().locations().customJobs()
    created = jobs.create(parent=PARENT, body={"displayName": "e2", "jobSpec": NO_ACCELERATOR}).execute()
    assert created["state"] == "JOB_STATE_QUEUED"
    with pytest.raises(HttpError) as refused:
        jobs.create(parent=PARENT, body={"displayName": "h200", "jobSpec": H200_ON_PD_SSD}).execute()
    assert refused.value.status_code == 400
    assert "The machine type 'a3-ultragpu-8g' requires the boot disk type to be 'hyperdisk-balanced'" in str(
        refused.value)
    fixed = {"workerPoolSpecs": [{**H200_ON_PD_SSD["workerPoolSpecs"][0],
                                  "diskSpec": {"bootDiskType": "hyperdisk-balanced", "bootDiskSizeGb": 1000}}]}
    assert jobs.create(parent=PARENT, body={"displayName": "h200", "jobSpec": fixed}).execute()["name"]


def test_the_emulator_runs_a_tpu_pod_only_where_vertex_offers_it(emulator: Emulator, vertex_client: Any) -> None:
    """The TPU v3 Pod validate refuses in us-central1 the emulator refuses there too, and both take it in
    europe-west4."""
    jobs = vertex_client.projects().locations().customJobs()
    with pytest.raises(HttpError) as refused:
        jobs.create(parent=PARENT, body={"displayName": "pod", "jobSpec": TPU_V3_POD}).execute()
    assert refused.value.status_code == 400
    assert 'TPU Pod of 32 "TPU_V3" cores is not supported in region "us-central1"' in str(refused.value)
    europe = PARENT.replace("us-central1", "europe-west4")
    assert jobs.create(parent=europe, body={"displayName": "pod", "jobSpec": TPU_V3_POD}).execute()["name"]


def test_the_two_transcriptions_of_the_hyperdisk_machines_agree() -> None:
    assert catalog.HYPERDISK_ONLY_MACHINES == vertex_limits.HYPERDISK_ONLY_MACHINES
    assert set(catalog.HYPERDISK_ONLY_MACHINES) <= set(catalog.FIXED_ACCELERATOR_MACHINES)
    assert catalog.HYPERDISK_BOOT_DISK_TYPES == (vertex_limits.BOOT_DISK_TYPE_HYPERDISK,)
