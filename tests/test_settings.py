"""Stack settings: what a stack file may say, and how every mistake in one is reported (all at once)."""

from __future__ import annotations

import copy
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pulumi  # noqa: E402
import pytest  # noqa: E402
import yaml  # noqa: E402

from gcp_training_jobs.cli.plan.mocks import mocked_pulumi, pulumi_config  # noqa: E402
from gcp_training_jobs.jobspec.core.errors import UnreadableError  # noqa: E402
from gcp_training_jobs.jobspec.core.names import NAMESPACE, TODAY_ENV  # noqa: E402
from gcp_training_jobs.jobspec.io.documents import parse_yaml, read_yaml  # noqa: E402
from gcp_training_jobs.resources.settings import StackSettings, from_pulumi_config, load_stack_file  # noqa: E402
from gcp_training_jobs.resources.settings.decimals import OBJECT_KEYS, lossy_decimals  # noqa: E402
from tests.helpers import stack_file_problems as problems_of  # noqa: E402

STACKS = ROOT / "stacks"

GOOD_JOB = {
    "trainer": {"path": "trainers/example"},
    "trainingInput": {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-8",
        "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 1}},
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "pythonModule": "trainer.task",
    },
}


#: A day the prebuilt container of the AI Platform Training guides' runtime 2.11 (tf-gpu.2-11, GOOD_JOB's runtime on
#: vertex, the default backend) was still available: every prebuilt Vertex AI training container is past its end of
#: availability today (2026-11-22).
PREBUILT_DAY = "2024-06-01"

L4_SPOT = {  # a jobSpec that runs on Vertex AI today: one L4 on Spot, a custom container
    "workerPoolSpecs": [{"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                         "acceleratorCount": 1},
                         "replicaCount": 1,
                         "containerSpec": {"imageUri": "us-central1-docker.pkg.dev/my-ml-test/trainers/t:1",
                                           "args": ["--model-dir=${jobDir}"]}}],
    "scheduling": {"strategy": "SPOT"},
}
#: The same on a prebuilt container, as a Python package (valid on PREBUILT_DAY; its trainer is built by the stack).
L4_PACKAGE = {"workerPoolSpecs": {"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                                  "acceleratorCount": 1},
                                  "replicaCount": 1,
                                  "pythonPackageSpec": {
                                      "executorImageUri": "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-11:latest",
                                      "pythonModule": "trainer.task"}}}


@pytest.fixture(autouse=True)
def prebuilt_day(monkeypatch: pytest.MonkeyPatch) -> None:
    """GOOD_JOB's tests judge on PREBUILT_DAY (tests of the repository's stacks ask for `real_today`)."""
    monkeypatch.setenv(TODAY_ENV, PREBUILT_DAY)


@pytest.fixture
def real_today(monkeypatch: pytest.MonkeyPatch) -> None:
    """The repository's stacks must hold today: the date rules judge against the system's date."""
    monkeypatch.delenv(TODAY_ENV, raising=False)


def write_stack(tmp_path: Path, config: dict[str, Any] | str, name: str = "t") -> Path:
    """A stack file in tmp_path (a mapping is dumped; text is written as it is)."""
    path = tmp_path / f"Pulumi.{name}.yaml"
    if isinstance(config, str):
        path.write_text(textwrap.dedent(config), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump({"config": config}, sort_keys=False), encoding="utf-8")
    return path


def stack(config: dict[str, Any]) -> dict[str, Any]:
    return {"gcp:project": "my-ml-test", **config}


# --- The repository's stacks -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["dev", "staging", "prod"])
def test_repository_stacks_load(name: str, real_today: None) -> None:
    settings = load_stack_file(STACKS / f"Pulumi.{name}.yaml")
    assert settings.project == f"my-ml-{name}"
    assert settings.region == "us-central1"
    assert settings.jobs, "every stack runs a job"
    for job in settings.jobs.values():
        region = getattr(job.job, "region", None) or job.job.training_input.region
        assert region == "us-central1"
        assert job.trainer is None or job.trainer.path == "trainers/example"


def test_dev_ai_platform_is_the_guide_tpu_job_on_ai_platform_with_the_grant(real_today: None) -> None:
    settings = load_stack_file(STACKS / "Pulumi.dev-ai-platform.yaml")
    ti = settings.jobs["resnet"].job.training_input
    assert settings.backend == "ai-platform"
    assert settings.jobs["resnet"].trainer.path == "trainers/example"
    assert (ti.scale_tier, ti.runtime_version, ti.python_module) == ("BASIC_TPU", "1.12", "resnet.resnet_main")
    assert ti.args == ["--data_dir=gs://cloud-tpu-test-datasets/fake_imagenet", "--model_dir=${jobDir}"]
    assert settings.has_tpu_job and settings.grants_tpu_access
    assert settings.warnings == ()


def test_staging_and_prod_run_gpus_that_can_be_bought_today_on_vertex_without_a_tpu_grant(real_today: None) -> None:
    """Staging: one L4 on Spot in Vertex AI's vocabulary; prod: the GPU guide's cluster shape (master, workers
    with GPUs, parameter servers) on A100 80GB in AI Platform Training's vocabulary; both in custom containers."""
    staging = load_stack_file(STACKS / "Pulumi.staging.yaml")
    prod = load_stack_file(STACKS / "Pulumi.prod.yaml")
    assert staging.backend == prod.backend == "vertex"
    assert not staging.grants_tpu_access and not prod.grants_tpu_access
    (pool,) = staging.jobs["l4-trial"].job.spec.worker_pool_specs
    assert (pool.machine_spec.machine_type, pool.machine_spec.accelerator_type, pool.machine_spec.accelerator_count) \
        == ("g2-standard-8", "NVIDIA_L4", 1)
    assert staging.jobs["l4-trial"].job.spec.scheduling.strategy == "SPOT" and pool.container_spec.image_uri
    assert staging.guardrails.spot_only
    cluster = prod.jobs["distributed"].job.training_input
    assert (cluster.master_type, cluster.worker_count, cluster.parameter_server_count) == ("a2-ultragpu-8g", 3, 3)
    assert cluster.worker_config.accelerator_config.type == "NVIDIA_A100_80GB"
    assert cluster.worker_config.accelerator_config.count == 8
    assert cluster.master_config.image_uri == cluster.worker_config.image_uri


def test_stack_labels_go_on_every_job_under_its_own(real_today: None) -> None:
    settings = load_stack_file(STACKS / "Pulumi.staging.yaml")
    assert settings.jobs["l4-trial"].job.labels == {"env": "staging", "team": "ml-platform", "purpose": "trial"}


# --- Defaults and fallbacks -----------------------------------------------------------------------------


def test_defaults(tmp_path: Path) -> None:
    settings = load_stack_file(write_stack(tmp_path, stack({})), root=ROOT)
    assert settings.backend == "vertex" and settings.region == "us-central1" and settings.enable_apis
    assert settings.buckets.staging is None and settings.buckets.job_dir is None
    assert settings.buckets.staging_retention_days == 30 and settings.buckets.force_destroy is False
    assert settings.tpu_access.grant == "auto" and not settings.grants_tpu_access
    assert settings.bucket_location == "US-CENTRAL1"
    assert settings.jobs == {}


def test_region_and_project_fall_back_to_the_gcp_provider_keys(tmp_path: Path) -> None:
    path = write_stack(tmp_path, {"gcp:project": "other-project", "gcp:region": "europe-west4",
                                  f"{NAMESPACE}:jobs": {"gpu": GOOD_JOB}})
    settings = load_stack_file(path, root=ROOT)
    assert (settings.project, settings.region) == ("other-project", "europe-west4")
    assert settings.jobs["gpu"].job.training_input.region == "europe-west4"
    ours = write_stack(tmp_path, {"gcp:project": "other-project", f"{NAMESPACE}:project": "mine-project",
                                  "gcp:region": "europe-west4", f"{NAMESPACE}:region": "us-east1"}, "u")
    settings = load_stack_file(ours, root=ROOT)
    assert (settings.project, settings.region) == ("mine-project", "us-east1")


@pytest.mark.parametrize(("grant", "backend", "tpu", "expected"), [
    ("auto", "ai-platform", True, True),
    ("auto", "ai-platform", False, False),
    ("auto", "vertex", False, False),
    (False, "ai-platform", True, False),
    (True, "ai-platform", False, True),
])
def test_tpu_grant(tmp_path: Path, grant: Any, backend: str, tpu: bool, expected: bool) -> None:
    job = {"trainer": {"path": "trainers/example"}, "trainingInput": {
        "scaleTier": "BASIC_TPU" if tpu else "BASIC", "runtimeVersion": "1.12" if tpu else "1.15",
        "pythonModule": "trainer.task"}}
    path = write_stack(tmp_path, stack({f"{NAMESPACE}:backend": backend, f"{NAMESPACE}:tpuAccess": {"grant": grant},
                                        f"{NAMESPACE}:jobs": {"job": job}}))
    assert load_stack_file(path, root=ROOT).grants_tpu_access is expected


# --- Every mistake named: file, key, value ------------------------------------------------------------------


@pytest.mark.parametrize(("config", "key", "value"), [
    ({f"{NAMESPACE}:backend": "vertx"}, f"{NAMESPACE}:backend", "'vertx'"),
    ({f"{NAMESPACE}:region": "mars-central1"}, f"{NAMESPACE}:region", "'mars-central1'"),
    ({"gcp:region": "mars-central1"}, "gcp:region", "'mars-central1'"),
    ({f"{NAMESPACE}:project": "X"}, f"{NAMESPACE}:project", "'X'"),
    ({f"{NAMESPACE}:apiEndpoint": "localhost:8085"}, f"{NAMESPACE}:apiEndpoint", "'localhost:8085'"),
    ({f"{NAMESPACE}:enableApis": "perhaps"}, f"{NAMESPACE}:enableApis", "'perhaps'"),
    ({f"{NAMESPACE}:labels": {"Team": "ml"}}, f"{NAMESPACE}:labels.Team", "'Team'"),
    ({f"{NAMESPACE}:buckets": {"staging": "gs://my-bucket"}}, f"{NAMESPACE}:buckets.staging", "'gs://my-bucket'"),
    ({f"{NAMESPACE}:buckets": {"jobDir": "A"}}, f"{NAMESPACE}:buckets.jobDir", "'A'"),
    ({f"{NAMESPACE}:buckets": {"stagingRetentionDays": -1}}, f"{NAMESPACE}:buckets.stagingRetentionDays", "-1"),
    ({f"{NAMESPACE}:tpuAccess": {"grant": "maybe"}}, f"{NAMESPACE}:tpuAccess.grant", "'maybe'"),
    ({f"{NAMESPACE}:tpuAccess": {"serviceAccount": "me@example.com"}}, f"{NAMESPACE}:tpuAccess.serviceAccount",
     "'me@example.com'"),
    ({f"{NAMESPACE}:jobs": {"gpu": {**GOOD_JOB, "waitTimeoutSeconds": 0}}},
     f"{NAMESPACE}:jobs.gpu.waitTimeoutSeconds", "0"),
    ({f"{NAMESPACE}:jobs": {"gpu": {**GOOD_JOB, "trainer": {"path": "trainers/missing"}}}},
     f"{NAMESPACE}:jobs.gpu.trainer.path", "'trainers/missing'"),
])
def test_each_bad_value_names_file_key_and_value(tmp_path: Path, config: dict[str, Any], key: str,
                                                  value: str) -> None:
    path = write_stack(tmp_path, stack(config) if "gcp:project" not in config else config)
    lines = problems_of(path)
    assert any(line.startswith(f"{path}: {key}: ") and value in line for line in lines), lines


def test_job_spec_problems_are_rooted_at_the_job(tmp_path: Path) -> None:
    job = {**GOOD_JOB, "trainingInput": {**GOOD_JOB["trainingInput"],
                                         "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4",
                                                                                "count": 3}}}}
    path = write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {"gpu": job}}))
    assert problems_of(path) == [f"{path}: {NAMESPACE}:jobs.gpu.trainingInput.masterConfig.acceleratorConfig.count: "
                                 "3 NVIDIA_TESLA_T4 on n1-standard-8; allowed: 1, 2, 4"]


def test_vertex_only_problems_are_reported_on_vertex_stacks(tmp_path: Path) -> None:
    tpu = {"trainer": {"path": "trainers/example"},
           "trainingInput": {"scaleTier": "BASIC_TPU", "runtimeVersion": "1.12", "pythonModule": "trainer.task"}}
    vertex = write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {"tpu": tpu}}))
    lines = problems_of(vertex)
    assert any(f"{NAMESPACE}:jobs.tpu.trainingInput.runtimeVersion: 1.12: Vertex AI has no prebuilt TPU container"
               in line for line in lines), lines
    ai_platform = write_stack(tmp_path, stack({f"{NAMESPACE}:backend": "ai-platform",
                                               f"{NAMESPACE}:jobs": {"tpu": tpu}}), "u")
    assert load_stack_file(ai_platform, root=ROOT).jobs["tpu"].job.training_input.scale_tier == "BASIC_TPU"


def test_all_problems_of_a_stack_are_reported_at_once(tmp_path: Path) -> None:
    path = write_stack(tmp_path, f"""\
        config:
          {NAMESPACE}:backend: vertx
          {NAMESPACE}:buckets:
            stagingRetentionDays: many
          {NAMESPACE}:jobs:
            Bad_Name:
              trainer: {{path: trainers/example}}
              trainingInput: {{pythonModule: trainer.task, runtimeVersion: "2.11"}}
            gpu:
              trainer: {{path: trainers/nope}}
              waitForCompletion: sure
              trainingInput:
                scaleTier: CUSTOM
                masterType: n1-standard-8
                masterConfig: {{acceleratorConfig: {{type: NVIDIA_TESLA_T4, count: 3}}}}
                pythonModule: trainer.task
                runtimeVersion: "2.11"
            typo:
              trainer: {{path: trainers/example}}
              trainingInput: {{pythonModule: trainer.task, runtimeVersion: "2.11", regoin: us-central1}}
        """)
    text = "\n".join(problems_of(path))
    for expected in (
        f"{NAMESPACE}:backend: 'vertx'",
        f"{NAMESPACE}:project: required",
        f"{NAMESPACE}:buckets.stagingRetentionDays: 'many'",
        f"{NAMESPACE}:jobs: 'Bad_Name' is not a valid job name",
        f"{NAMESPACE}:jobs.gpu.trainer.path: 'trainers/nope'",
        f"{NAMESPACE}:jobs.gpu.waitForCompletion: 'sure'",
        f"{NAMESPACE}:jobs.gpu.trainingInput.masterConfig.acceleratorConfig.count: 3",
        f"{NAMESPACE}:jobs.typo.trainingInput.regoin: unknown field 'regoin' (did you mean region?)",
    ):
        assert expected in text, f"{expected!r} missing from:\n{text}"
    assert all(line.startswith(f"{path}: ") for line in text.splitlines())


@pytest.mark.parametrize(("where", "wrong", "suggested"), [
    ("top", "bucket", "buckets"),
    ("buckets", "stagingRetentionDay", "stagingRetentionDays"),
    ("tpuAccess", "serviceAcount", "serviceAccount"),
    ("job", "waitForCompletions", "waitForCompletion"),
])
def test_unknown_keys_get_the_closest_known_one(tmp_path: Path, where: str, wrong: str, suggested: str) -> None:
    if where == "top":
        config = stack({f"{NAMESPACE}:{wrong}": {}})
    elif where == "job":
        config = stack({f"{NAMESPACE}:jobs": {"gpu": {**GOOD_JOB, wrong: True}}})
    else:
        config = stack({f"{NAMESPACE}:{where}": {wrong: 1}})
    lines = problems_of(write_stack(tmp_path, config))
    assert any(f"unknown field {wrong!r} (did you mean {suggested}?)" in line for line in lines), lines


def test_unknown_file_keys_and_unnamespaced_keys(tmp_path: Path) -> None:
    path = write_stack(tmp_path, """\
        confg: {}
        config:
          gcp:project: my-ml-test
          backend: vertex
        """)
    text = "\n".join(problems_of(path))
    assert "confg: unknown stack file key (did you mean config?)" in text
    assert "backend: config keys are namespaced; did you mean gcp-training-jobs:backend?" in text


def test_job_names_must_be_resource_and_job_id_material(tmp_path: Path) -> None:
    for bad in ("1st", "GPU", "with space", "x" * 55):
        lines = problems_of(write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {bad: GOOD_JOB}})))
        assert any(f"{bad!r} is not a valid job name" in line for line in lines), (bad, lines)
    ok = load_stack_file(write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {"gpu_2-b": GOOD_JOB}})), root=ROOT)
    assert list(ok.jobs) == ["gpu_2-b"]


def test_trainer_must_hold_the_module_and_not_go_with_an_image(tmp_path: Path) -> None:
    typo = {**GOOD_JOB, "trainingInput": {**GOOD_JOB["trainingInput"], "pythonModule": "trainer.tsk"}}
    image = {"trainer": {"path": "trainers/example"}, "trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "n1-standard-8",
        "masterConfig": {"imageUri": "us-docker.pkg.dev/p/r/trainer:1"}}}
    lines = problems_of(write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {"typo": typo, "image": image}})))
    text = "\n".join(lines)
    assert f"{NAMESPACE}:jobs.typo.trainingInput.pythonModule: 'trainer.tsk' is not a module of trainer " \
        "trainers/example" in text
    assert f"{NAMESPACE}:jobs.image.trainer: is set with trainingInput.masterConfig.imageUri" in text


def test_code_comes_from_a_trainer_package_uris_or_an_image(tmp_path: Path) -> None:
    given = {"trainingInput": {**GOOD_JOB["trainingInput"], "packageUris": ["gs://bucket/trainer-1.0.tar.gz"]}}
    image = {"trainingInput": {"scaleTier": "CUSTOM", "masterType": "n1-standard-8",
                               "masterConfig": {"imageUri": "us-docker.pkg.dev/p/r/trainer:1"}}}
    settings = load_stack_file(write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {"given": given,
                                                                                  "image": image}})), root=ROOT)
    assert settings.jobs["given"].trainer is None and settings.trainer_folders() == {}
    lines = problems_of(write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {"none": {
        "trainingInput": {k: v for k, v in GOOD_JOB["trainingInput"].items()}}}}), "u"))
    assert any(f"{NAMESPACE}:jobs.none.trainingInput.packageUris: required" in line for line in lines), lines


def test_a_package_folder_without_setup_is_a_trainer(tmp_path: Path) -> None:
    job = {**GOOD_JOB, "trainer": {"path": "trainers/example/trainer"}}
    settings = load_stack_file(write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {"bare": job}})), root=ROOT)
    assert settings.jobs["bare"].trainer.path == "trainers/example/trainer"
    not_code = {**GOOD_JOB, "trainer": {"path": "stacks"}}
    lines = problems_of(write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {"bare": not_code}}), "u"))
    assert any("trainer.path: 'stacks': has neither setup.py, pyproject.toml nor __init__.py" in line
               for line in lines), lines


# --- Jobs in Vertex AI's vocabulary: jobs.NAME.jobSpec ------------------------------------------------------


def test_a_job_spec_is_judged_in_the_stacks_region_with_the_stacks_labels(tmp_path: Path, real_today: None) -> None:
    path = write_stack(tmp_path, stack({f"{NAMESPACE}:labels": {"env": "test"},
                                        f"{NAMESPACE}:jobs": {"l4": {"labels": {"team": "a"}, "jobSpec": L4_SPOT}}}))
    job = load_stack_file(path, root=ROOT).jobs["l4"].job
    assert (job.region, job.labels) == ("us-central1", {"env": "test", "team": "a"})
    assert job.spec.scheduling.strategy == "SPOT"
    assert job.spec.worker_pool_specs[0].container_spec.args == ["--model-dir=${jobDir}"]


def test_job_spec_problems_are_named_at_the_path_written(tmp_path: Path, real_today: None) -> None:
    two = copy.deepcopy(L4_SPOT)
    two["workerPoolSpecs"][0]["machineSpec"]["acceleratorCount"] = 2
    two["scheduling"]["strategy"] = "SPOTTY"
    lines = problems_of(write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {"l4": {"jobSpec": two}}})))
    prefix = f"{NAMESPACE}:jobs.l4.jobSpec"
    assert any(f"{prefix}.workerPoolSpecs[0].machineSpec.acceleratorCount: " in line for line in lines), lines
    assert any(f"{prefix}.scheduling.strategy: 'SPOTTY' is not a scheduling strategy" in line for line in lines)
    single = {**L4_PACKAGE, "workerPoolSpecs": {**L4_PACKAGE["workerPoolSpecs"], "replica_count": 1}}
    lines = problems_of(write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {"one": {"jobSpec": single}}}), "u"))
    assert any(f"{NAMESPACE}:jobs.one.jobSpec.workerPoolSpecs.replica_count: unknown field" in line
               for line in lines), lines  # one mapping, as gcloud's example writes it; camelCase only


def test_a_job_spec_names_the_stacks_region_when_it_does_not_offer_the_accelerator(tmp_path: Path,
                                                                                   real_today: None) -> None:
    path = write_stack(tmp_path, stack({"gcp:region": "northamerica-northeast1",
                                        f"{NAMESPACE}:jobs": {"l4": {"jobSpec": L4_SPOT}}}))
    lines = problems_of(path)
    assert any(f"{NAMESPACE}:jobs.l4.jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType: NVIDIA_L4 is not "
               "offered for training in northamerica-northeast1" in line for line in lines), lines


def test_a_job_spec_runs_on_vertex_only_and_goes_alone(tmp_path: Path, real_today: None) -> None:
    ai = write_stack(tmp_path, stack({f"{NAMESPACE}:backend": "ai-platform",
                                      f"{NAMESPACE}:jobs": {"l4": {"jobSpec": L4_SPOT}}}))
    assert problems_of(ai) == [f"{ai}: {NAMESPACE}:jobs.l4.jobSpec: a CustomJobSpec is Vertex AI's vocabulary and "
                               "runs on Vertex AI only; allowed: gcp-training-jobs:backend vertex, or a job with "
                               "trainingInput for ai-platform"]
    both_ways = {"jobSpec": L4_SPOT, "trainingInput": GOOD_JOB["trainingInput"]}
    both = write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {"l4": both_ways}}), "u")
    assert any(f"{NAMESPACE}:jobs.l4: has both trainingInput and jobSpec; allowed: exactly one" in line
               for line in problems_of(both))
    neither = write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {"l4": {"labels": {"a": "b"}}}}), "v")
    assert any(f"{NAMESPACE}:jobs.l4: required: trainingInput" in line and "jobSpec" in line and "or tuningJob" in line
               for line in problems_of(neither))


def test_a_trainer_goes_into_a_job_specs_python_package_pools(tmp_path: Path) -> None:
    ok = load_stack_file(write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {"pkg": {
        "trainer": {"path": "trainers/example"}, "jobSpec": L4_PACKAGE}}})), root=ROOT)
    assert ok.trainer_folders() == {"trainers/example": ROOT / "trainers" / "example"}
    assert ok.jobs["pkg"].job.spec.worker_pool_specs[0].python_package_spec.package_uris is None  # the stack's
    typo = copy.deepcopy(L4_PACKAGE)
    typo["workerPoolSpecs"]["pythonPackageSpec"]["pythonModule"] = "trainer.tsk"
    lines = problems_of(write_stack(tmp_path, stack({f"{NAMESPACE}:jobs": {
        "typo": {"trainer": {"path": "trainers/example"}, "jobSpec": typo},
        "box": {"trainer": {"path": "trainers/example"}, "jobSpec": L4_SPOT},
        "none": {"jobSpec": L4_PACKAGE}}}), "u"))
    text = "\n".join(lines)
    assert f"{NAMESPACE}:jobs.typo.jobSpec.workerPoolSpecs.pythonPackageSpec.pythonModule: 'trainer.tsk' is not a " \
        "module of trainer trainers/example" in text
    assert f"{NAMESPACE}:jobs.box.trainer: is set, but no pool of jobSpec runs a Python package" in text
    assert f"{NAMESPACE}:jobs.none.jobSpec.workerPoolSpecs.pythonPackageSpec.packageUris: required" in text


def test_job_spec_decimals_and_secrets_are_kept_as_written(tmp_path: Path) -> None:
    path = write_stack(tmp_path, f"""\
        config:
          gcp:project: my-ml-test
          {NAMESPACE}:jobs:
            l4:
              jobSpec:
                workerPoolSpecs:
                  - machineSpec: {{machineType: g2-standard-8, acceleratorType: NVIDIA_L4, acceleratorCount: 1}}
                    replicaCount: 1
                    containerSpec:
                      imageUri: us-central1-docker.pkg.dev/my-ml-test/trainers/t:1
                      args: [--lr, 0.10, --token]
                      env: [{{name: RATIO, value: 1.50}}]
        """)
    text = "\n".join(problems_of(path))
    base = f"{NAMESPACE}:jobs.l4.jobSpec.workerPoolSpecs[0].containerSpec"
    assert f"{base}.args[1]: 0.10 unquoted: Pulumi reads it as the number 0.1" in text, text
    assert f"{base}.env[0].value: 1.50 unquoted: Pulumi reads it as the number 1.5" in text, text
    quoted = path.read_text().replace("0.10", '"0.10"').replace("1.50", '"1.50"').replace(
        "--token]", "{secure: v1:AAAA:BBBB}]")
    path.write_text(quoted)
    settings = load_stack_file(path, root=ROOT)
    box = settings.jobs["l4"].job.spec.worker_pool_specs[0].container_spec
    assert box.args == ["--lr", "0.10", "[secret]"] and box.env[0].value == "1.50"
    assert settings.secret_keys == {"jobs"}
    config, secret = pulumi_config(yaml.safe_load(path.read_text()))
    assert secret == [f"{NAMESPACE}:jobs"]
    assert program_settings(config).jobs["l4"].job.spec.worker_pool_specs[0].container_spec.args[1] == "0.10"
    jobs = json.loads(config[f"{NAMESPACE}:jobs"])  # as Pulumi passes a number it read: JSON 0.5
    jobs["l4"]["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["env"][0]["value"] = 0.5
    config[f"{NAMESPACE}:jobs"] = json.dumps(jobs)
    assert program_settings(config).jobs["l4"].job.spec.worker_pool_specs[0].container_spec.env[0].value == "0.5"


# --- Decimals and secrets ----------------------------------------------------------------------------------


def test_quoted_decimal_versions_are_kept_as_written(tmp_path: Path) -> None:
    path = write_stack(tmp_path, f"""\
        config:
          gcp:project: my-ml-test
          {NAMESPACE}:backend: ai-platform
          {NAMESPACE}:jobs:
            old:
              trainer: {{path: trainers/example}}
              trainingInput:
                scaleTier: BASIC_GPU
                runtimeVersion: "1.10"
                pythonVersion: "3.5"
                pythonModule: trainer.task
        """)
    assert load_stack_file(path, root=ROOT).jobs["old"].job.training_input.runtime_version == "1.10"


def test_unquoted_decimals_pulumi_would_change_are_refused_with_the_text_kept(tmp_path: Path) -> None:
    """Pulumi reads `1.10` inside an object value as the number 1.1: validate must not pass what up changes."""
    path = write_stack(tmp_path, f"""\
        config:
          gcp:project: my-ml-test
          {NAMESPACE}:backend: ai-platform
          {NAMESPACE}:jobs:
            old:
              trainer: {{path: trainers/example}}
              trainingInput:
                scaleTier: BASIC_GPU
                runtimeVersion: 1.10
                pythonVersion: 3.5
                pythonModule: trainer.task
        """)
    assert problems_of(path) == [f'{path}: {NAMESPACE}:jobs.old.trainingInput.runtimeVersion: 1.10 unquoted: Pulumi '
                                 'reads it as the number 1.1; write it in quotes: "1.10"']


def test_unquoted_decimals_are_refused_at_the_top_level_and_in_labels_and_args(tmp_path: Path) -> None:
    path = write_stack(tmp_path, f"""\
        config:
          gcp:project: my-ml-test
          {NAMESPACE}:region: 1.10
          {NAMESPACE}:labels: {{release: 2.10}}
          {NAMESPACE}:jobs:
            gpu:
              trainer: {{path: trainers/example}}
              trainingInput: {{scaleTier: BASIC, runtimeVersion: "2.11", pythonModule: trainer.task, args: [0.50]}}
        """)
    text = "\n".join(problems_of(path))
    for where, written, read in ((f"{NAMESPACE}:region", "1.10", "1.1"), (f"{NAMESPACE}:labels.release", "2.10", "2.1"),
                                 (f"{NAMESPACE}:jobs.gpu.trainingInput.args[0]", "0.50", "0.5")):
        assert f"{where}: {written} unquoted: Pulumi reads it as the number {read}" in text, text


def test_unquoted_decimals_pulumi_keeps_are_fine(tmp_path: Path) -> None:
    path = write_stack(tmp_path, f"""\
        config:
          gcp:project: my-ml-test
          {NAMESPACE}:jobs:
            gpu:
              trainer: {{path: trainers/example}}
              trainingInput: {{scaleTier: BASIC, runtimeVersion: 2.11, pythonVersion: 3.7,
                               pythonModule: trainer.task}}
        """)
    ti = load_stack_file(path, root=ROOT).jobs["gpu"].job.training_input
    assert (ti.runtime_version, ti.python_version) == ("2.11", "3.7")


def test_the_decimals_check_reads_the_file_again_with_the_projects_bounded_reader(tmp_path: Path) -> None:
    """The second reading, as Pulumi reads numbers, is the project's reader (bounded, its own errors): an unquoted
    1.10 is the number there and the text in the first; a file gone since the first reading leaves the check, whose
    every other fault is raised."""
    path = write_stack(tmp_path, f"""\
        config:
          {NAMESPACE}:region: 1.10
          {NAMESPACE}:labels: {{release: "2.10"}}
        """)
    assert read_yaml(path, numbers=True)["config"] == {f"{NAMESPACE}:region": 1.1,
                                                       f"{NAMESPACE}:labels": {"release": "2.10"}}
    assert read_yaml(path)["config"][f"{NAMESPACE}:region"] == "1.10"
    config = {f"{NAMESPACE}:region": "1.10"}
    assert [p.message for p in lossy_decimals(path, config)] == [
        '1.10 unquoted: Pulumi reads it as the number 1.1; write it in quotes: "1.10"']
    path.unlink()
    assert lossy_decimals(path, config) == []
    with pytest.raises(UnreadableError, match=r"bad\.yaml:2:1: not valid YAML: the \[ opened at line 1"):
        parse_yaml("a: [1.10\n", "bad.yaml", numbers=True)


def test_encrypted_values_are_opaque_not_errors(tmp_path: Path) -> None:
    path = write_stack(tmp_path, f"""\
        encryptionsalt: v1:abc:def
        config:
          gcp:project: my-ml-test
          {NAMESPACE}:apiEndpoint:
            secure: v1:AAAA:BBBB
          {NAMESPACE}:jobs:
            gpu:
              trainer: {{path: trainers/example}}
              trainingInput:
                scaleTier: BASIC
                runtimeVersion: "2.11"
                pythonModule: trainer.task
                args:
                  - --token
                  - secure: v1:CCCC:DDDD
        """)
    settings = load_stack_file(path, root=ROOT)
    assert settings.jobs["gpu"].job.training_input.args == ["--token", "[secret]"]
    assert settings.secret_keys == {"apiEndpoint", "jobs"}


# --- Inside a Pulumi program --------------------------------------------------------------------------------


def program_settings(config: dict[str, str], stack_name: str = "t") -> StackSettings:
    with mocked_pulumi(stack_name, config):
        return from_pulumi_config(root=ROOT)


@pytest.mark.parametrize("name", ["dev", "dev-ai-platform", "staging", "prod", "local", "local-ai-platform"])
def test_pulumi_config_gives_the_same_settings_as_the_stack_file(name: str, real_today: None) -> None:
    path = STACKS / f"Pulumi.{name}.yaml"
    config, _ = pulumi_config(yaml.safe_load(path.read_text()))
    offline, inside = load_stack_file(path), program_settings(config, name)
    if name != "local":  # its tuning bounds as written stay text offline (0.0001, decimals.py), numbers from Pulumi
        assert inside.model_dump() == offline.model_dump()
    assert {n: j.job for n, j in inside.jobs.items()} == {n: j.job for n, j in offline.jobs.items()}
    assert {n: j.body for n, j in inside.jobs.items()} == {n: j.body for n, j in offline.jobs.items()}
    assert inside.warnings == offline.warnings


def test_pulumi_numbers_in_version_fields_become_text() -> None:
    """Pulumi passes object values as JSON: `runtimeVersion: 2.11` arrives as the number 2.11."""
    jobs = {"gpu": {**GOOD_JOB, "trainingInput": {**GOOD_JOB["trainingInput"], "runtimeVersion": 2.11,
                                                   "pythonVersion": 3.7}}}
    settings = program_settings({"gcp:project": "my-ml-test", f"{NAMESPACE}:jobs": json.dumps(jobs),
                                 f"{NAMESPACE}:region": ""})
    ti = settings.jobs["gpu"].job.training_input
    assert (ti.runtime_version, ti.python_version, settings.region) == ("2.11", "3.7", "us-central1")


def test_bad_pulumi_config_is_one_clean_error_listing_every_problem() -> None:
    with pytest.raises(pulumi.RunError) as caught:
        program_settings({f"{NAMESPACE}:backend": "vertx", f"{NAMESPACE}:buckets": '{"forceDestroy": "maybe"}',
                          f"{NAMESPACE}:labels": "not json"})
    message = str(caught.value)
    assert message.startswith("invalid configuration of stack 't' (4 problems):")
    for expected in (f"{NAMESPACE}:backend: 'vertx'", f"{NAMESPACE}:project: required",
                     f"{NAMESPACE}:buckets.forceDestroy: 'maybe'", f"{NAMESPACE}:labels: 'not json'"):
        assert expected in message, message
    assert len(caught.value.problems) == 4  # type: ignore[attr-defined]


# --- Pulumi.yaml declares exactly what the settings read ----------------------------------------------------


def test_project_file_declares_every_key_with_a_default_the_settings_accept() -> None:
    declared = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["config"]
    fields = {info.alias or name for name, info in StackSettings.model_fields.items()}
    assert {key.split(":", 1)[1] for key in declared} == fields
    for key, declaration in declared.items():
        assert "description" in declaration and "default" in declaration, key  # else required in every stack
        if key.split(":", 1)[1] in OBJECT_KEYS:
            assert "type" not in declaration, "Pulumi's config types are string, integer, boolean, array"
    config, _ = pulumi_config({"config": {"gcp:project": "my-ml-test"}})
    settings = program_settings(config)
    assert (settings.backend, settings.region, settings.enable_apis, settings.api_endpoint) == \
        ("vertex", "us-central1", True, None)


def test_inside_a_program_a_secret_label_is_refused_and_no_decrypted_secret_is_printed(tmp_path: Path) -> None:
    """Pulumi gives the program secrets decrypted and says only which whole keys hold one: where they are comes
    from the stack file (`secure:` leaves). A secret label is refused; a secret elsewhere that a problem would
    quote (an invalid masterType) is not printed."""
    (tmp_path / "Pulumi.yaml").write_text("name: t\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    on_file = {"gcp:project": "my-ml-test", f"{NAMESPACE}:backend": "ai-platform",
               f"{NAMESPACE}:labels": {"owner": {"secure": "v1:AAAA:BBBB"}},
               f"{NAMESPACE}:jobs": {"gpu": {"trainingInput": {
                   "scaleTier": "CUSTOM", "masterType": {"secure": "v1:CCCC:DDDD"}, "region": "us-central1",
                   "runtimeVersion": "2.11", "pythonVersion": "3.7", "pythonModule": "trainer.task",
                   "packageUris": ["gs://my-code/t.tar.gz"]}}}}
    (tmp_path / "stacks" / "Pulumi.t.yaml").write_text(yaml.safe_dump({"config": on_file}))
    owner, machine = "alice-sekrit-owner", "sekrit-machine-type-7"
    decrypted = {"gcp:project": "my-ml-test", f"{NAMESPACE}:backend": "ai-platform",
                 f"{NAMESPACE}:labels": json.dumps({"owner": owner}),
                 f"{NAMESPACE}:jobs": json.dumps({"gpu": {"trainingInput": {
                     **on_file[f"{NAMESPACE}:jobs"]["gpu"]["trainingInput"], "masterType": machine}}})}
    with mocked_pulumi("t", decrypted, [f"{NAMESPACE}:labels", f"{NAMESPACE}:jobs"]), \
            pytest.raises(pulumi.RunError) as caught:
        from_pulumi_config(root=tmp_path)
    text = str(caught.value)
    assert f"{NAMESPACE}:labels.owner: is a secret (`pulumi config set --secret`), and a label is sent to Google " \
           "in plain text" in text, text
    assert f"{NAMESPACE}:jobs.gpu.trainingInput.masterType: " in text, text  # the problem, without the value
    assert owner not in text and machine not in text
