"""CustomJob bodies of CustomJobSpecs: every field the user gave is carried over unchanged (int64 values as the
JSON API's decimal strings), and every body is accepted by the aiplatform v1 discovery schema."""

from __future__ import annotations

from typing import Any

import pytest

from gcp_training_jobs.jobspec.load import load_custom_job, render_body
from gcp_training_jobs.jobspec.vocab.training_input import _integral
from tests.helpers import FULL, assert_vertex_body_valid, container_pool, custom_job_spec, leaves

EXAMPLES: dict[str, tuple[dict[str, Any], str]] = {
    "every field": (FULL, "us-central1"),
    "gcloud's one-mapping pools": ({"workerPoolSpecs": container_pool({"machineType": "n1-highmem-2"})},
                                   "us-central1"),
    "L4 on spot": (custom_job_spec(container_pool({"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                                   "acceleratorCount": 1}), scheduling={"strategy": "SPOT"}),
                   "europe-west4"),
    "v5e slice": (custom_job_spec(container_pool({"machineType": "ct5lp-hightpu-4t", "tpuTopology": "4x4"})),
                  "us-central1"),
    "flex start": (custom_job_spec(container_pool({"machineType": "a2-highgpu-1g",
                                                   "acceleratorType": "NVIDIA_TESLA_A100", "acceleratorCount": 1}),
                                   scheduling={"strategy": "FLEX_START", "maxWaitDuration": "7200s"}),
                   "us-central1"),
    "persistent resource": (custom_job_spec(container_pool({"machineType": "n2-standard-8"}),
                                            persistentResourceId="my-cluster"), "us-east5"),
}

INT64 = {"replicaCount"}


def expected(path: tuple[Any, ...], value: Any) -> Any:
    """A given value as the JSON body carries it: int64 fields as decimal strings, the rest unchanged."""
    return str(_integral(value)) if path and path[-1] in INT64 else value


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_every_given_field_is_carried_over_unchanged(name: str) -> None:
    data, region = EXAMPLES[name]
    job = load_custom_job(data, region=region, labels={"team": "ml"})
    body = render_body(job, "vertex", "llm_run")
    assert_vertex_body_valid(body)
    assert body["displayName"] == "llm_run" and body["labels"] == {"team": "ml", "pulumi-job": "llm_run"}
    given = {"workerPoolSpecs": [data["workerPoolSpecs"]]} if isinstance(data["workerPoolSpecs"], dict) else data
    out = dict(leaves(body["jobSpec"]))  # JSON objects are unordered: the model writes its fields in its order
    assert out == {path: expected(path, value) for path, value in leaves(given)}


def test_the_every_field_example_uses_every_field_of_the_schema() -> None:
    from gcp_training_jobs.jobspec.vocab.custom_job import CustomJobSpec, MachineSpec, WorkerPoolSpec

    # persistentResourceId: a job on a persistent resource cannot consume reservations (its own example)
    assert set(FULL) | {"persistentResourceId"} == {f.alias for f in CustomJobSpec.model_fields.values()}
    pool = FULL["workerPoolSpecs"][0]
    assert set(pool) | {"pythonPackageSpec"} == {f.alias for f in WorkerPoolSpec.model_fields.values()}
    assert set(pool["machineSpec"]) | {"tpuTopology", "gpuPartitionSize"} == \
        {f.alias for f in MachineSpec.model_fields.values()}


def test_a_python_package_pool_renders_as_given_when_its_image_is_available() -> None:
    """Every prebuilt image is past its end of availability on 2026-11-22: judged as of 2026-06-01."""
    from datetime import date

    pool = {"machineSpec": {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4",
                            "acceleratorCount": 1}, "replicaCount": 1,
            "pythonPackageSpec": {"executorImageUri": "europe-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310"
                                                      ":latest", "packageUris": ["gs://my-bucket/trainer-0.1.tar.gz"],
                                  "pythonModule": "trainer.task", "args": ["--lr=0.1"]}}
    body = render_body(load_custom_job(custom_job_spec(pool), region="europe-west4", today=date(2026, 6, 1)),
                       "vertex", "j")
    assert_vertex_body_valid(body)
    assert body["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"] == pool["pythonPackageSpec"]


def test_a_custom_job_spec_has_no_ai_platform_body() -> None:
    from gcp_training_jobs.jobspec.core.errors import SpecError

    job = load_custom_job(EXAMPLES["L4 on spot"][0], region="europe-west4")
    with pytest.raises(SpecError, match="runs on Vertex AI only"):
        render_body(job, "ai-platform", "j")
