"""What the region-per-job tests share: three jobs in three regions (a jobSpec with its own region, a tuningJob,
a trainingInput), and a stack file of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gcp_training_jobs.jobspec.core.names import NAMESPACE, VERTEX

ROOT = Path(__file__).resolve().parents[1]
JOBS = f"{NAMESPACE}:jobs"
IMAGE = "us-docker.pkg.dev/my-project/t/train:1"

H100 = {"region": "us-east5", "jobSpec": {
    "workerPoolSpecs": [{"machineSpec": {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB",
                                         "acceleratorCount": 8}, "replicaCount": 1,
                         "containerSpec": {"imageUri": IMAGE}}],
    "scheduling": {"timeout": "7200s"}}}
SWEEP = {"region": "europe-west4", "tuningJob": {
    "displayName": "sweep", "maxTrialCount": 8, "parallelTrialCount": 2,
    "studySpec": {"metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
                  "parameters": [{"parameterId": "lr", "doubleValueSpec": {"minValue": 0.0001, "maxValue": 0.1}}]},
    "trialJobSpec": {"workerPoolSpecs": [{"machineSpec": {"machineType": "g2-standard-8",
                                                          "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
                                          "replicaCount": 1, "containerSpec": {"imageUri": IMAGE}}],
                     "scheduling": {"timeout": "3600s"}}}}
LEGACY = {"trainingInput": {
    "region": "asia-southeast1", "scaleTier": "CUSTOM", "masterType": "n1-standard-8",
    "masterConfig": {"imageUri": IMAGE, "acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 1}},
    "scheduling": {"maxRunningTime": "3600s"}}}
THREE = {"h100": H100, "sweep": SWEEP, "legacy": LEGACY}


def write(tmp_path: Path, jobs: dict[str, Any], name: str = "three", region: str = "us-central1") -> Path:
    config = {"gcp:project": "my-project", f"{NAMESPACE}:backend": VERTEX, f"{NAMESPACE}:region": region,
              JOBS: jobs}
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False), encoding="utf-8")
    return path
