"""Request bodies: what each backend would send, checked against Google's own discovery documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import TODAY_ENV
from gcp_training_jobs.jobspec.io.documents import read_yaml
from gcp_training_jobs.jobspec.load import judge_job, load_job, render_body
from tests.helpers import ALLOWED, assert_ml_body_valid, assert_vertex_body_valid, gpu_job

GUIDE_EXAMPLES = sorted((Path(__file__).parent / "fixtures" / "guide_examples").glob("*.yaml"))


@pytest.fixture(autouse=True)
def before_tf_2_11_end_of_availability(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests render the guides' runtime 2.11 to its prebuilt container, tf-*.2-11, whose end of
    availability is 2024-11-15 (every prebuilt image has passed its date by 2026-11-22): they judge as of
    2024-06-01, when it was available and NVIDIA K80 (end of support 2024-05-01) was already gone.
    tests/test_vertex_dates.py holds what today's date refuses."""
    monkeypatch.setenv(TODAY_ENV, "2024-06-01")


def guide_data(name: str) -> Any:
    return read_yaml(Path(__file__).parent / "fixtures" / "guide_examples" / f"{name}.yaml")


def guide_job(name: str) -> Any:
    return load_job(guide_data(name), default_region="us-central1", partial=True)


@pytest.mark.parametrize("path", GUIDE_EXAMPLES, ids=lambda p: p.stem)
def test_guide_example_bodies_pass_the_ml_v1_schema(path: Path) -> None:
    job = load_job(read_yaml(path), default_region="us-central1", partial=True)
    body = render_body(job, "ai-platform", "guide_job")
    assert body["jobId"] == "guide_job"
    assert_ml_body_valid(body)


@pytest.mark.parametrize(("machine", "gpu", "count"), ALLOWED[::7])
def test_gpu_bodies_pass_both_schemas_with_int64_as_strings(machine: str, gpu: str, count: int) -> None:
    job = load_job(gpu_job(machine, gpu, count, workerType=machine, workerCount=3))
    ml = render_body(job, "ai-platform", "j")
    assert_ml_body_valid(ml)
    assert ml["trainingInput"]["masterConfig"]["acceleratorConfig"] == {"type": gpu, "count": str(count)}
    assert ml["trainingInput"]["workerCount"] == "3"
    if gpu == "NVIDIA_TESLA_K80":
        with pytest.raises(SpecError, match="not offered by Vertex AI"):
            load_job(gpu_job(machine, gpu, count, workerType=machine, workerCount=3), backend="vertex")
        return
    vertex = render_body(job, "vertex", "j")
    assert_vertex_body_valid(vertex)
    pools = vertex["jobSpec"]["workerPoolSpecs"]
    assert [p["replicaCount"] for p in pools] == ["1", "3"]
    assert pools[0]["machineSpec"] == {"machineType": machine, "acceleratorType": gpu, "acceleratorCount": count}


def test_empty_fields_are_left_out_of_the_ml_body() -> None:
    job = load_job({**gpu_job("n1-standard-8"), "labels": {}})
    body = render_body(job, "ai-platform", "j")
    assert "masterConfig" not in body["trainingInput"]
    assert body["labels"] == {"pulumi-job": "j"}


def test_vertex_guide_cluster_keeps_roles_replicas_and_accelerators() -> None:
    body = render_body(guide_job("gpu_compute_engine"), "vertex", "prod")
    assert_vertex_body_valid(body)
    pools = body["jobSpec"]["workerPoolSpecs"]
    assert [(p["machineSpec"].get("machineType"), p["replicaCount"], p["machineSpec"].get("acceleratorCount"))
            for p in pools] == [("n1-highcpu-16", "1", 4), ("n1-highcpu-16", "9", 4), ("n1-highmem-8", "3", None)]
    assert pools[0]["pythonPackageSpec"]["executorImageUri"] == \
        "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-11:latest"
    assert pools[2]["pythonPackageSpec"]["executorImageUri"] == \
        "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-11:latest"


def test_vertex_keeps_an_empty_pool_where_a_later_role_follows() -> None:
    job = load_job(gpu_job("n1-standard-8", evaluatorType="n1-standard-4", evaluatorCount=1))
    pools = render_body(job, "vertex", "j")["jobSpec"]["workerPoolSpecs"]
    assert [bool(p) for p in pools] == [True, False, False, True]


def test_vertex_legacy_types_become_their_compute_engine_equivalents() -> None:
    job = load_job({"trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "complex_model_m_v100", "workerType": "large_model_v100",
        "workerCount": 2, "parameterServerType": "large_model", "parameterServerCount": 1,
        "region": "us-central1", "runtimeVersion": "2.9", "pythonModule": "t.task", "packageUris": ["gs://bkt/t"],
    }})
    pools = render_body(job, "vertex", "j")["jobSpec"]["workerPoolSpecs"]
    assert [p["machineSpec"] for p in pools] == [
        {"machineType": "n1-highcpu-16", "acceleratorType": "NVIDIA_TESLA_V100", "acceleratorCount": 4},
        {"machineType": "n1-highmem-8", "acceleratorType": "NVIDIA_TESLA_V100", "acceleratorCount": 1},
        {"machineType": "n1-highmem-8"},
    ]


def test_vertex_tpu_jobs_are_one_cloud_tpu_pool_with_8_cores() -> None:
    """On Vertex AI the TPU VM runs the code itself and must be the job's only pool (configure-compute, "TPUs"): both
    TPU shapes of the AI Platform Training TPU guide, BASIC_TPU (a `standard` master beside its Cloud TPU) and CUSTOM
    with a master beside one cloud_tpu worker, become one cloud-tpu pool, with a warning naming the master Vertex AI
    does not use."""
    shapes = {
        "BASIC_TPU": ({"trainingInput": {"scaleTier": "BASIC_TPU"}}, "trainingInput.scaleTier",
                      "BASIC_TPU's standard master"),
        "tpu_legacy_master": (guide_data("tpu_legacy_master"), "trainingInput.masterType",
                              "the master complex_model_m"),
        "tpu_compute_engine_master": (guide_data("tpu_compute_engine_master"), "trainingInput.masterType",
                                      "the master n1-highcpu-16"),
    }
    for shape, (data, where, master) in shapes.items():
        judged = judge_job(data, default_region="us-central1", partial=True, backend="vertex", job_id="tpu")
        assert judged.ok, (shape, judged.problems)
        assert judged.body is not None
        assert_vertex_body_valid(judged.body)
        (pool,) = judged.body["jobSpec"]["workerPoolSpecs"]
        assert pool["machineSpec"] == {"machineType": "cloud-tpu", "acceleratorType": "TPU_V2",
                                       "acceleratorCount": 8}, shape
        assert pool["replicaCount"] == "1"
        assert pool["pythonPackageSpec"]["executorImageUri"] == \
            "us-docker.pkg.dev/vertex-ai/training/tf-tpu.2-12:latest"
        (warning,) = judged.warnings
        assert warning.path == where, shape
        assert warning.message.startswith(f"{master} is not used on Vertex AI: there the TPU VM runs the code "
                                          "itself, so the job is one cloud-tpu pool (8 TPU_V2 cores)"), warning
        # the same job on AI Platform Training runs its master: nothing to warn about
        assert judge_job(data, default_region="us-central1", partial=True, job_id="tpu").warnings == ()
        # a model judged elsewhere renders the same one pool
        assert render_body(load_job(data, default_region="us-central1", partial=True), "vertex",
                           "tpu")["jobSpec"]["workerPoolSpecs"] == [pool]


def test_a_tpu_job_on_vertex_runs_the_masters_code_on_the_tpu_pool() -> None:
    """The master ran the training on AI Platform: its container, command and args go to the cloud-tpu pool, and the
    TPU worker's cores and type are the pool's."""
    data = guide_data("tpu_compute_engine_master")
    data["trainingInput"].update(workerConfig={"acceleratorConfig": {"type": "TPU_V3", "count": 8}}, masterConfig={
        "imageUri": "us-docker.pkg.dev/p/r/resnet:1", "containerCommand": ["python", "-m", "resnet.resnet_main"],
        "containerArgs": ["--model_dir=gs://out/resnet"]})
    judged = judge_job(data, default_region="us-central1", backend="vertex", job_id="tpu")
    assert judged.ok, judged.problems
    assert judged.body is not None
    (pool,) = judged.body["jobSpec"]["workerPoolSpecs"]
    assert pool == {"machineSpec": {"machineType": "cloud-tpu", "acceleratorType": "TPU_V3", "acceleratorCount": 8},
                    "replicaCount": "1",
                    "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/resnet:1",
                                      "command": ["python", "-m", "resnet.resnet_main"],
                                      "args": ["--model_dir=gs://out/resnet"]}}
    assert [w.path for w in judged.warnings] == ["trainingInput.masterType"]


@pytest.mark.parametrize(("change", "path", "words"), [
    ({"workerCount": 2}, "trainingInput.workerCount", "2 with cloud-tpu; allowed: 1"),
    ({"masterConfig": {"imageUri": "us-docker.pkg.dev/p/r/resnet:1"}, "workerConfig": {"tpuTfVersion": "1.15"}},
     "trainingInput.workerConfig.tpuTfVersion", "has no Vertex AI equivalent"),
    ({"parameterServerType": "n1-standard-4", "parameterServerCount": 1}, "trainingInput.workerType",
     "single worker pool"),
])
def test_what_a_tpu_job_cannot_keep_on_vertex_is_still_refused(change: dict, path: str, words: str) -> None:
    """Only the master is left out, with a warning: more TPU workers, a TPU TensorFlow version or parameter servers
    beside the TPU are refused, naming the field."""
    data = guide_data("tpu_compute_engine_master")
    data["trainingInput"].update(change)
    judged = judge_job(data, default_region="us-central1", partial=True, backend="vertex", job_id="tpu")
    assert [p.path for p in judged.problems] == [path]
    assert words in judged.problems[0].message


@pytest.mark.parametrize(("change", "path", "words"), [
    ({"scaleTier": "STANDARD_1"}, "trainingInput.scaleTier", "no documented machine composition"),
    ({"scaleTier": "BASIC_GPU"}, "trainingInput.scaleTier", "NVIDIA_TESLA_K80 is not offered by Vertex AI"),
    ({"masterType": "complex_model_s"}, "trainingInput.masterType", "no documented Compute Engine equivalent"),
    ({"runtimeVersion": "2.10"}, "trainingInput.runtimeVersion", "no prebuilt training container"),
    ({"scheduling": {"priority": 3}}, "trainingInput.scheduling.priority", "no Vertex AI equivalent"),
])
def test_what_vertex_cannot_express_is_an_error_naming_the_field(change: dict, path: str, words: str) -> None:
    data = gpu_job("n1-standard-8")
    data["trainingInput"].update(change)
    if change.get("scaleTier") not in (None, "CUSTOM"):
        del data["trainingInput"]["masterType"]
    if change.get("masterType") == "complex_model_s":
        data["trainingInput"]["runtimeVersion"] = "1.15"
    with pytest.raises(SpecError) as caught:
        render_body(load_job(data), "vertex", "j")
    (problem,) = caught.value.problems
    assert problem.path == path and words in problem.message


def test_vertex_carries_job_dir_scheduling_service_account_and_containers() -> None:
    job = load_job({"trainingInput": {
        "scaleTier": "BASIC", "region": "europe-west4", "jobDir": "gs://out-bkt/jobs/a",
        "masterConfig": {"imageUri": "europe-docker.pkg.dev/p/r/trainer:1", "containerArgs": ["--epochs=2"]},
        "scheduling": {"maxRunningTime": "7200s", "maxWaitTime": "600s"},
        "serviceAccount": "trainer@my-proj.iam.gserviceaccount.com",
    }})
    body = render_body(job, "vertex", "j")
    assert_vertex_body_valid(body)
    spec = body["jobSpec"]
    assert spec["baseOutputDirectory"] == {"outputUriPrefix": "gs://out-bkt/jobs/a"}
    assert spec["scheduling"] == {"timeout": "7200s"}  # maxWaitTime: only under FLEX_START (test_outside_files)
    assert spec["serviceAccount"] == "trainer@my-proj.iam.gserviceaccount.com"
    assert spec["workerPoolSpecs"][0]["containerSpec"] == {"imageUri": "europe-docker.pkg.dev/p/r/trainer:1",
                                                           "args": ["--epochs=2"]}
