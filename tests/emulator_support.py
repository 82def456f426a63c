"""What the emulator's test modules share: the project and region they use, an ml v1 Job and a Vertex CustomJob
like the guides', and calls through Google's clients and the emulator's HTTP API."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

import pytest
from googleapiclient.errors import HttpError

from gcp_training_jobs.emulator import Emulator

PROJECT = "demo-project"
PARENT = f"projects/{PROJECT}"
REGION = "us-central1"
VX_PARENT = f"projects/{PROJECT}/locations/{REGION}"
RFC3339_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def ml_body(job_id: str = "train_1", **training: Any) -> dict[str, Any]:
    """An ml v1 Job like the AI Platform Training guides' (int64 fields as strings, as the project sends them)."""
    training_input: dict[str, Any] = {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-8",
        "masterConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
        "workerType": "n1-standard-8",
        "workerCount": "2",
        "workerConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
        "region": REGION,
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "pythonModule": "trainer.task",
        "packageUris": ["gs://demo-bucket/trainer-0.1.tar.gz"],
        "args": ["--epochs", "10"],
        "jobDir": "gs://demo-bucket/out",
        "scheduling": {"maxRunningTime": "7200s"},
    }
    training_input.update(training)
    return {"jobId": job_id, "labels": {"team": "vision"}, "trainingInput": training_input}


def vertex_body(display_name: str = "train-1", labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A Vertex CustomJob with a chief pool (python package) and a worker pool (container)."""
    return {
        "displayName": display_name,
        "labels": labels if labels is not None else {"team": "vision"},
        "jobSpec": {
            "workerPoolSpecs": [
                {
                    "machineSpec": {
                        "machineType": "n1-standard-8",
                        "acceleratorType": "NVIDIA_TESLA_T4",
                        "acceleratorCount": 1,
                    },
                    "replicaCount": "1",
                    "pythonPackageSpec": {
                        "executorImageUri": "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-11:latest",
                        "packageUris": ["gs://demo-bucket/trainer-0.1.tar.gz"],
                        "pythonModule": "trainer.task",
                        "args": ["--epochs", "10"],
                    },
                },
                {
                    "machineSpec": {"machineType": "n1-standard-8"},
                    "replicaCount": "2",
                    "containerSpec": {"imageUri": "gcr.io/demo-project/trainer:1"},
                },
            ],
            "scheduling": {"timeout": "7200s"},
        },
    }


def api_error(call: Any) -> tuple[int, dict[str, Any]]:
    """Execute a googleapiclient request expected to fail; return (HTTP status, error JSON object)."""
    with pytest.raises(HttpError) as caught:
        call.execute()
    error = caught.value
    payload = json.loads(error.content)["error"]
    assert payload["code"] == error.status_code
    return error.status_code, payload


def control(emu: Emulator, path: str, body: Any = None, method: str | None = None) -> tuple[int, Any]:
    """Call the emulator's HTTP API with urllib; return (status, JSON)."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(emu.url + path.lstrip("/"), data=data, method=method)
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        assert error.headers["Content-Type"].startswith("application/json")
        return error.code, json.loads(error.read())


def create_ml(client: Any, job_id: str = "train_1", **kw: Any) -> dict[str, Any]:
    job: dict[str, Any] = client.projects().jobs().create(parent=PARENT, body=ml_body(job_id, **kw)).execute()
    return job


def get_ml(client: Any, job_id: str) -> dict[str, Any]:
    job: dict[str, Any] = client.projects().jobs().get(name=f"{PARENT}/jobs/{job_id}").execute()
    return job


def customjobs(client: Any) -> Any:
    return client.projects().locations().customJobs()



def worker_pools(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A CustomJob body's worker pools (to change one in place)."""
    pools: list[dict[str, Any]] = body["jobSpec"]["workerPoolSpecs"]
    return pools
