"""Each rule of a job spec: a failing example and the message it gives; the AI Platform Training guides' examples
pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.io.documents import read_yaml
from gcp_training_jobs.jobspec.load import load_job
from tests.helpers import gpu_job

GUIDE_EXAMPLES = sorted((Path(__file__).parent / "fixtures" / "guide_examples").glob("*.yaml"))


def problems_of(data: dict[str, Any], **kwargs: Any) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_job(data, **kwargs)
    return [str(p) for p in caught.value.problems]


def custom(**ti: Any) -> dict[str, Any]:
    base = gpu_job("n1-highcpu-16")
    base["trainingInput"].update(ti)
    return base


@pytest.mark.parametrize("path", GUIDE_EXAMPLES, ids=lambda p: p.stem)
def test_guide_examples_are_valid_as_gcloud_configs(path: Path) -> None:
    job = load_job(read_yaml(path), default_region="us-central1", partial=True)
    assert job.training_input.region == "us-central1"


def test_there_are_five_guide_examples() -> None:
    assert len(GUIDE_EXAMPLES) == 5


def test_guide_t4_k80_p100_in_us_central1_is_rejected_no_zone_has_all_three() -> None:
    job = custom(
        masterConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 4}},
        parameterServerType="n1-highmem-8", parameterServerCount=2,
        parameterServerConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_K80", "count": 2}},
        workerType="n1-highcpu-16", workerCount=4,
        workerConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_P100", "count": 2}},
    )
    (problem,) = problems_of(job)
    assert problem.startswith("trainingInput.region: no zone of us-central1 offers all of NVIDIA_TESLA_K80, "
                              "NVIDIA_TESLA_P100, NVIDIA_TESLA_T4")
    assert "us-central1-c: NVIDIA_TESLA_K80, NVIDIA_TESLA_P100;" in problem
    # The same cluster is fine where one zone has all three (europe-west1-b: K80, P100, T4).
    job["trainingInput"]["region"] = "europe-west1"
    load_job(job)


def test_gpu_not_in_region() -> None:
    assert problems_of(gpu_job("n1-standard-8", "NVIDIA_TESLA_V100", 1, region="us-east4")) == [
        "trainingInput.masterConfig.acceleratorConfig.type: NVIDIA_TESLA_V100 is not offered in region us-east4; "
        "allowed regions for NVIDIA_TESLA_V100: asia-east1, europe-west4, us-central1, us-east1, us-west1"
    ]


def test_legacy_gpus_and_basic_gpu_count_for_regions() -> None:
    legacy = custom(masterType="standard_p100", runtimeVersion="1.15", pythonVersion="2.7", region="us-east4")
    assert any("NVIDIA_TESLA_P100 is not offered in region us-east4" in p for p in problems_of(legacy))
    basic_gpu = custom(scaleTier="BASIC_GPU", masterType=None, region="asia-south1")
    del basic_gpu["trainingInput"]["masterType"]
    assert problems_of(basic_gpu) == [
        "trainingInput.scaleTier: NVIDIA_TESLA_K80 is not offered in region asia-south1; allowed regions for "
        "NVIDIA_TESLA_K80: asia-east1, europe-west1, us-central1, us-east1, us-west1"
    ]


def test_accelerator_on_legacy_type_is_refused() -> None:
    job = custom(masterType="complex_model_m_gpu", runtimeVersion="1.15", pythonVersion="3.7",
                 masterConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 1}})
    assert problems_of(job) == [
        "trainingInput.masterConfig.acceleratorConfig: is set on legacy machine type complex_model_m_gpu "
        "(4 NVIDIA_TESLA_K80 built in); allowed only on Compute Engine machine types (e.g. n1-standard-8) "
        "and the cloud_tpu worker"
    ]


def test_legacy_and_compute_engine_types_are_not_mixed() -> None:
    job = custom(workerType="standard_gpu", workerCount=2)
    (problem,) = problems_of(job)
    assert problem.startswith("trainingInput.masterType: Compute Engine and legacy machine types are mixed "
                              "(masterType n1-highcpu-16, workerType standard_gpu)")


def test_custom_needs_master_type_and_counts_need_types() -> None:
    job = custom(workerCount=3)
    del job["trainingInput"]["masterType"]
    assert problems_of(job) == [
        "trainingInput.masterType: required when scaleTier is CUSTOM; allowed: a Compute Engine machine type "
        "(e.g. n1-highcpu-16) or a legacy type (e.g. complex_model_m)",
        "trainingInput.workerType: required because workerCount is 3",
    ]


def test_types_and_counts_only_under_custom() -> None:
    job = custom(scaleTier="BASIC", workerType="n1-highcpu-16", workerCount=2)
    assert problems_of(job) == [
        # the same problem of two fields is one line naming both (problems.collapse_repeated)
        "trainingInput.masterType, trainingInput.workerType: 'n1-highcpu-16' is set but scaleTier is BASIC; "
        "machine types are allowed only with scaleTier CUSTOM",
        "trainingInput.workerCount: 2 is set but scaleTier is BASIC; counts are allowed only with scaleTier CUSTOM",
    ]


def test_unknown_scale_tier_and_machine_type() -> None:
    problems = problems_of(custom(scaleTier="HUGE"))
    assert problems == ["trainingInput.scaleTier: 'HUGE' is not a scale tier; allowed: BASIC, STANDARD_1, "
                        "PREMIUM_1, BASIC_GPU, BASIC_TPU, CUSTOM"]
    (problem,) = problems_of(custom(masterType="n1-standard-3"))
    assert problem.startswith("trainingInput.masterType: 'n1-standard-3' is not a machine type; allowed:")


def test_tpu_rules_region_runtime_worker_count_no_parameter_servers_8_cores() -> None:
    job = {"trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "n1-highcpu-16", "workerType": "cloud_tpu", "workerCount": 2,
        "parameterServerType": "n1-highmem-8", "parameterServerCount": 1,
        "workerConfig": {"acceleratorConfig": {"type": "TPU_V2", "count": 4}},
        "region": "europe-west4", "runtimeVersion": "1.10", "pythonModule": "m", "packageUris": ["gs://bkt/p"],
    }}
    assert problems_of(job) == [
        "trainingInput.region: 'europe-west4' has no Cloud TPUs; allowed: us-central1",
        "trainingInput.runtimeVersion: '1.10' for a TPU job; allowed: 1.11, 1.12, 1.13, 1.14, 1.15, 2.1, 2.2, "
        "2.3, 2.4, 2.5, 2.6, 2.7, 2.8, 2.9, 2.10, 2.11",
        "trainingInput.workerCount: 2 with workerType cloud_tpu; allowed: 1",
        "trainingInput.parameterServerCount: parameter servers are not allowed with a Cloud TPU worker; "
        "allowed: 0 (leave parameterServerType and parameterServerCount unset)",
        "trainingInput.workerConfig.acceleratorConfig.count: 4 TPU cores on cloud_tpu; allowed: 8",
    ]


def test_tpu_type_on_a_gpu_machine_and_gpu_on_cloud_tpu() -> None:
    assert problems_of(gpu_job("n1-standard-8", "TPU_V2", 8))[0].startswith(
        "trainingInput.masterConfig.acceleratorConfig.type: TPU_V2 attaches only to a cloud_tpu worker")
    job = {"trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "n1-highcpu-16", "workerType": "cloud_tpu", "workerCount": 1,
        "workerConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 8}},
        "region": "us-central1", "runtimeVersion": "1.12", "pythonModule": "m", "packageUris": ["gs://bkt/p"],
    }}
    assert problems_of(job) == ["trainingInput.workerConfig.acceleratorConfig.type: 'NVIDIA_TESLA_T4' on "
                                "cloud_tpu; allowed: TPU_V2, TPU_V3"]


def test_cloud_tpu_only_as_worker() -> None:
    (problem, *_) = problems_of(custom(evaluatorType="cloud_tpu", evaluatorCount=1))
    assert problem == "trainingInput.evaluatorType: 'cloud_tpu' is allowed only as workerType"


def test_image_uri_xor_runtime_version_and_package() -> None:
    job = custom(masterConfig={"imageUri": "gcr.io/p/trainer:1"})
    assert problems_of(job) == [
        "trainingInput.runtimeVersion: '2.11' is set with masterConfig.imageUri; allowed: one of imageUri "
        "(custom container) or runtimeVersion (prebuilt runtime)",
        "trainingInput.packageUris, trainingInput.pythonModule, trainingInput.pythonVersion: is set with "
        "masterConfig.imageUri; allowed: a custom container or a Python package, not both",
    ]


def test_container_command_xor_args() -> None:
    job = {"trainingInput": {"scaleTier": "BASIC", "region": "us-central1", "args": ["--epochs=3"],
                             "masterConfig": {"imageUri": "gcr.io/p/t:1", "containerCommand": ["python"]}}}
    assert problems_of(job) == ["trainingInput.masterConfig.containerCommand: is set together with "
                                "trainingInput.args; allowed: one of containerCommand or args"]


def test_a_package_or_an_image_is_required() -> None:
    job = {"trainingInput": {"scaleTier": "BASIC", "region": "us-central1"}}
    assert problems_of(job) == [
        "trainingInput.pythonModule: required without masterConfig.imageUri; allowed: the trainer's module "
        "(e.g. trainer.task) or a container image in masterConfig.imageUri",
        "trainingInput.packageUris: required without masterConfig.imageUri; allowed: gs:// URIs of the trainer "
        "package(s) or a container image in masterConfig.imageUri",
    ]
    # A gcloud config.yaml may leave both to --module-name / --package-path; a stack's trainer folder
    # supplies the package.
    load_job(job, partial=True)
    load_job({"trainingInput": {**job["trainingInput"], "pythonModule": "t.task"}}, package_supplied=True)


def test_job_id_format() -> None:
    for bad in ("1job", "job-1", "j" * 129, "job id"):
        data = {**gpu_job("n1-standard-8"), "jobId": bad}
        assert problems_of(data)[0].startswith(f"jobId: {bad!r} is not a valid job id; allowed: letters, digits")
    load_job({**gpu_job("n1-standard-8"), "jobId": "Job_1" + "x" * 123})


def test_gs_uris_where_uris_are_expected() -> None:
    job = custom(packageUris=["/local/trainer.tar.gz"], jobDir="s3://bucket/out")
    assert problems_of(job) == [
        "trainingInput.packageUris[0]: '/local/trainer.tar.gz' is not a Cloud Storage URI: "
        "it does not start with gs://; allowed: gs://BUCKET/PATH",
        "trainingInput.jobDir: 's3://bucket/out' is not a Cloud Storage URI: "
        "it does not start with gs://; allowed: gs://BUCKET/PATH",
    ]


def test_region_must_be_a_training_region() -> None:
    (problem,) = problems_of(custom(region="us-moon1"))
    assert problem.startswith("trainingInput.region: 'us-moon1' is not an AI Platform Training region; "
                              "allowed: us-west1,")


def test_labels_and_names() -> None:
    data = {**gpu_job("n1-standard-8"), "labels": {"Team": "ml", "env": "Prod!"}}
    assert problems_of(data) == [
        "labels.Team: 'Team' is not a valid label key; allowed: lowercase letters, digits, _ and -, starting "
        "with a letter, at most 63 characters",
        "labels.env: 'Prod!' is not a valid label value; allowed: lowercase letters, digits, _ and -, at most "
        "63 characters",
    ]
    job = custom(network="default", serviceAccount="me", scheduling={"maxRunningTime": "2h"},
                 encryptionConfig={"kmsKeyName": "key"})
    paths = [p.split(":")[0] for p in problems_of(job)]
    assert paths == ["trainingInput.network", "trainingInput.serviceAccount",
                     "trainingInput.encryptionConfig.kmsKeyName", "trainingInput.scheduling.maxRunningTime"]


def test_a_job_keeps_room_for_the_project_s_own_labels() -> None:
    """Resource Manager allows 64 labels on a resource and the project adds its own (names.SYSTEM_LABELS): a
    job whose labels would push it past 64 is refused here, not by Google at create."""
    most = 64 - 6
    assert load_job({**gpu_job("n1-standard-8"), "labels": {f"l{i}": "v" for i in range(most)}})
    assert problems_of({**gpu_job("n1-standard-8"), "labels": {f"l{i}": "v" for i in range(most + 1)}}) == [
        f"labels: {most + 1} labels; allowed: at most {most} (a job carries at most 64, 6 of them the project's own: "
        "pulumi-job, pulumi-resource, pulumi-spec, pulumi-stack, pulumi-placement, pulumi-retry)"]


def test_runtime_and_python_versions() -> None:
    assert problems_of(custom(runtimeVersion="3.0"))[0].startswith(
        "trainingInput.runtimeVersion: '3.0' is not a runtime version; allowed: 1.0,")
    assert problems_of(custom(pythonVersion="2.7")) == [
        "trainingInput.pythonVersion: '2.7' on runtime 2.11; allowed: 3.7"]


def test_unknown_key_suggests_the_closest_known_name() -> None:
    job = custom(masterConfg={"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 1}})
    (problem,) = problems_of(job)
    assert problem.startswith("trainingInput.masterConfg: unknown field 'masterConfg' (did you mean masterConfig?)")
    nested = custom(masterConfig={"acceleratorConfig": {"typ": "NVIDIA_TESLA_T4", "count": 1}})
    assert problems_of(nested)[0].startswith(
        "trainingInput.masterConfig.acceleratorConfig.typ: unknown field 'typ' (did you mean type?); "
        "allowed: count, type")


def test_wrong_types_are_named_with_their_value() -> None:
    problems = problems_of(custom(workerCount="many", workerType="n1-highcpu-16", useChiefInTfConfig="maybe"))
    assert problems[0].startswith("trainingInput.workerCount: 'many': ")
    assert problems[1].startswith("trainingInput.useChiefInTfConfig: 'maybe': ")
    assert problems_of(custom(workerCount=True, workerType="n1-highcpu-16"))[0].startswith(
        "trainingInput.workerCount: True: expected an integer, not a boolean")


def test_every_problem_of_a_spec_is_reported_at_once() -> None:
    job = custom(region="us-east4", masterConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 3}},
                 jobDir="/tmp", packageUris=["x"])
    problems = problems_of({**job, "jobId": "9"})
    assert [p.split(":")[0] for p in problems] == [
        "jobId", "trainingInput.masterConfig.acceleratorConfig.count", "trainingInput.packageUris[0]",
        "trainingInput.jobDir"]


def test_integral_floats_and_digit_strings_are_counts() -> None:
    job = load_job(custom(workerType="n1-highcpu-16", workerCount=9.0,
                          workerConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "4"}}))
    assert job.training_input.worker_count == 9
    assert job.training_input.worker_config.accelerator_config.count == 4  # type: ignore[union-attr]
    assert problems_of(custom(workerType="n1-highcpu-16", workerCount=2.5))[0].startswith(
        "trainingInput.workerCount: 2.5:")
