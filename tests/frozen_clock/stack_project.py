"""What the tests of `status`, `logs` and `spend` share: a stack of Vertex AI jobs, and a job made as `pulumi up`
makes it (the provider's check, then create) against the emulator."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.resources.job_model.inputs import wire_of
from gcp_training_jobs.resources.settings import load_stack_file
from gcp_training_jobs.resources.training_job import TrainingJobProvider

PHASE = 1800.0
IMAGE = "us-docker.pkg.dev/my-proj/trainers/resnet:1.0"
#: g2-standard-8 (its L4 included) at Spot rates, and n1-standard-8 with 2 T4 on demand, in us-central1 (bundled
#: price table).
L4_SPOT_USD_PER_HOUR = 0.607915641


def pool(machine: str, gpu: str | None = None, count: int = 0) -> dict[str, Any]:
    spec: dict[str, Any] = {"machineType": machine}
    if gpu:
        spec.update(acceleratorType=gpu, acceleratorCount=count)
    return {"machineSpec": spec, "replicaCount": 1, "containerSpec": {"imageUri": IMAGE, "args": ["--epochs=5"]}}


def vertex_stack(endpoint: str) -> dict[str, Any]:
    return {"config": {
        "gcp:project": "my-proj", "gcp:region": "us-central1", "gcp-training-jobs:backend": "vertex",
        "gcp-training-jobs:apiEndpoint": endpoint, "gcp-training-jobs:enableApis": False,
        "gcp-training-jobs:labels": {"env": "test"},
        "gcp-training-jobs:buckets": {"staging": "my-staging", "jobDir": "my-job-dir"},
        "gcp-training-jobs:jobs": {
            "l4": {"labels": {"team": "vision"},
                   "jobSpec": {"workerPoolSpecs": [pool("g2-standard-8", "NVIDIA_L4", 1)],
                               "scheduling": {"strategy": "SPOT"}}},
            "cpu": {"labels": {"team": "data"}, "jobSpec": {"workerPoolSpecs": [pool("n1-standard-8")]}},
            "t4": {"jobSpec": {"workerPoolSpecs": [pool("n1-standard-8", "NVIDIA_TESLA_T4", 2)]}},
        }}}


def deploy(project: Path, emulator: Emulator, name: str, stack: str = "team") -> dict[str, Any]:
    """The job `name` of the stack, created as `pulumi up` creates it (the provider's check, then create)."""
    settings = load_stack_file(project / "stacks" / f"Pulumi.{stack}.yaml")
    provider = TrainingJobProvider()
    provider.endpoint = emulator.url
    inputs = {"name": name, "project": settings.project, "backend": settings.backend,
              "job": wire_of(settings.jobs[name].job), "identity": f"organization/gcp-training-jobs/{stack}/{name}"}
    checked = provider.check({}, inputs)
    assert checked.failures == [], [(f.property, f.reason) for f in checked.failures]
    return dict(provider.create(checked.inputs).outs)


#: A command line run (status, logs, spend): its argv in; its exit code, stdout and stderr out.
Run = Callable[..., tuple[int, str, str]]
