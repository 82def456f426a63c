"""The TPU guide's TPU shapes on Vertex AI through the provider, against the emulator over real HTTP: the master beside
its Cloud TPU is left out (the TPU VM runs the code itself), `check` says so with a warning naming the master, and
Vertex AI (the emulator's own checks of a CustomJobSpec) takes the one cloud-tpu pool that is created."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.jobspec.core.names import TODAY_ENV
from gcp_training_jobs.resources.settings import load_stack_file
from gcp_training_jobs.resources.training_job import TrainingJobProvider
from tests.helpers import provider_props

ROOT = Path(__file__).resolve().parents[1]

IMAGE = "us-docker.pkg.dev/my-proj/trainers/resnet:1.0"
#: The TPU guide's two TPU shapes, with their code in a custom container (Vertex AI has no container for the guides'
#: TensorFlow 1.x runtimes), and where the master Vertex AI leaves out was written.
SHAPES: dict[str, tuple[dict[str, Any], str]] = {
    "basic-tpu": ({"scaleTier": "BASIC_TPU"}, "trainingInput.scaleTier"),
    "custom": ({"scaleTier": "CUSTOM", "masterType": "n1-highcpu-16", "workerType": "cloud_tpu", "workerCount": "1",
                "workerConfig": {"acceleratorConfig": {"type": "TPU_V2", "count": "8"}}},
               "trainingInput.masterType"),
}


def props(shape: str, backend: str = "vertex") -> dict[str, Any]:
    ti = copy.deepcopy(SHAPES[shape][0])
    ti.update(region="us-central1", jobDir="gs://my-job-dir/jobs/resnet",
              masterConfig={"imageUri": IMAGE, "containerArgs": ["--model_dir=gs://my-job-dir/jobs/resnet"]})
    return provider_props({"trainingInput": ti}, backend=backend)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_check_warns_of_the_master_and_vertex_takes_the_one_cloud_tpu_pool(
        shape: str, provider: TrainingJobProvider, emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    warned: list[str] = []
    monkeypatch.setattr("pulumi.log.warn", warned.append)
    checked = provider.check({}, props(shape))
    assert checked.failures == []
    (warning,) = warned
    assert warning.startswith(f"job resnet: {SHAPES[shape][1]}: ")
    assert "is not used on Vertex AI: there the TPU VM runs the code itself, so the job is one cloud-tpu pool " \
        "(8 TPU_V2 cores) running the master's code" in warning

    created = provider.create(checked.inputs)  # the emulator's checks of a CustomJobSpec are Vertex AI's
    assert created.outs is not None and created.outs["state"] == "QUEUED"
    assert len(emulator.state.requests("customJobs.create")) == 1
    (entry,) = emulator.state.jobs()
    (pool,) = entry["job"]["jobSpec"]["workerPoolSpecs"]
    assert pool["machineSpec"] == {"machineType": "cloud-tpu", "acceleratorType": "TPU_V2", "acceleratorCount": 8}
    assert pool["containerSpec"] == {"imageUri": IMAGE, "args": ["--model_dir=gs://my-job-dir/jobs/resnet"]}


def test_on_ai_platform_the_master_runs_and_nothing_is_warned(
        provider: TrainingJobProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    warned: list[str] = []
    monkeypatch.setattr("pulumi.log.warn", warned.append)
    checked = provider.check({}, props("custom", backend="ai-platform"))
    assert checked.failures == [] and warned == []


def test_the_dev_stack_is_the_guide_tpu_job_on_vertex_warning_of_the_master_it_leaves_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """stacks/Pulumi.dev.yaml: BASIC_TPU on Vertex AI in a custom container, one cloud-tpu pool, no grant (it is AI
    Platform's), and the warning naming the tier's master at the stack file's key (judged as of today)."""
    monkeypatch.delenv(TODAY_ENV, raising=False)
    settings = load_stack_file(ROOT / "stacks" / "Pulumi.dev.yaml")
    job = settings.jobs["resnet"]
    assert settings.backend == "vertex" and job.trainer is None
    assert job.job.training_input.scale_tier == "BASIC_TPU"
    (pool,) = job.body["jobSpec"]["workerPoolSpecs"]
    assert pool["machineSpec"] == {"machineType": "cloud-tpu", "acceleratorType": "TPU_V2", "acceleratorCount": 8}
    assert pool["containerSpec"]["command"] == ["python", "-m", "resnet.resnet_main"]
    assert settings.has_tpu_job and not settings.grants_tpu_access
    (warning,) = settings.warnings
    assert warning.path == "gcp-training-jobs:jobs.resnet.trainingInput.scaleTier"
    assert warning.message.startswith("BASIC_TPU's standard master is not used on Vertex AI")
