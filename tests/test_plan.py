"""`python -m components plan --stack NAME`, run as a user runs it: a separate process, offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def plan(*args: str, build_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")}  # no config from outside
    env.update({"GCP_TRAINING_JOBS_BUILD_DIR": str(build_dir),
                # offline: a client that tried to reach Google (through any proxy-aware stack) would fail
                "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
                "GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent"})
    return subprocess.run([sys.executable, "-m", "components", "plan", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess[str]]:
    build = tmp_path_factory.mktemp("build")
    runs = {"dev": ("--stack", "dev"), "staging": ("--stack", "staging"), "prod": ("--stack", "prod"),
            "prod-json": ("--stack", "prod", "--json"), "dev-ai-platform": ("--stack", "dev-ai-platform"),
            "local": ("--stack", "local"), "local-ai-platform": ("--stack", "local-ai-platform")}
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = {name: pool.submit(plan, *args, build_dir=build) for name, args in runs.items()}
    return {name: future.result() for name, future in done.items()}


@pytest.mark.parametrize("name", ["dev", "staging", "prod", "prod-json", "dev-ai-platform", "local",
                                  "local-ai-platform"])
def test_plans_of_the_repository_stacks_succeed(plans: dict[str, subprocess.CompletedProcess[str]],
                                                 name: str) -> None:
    result = plans[name]
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_dev_plan_shows_buckets_and_the_tpu_job_on_vertex_with_its_warning(
        plans: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """The README's first command: the AI Platform Training TPU guide's job on Vertex AI in a custom container; the
    master BASIC_TPU runs on AI Platform is named in the plan's warnings, and nothing is granted or built."""
    out = plans["dev"].stdout
    for line in (
        "+ gcp:storage/bucket:Bucket  dev-job-dir",
        "+ gcp:storage/bucket:Bucket  dev-packages",
        "lifecycle: delete objects older than 7 days",
        "+ pulumi-python:dynamic/training:TrainingJob  resnet",
        "backend: vertex",
        "scaleTier: BASIC_TPU",
        "accelerators: 8 TPU_V2",
        "image: us-central1-docker.pkg.dev/my-ml-dev/trainers/example:0.1",
        "jobDir: gs://dev-job-dir/jobs/resnet",
        "after: apis, dev",
        "8 resources to create (6 custom resources, 2 components)",  # cloudquotas enabled for Vertex's quota reads
        "        8 x TPU_V2 (TPU core): ",
    ):
        assert line in out, f"{line!r} not in:\n{out}"
    assert "IAMMember" not in out and "TpuServiceAccount" not in out and "TrainerPackage" not in out
    warning = ("    gcp-training-jobs:jobs.resnet.trainingInput.scaleTier: BASIC_TPU's standard master is not used on "
               "Vertex AI: there the TPU VM runs the code itself, so the job is one cloud-tpu pool (8 TPU_V2 cores) "
               "running the master's code; AI Platform Training ran that master beside the TPU")
    assert f"\n\nWarnings (they stop nothing):\n{warning}\n\nCost while every machine runs" in out
    assert out.count("BASIC_TPU's standard master") == 1 and plans["dev"].stderr == ""


def test_dev_ai_platform_plan_shows_buckets_grant_package_and_the_tpu_job(
        plans: dict[str, subprocess.CompletedProcess[str]]) -> None:
    out = plans["dev-ai-platform"].stdout
    for line in (
        "+ gcp:storage/bucket:Bucket  dev-ai-platform-job-dir",
        "+ gcp:storage/bucket:Bucket  dev-ai-platform-packages",
        "location: US-CENTRAL1",
        "uniformBucketLevelAccess: true",
        "publicAccessPrevention: enforced",
        "versioning: enabled",
        "lifecycle: delete objects older than 7 days",
        "+ gcp:projects/iAMMember:IAMMember  tpu-service-agent-ml-service-agent",
        "role: roles/ml.serviceAgent",
        "member: serviceAccount:(from projects.getConfig at apply)",
        "+ pulumi-python:dynamic/training:TpuServiceAccount  tpu-service-agent-lookup",
        "+ pulumi-python:dynamic/training:TrainingJob  resnet",
        "backend: ai-platform",
        "scaleTier: BASIC_TPU",
        "worker: cloud_tpu x1 + 8 TPU_V2 (BASIC_TPU tier)",
        "runtime: 1.12, Python (default)",
        "module: resnet.resnet_main",
        "jobDir: gs://dev-ai-platform-job-dir/jobs/resnet",
        "args: --data_dir=gs://cloud-tpu-test-datasets/fake_imagenet "
        "--model_dir=gs://dev-ai-platform-job-dir/jobs/resnet",
        "after: apis, dev-ai-platform, tpu-service-agent, trainer-example",
        "13 resources to create (9 custom resources, 4 components)",
    ):
        assert line in out, f"{line!r} not in:\n{out}"
    assert "package: gs://dev-ai-platform-packages/trainers/example_trainer-" in out
    assert "__provider" not in out
    assert "warning" not in plans["dev-ai-platform"].stderr, "AI Platform runs the job as written"


def test_local_plan_runs_three_vertex_jobs_against_the_emulator(
        plans: dict[str, subprocess.CompletedProcess[str]]) -> None:
    out = plans["local"].stdout
    for line in ("+ pulumi-python:dynamic/training:TrainingJob  gpu-spot", "pool 0: g2-standard-8 x1 + 1 NVIDIA_L4",
                 "scheduling: strategy=SPOT, timeout=7200s",
                 "+ pulumi-python:dynamic/training:TrainingJob  tpu-v5e",
                 "pool 0: ct5lp-hightpu-4t x1 + 4 TPU_V5_LITEPOD",
                 "+ pulumi-python:dynamic/training:TrainingJob  tune", "backend: vertex",
                 "4 resources to create (3 custom resources, 1 component)"):
        assert line in out, f"{line!r} not in:\n{out}"
    assert "backend: ai-platform" not in out and "gcp:" not in out.split("Outputs:")[0].replace("gcp-training", "")
    legacy = plans["local-ai-platform"].stdout.split("Outputs:")[0]  # the legacy jobs, beside them
    assert legacy.count("backend: ai-platform") == 2 and "+ pulumi-python:dynamic/training:TrainingJob  tpu" in legacy


def test_prod_plan_shows_the_guide_cluster_shape_on_current_gpus(
        plans: dict[str, subprocess.CompletedProcess[str]]) -> None:
    out = plans["prod"].stdout
    for line in ("master: a2-ultragpu-8g x1 + 8 NVIDIA_A100_80GB", "worker: a2-ultragpu-8g x3 + 8 NVIDIA_A100_80GB",
                 "parameterServer: n1-highmem-8 x3", "accelerators: 32 NVIDIA_A100_80GB", "backend: vertex",
                 "image: us-central1-docker.pkg.dev/my-ml-prod/trainers/example:0.1",
                 "args: --epochs=50 --batch-size=256 --model-dir=gs://prod-job-dir/jobs/distributed",
                 "protectJobs true", "    all hold"):
        assert line in out, f"{line!r} not in:\n{out}"
    assert "IAMMember" not in out and "TpuServiceAccount" not in out


def test_staging_plan_shows_the_l4_vm_on_spot(plans: dict[str, subprocess.CompletedProcess[str]]) -> None:
    out = plans["staging"].stdout
    for line in ("+ pulumi-python:dynamic/training:TrainingJob  l4-trial", "region: us-central1",
                 "pool 0: g2-standard-8 x1 + 1 NVIDIA_L4", "accelerators: 1 NVIDIA_L4",
                 "pool 0 image: us-central1-docker.pkg.dev/my-ml-staging/trainers/example:0.1",
                 "pool 0 args: --epochs=5 --batch-size=64 --model-dir=gs://staging-job-dir/jobs/l4-trial",
                 "outputDir: gs://staging-job-dir/jobs/l4-trial", "scheduling: strategy=SPOT, timeout=7200s",
                 "labels: env=staging, purpose=trial, team=ml-platform", "l4-trial: us-central1, runs SPOT, at Spot "
                 "rates: $0.61/h (on demand $0.98/h; Spot $0.61/h); worst case $1.22 ($0.61/h x 2 h; "
                 "jobSpec.scheduling.timeout 7200s)", "spotOnly true",
                 "    all hold"):
        assert line in out, f"{line!r} not in:\n{out}"
    assert "TrainerPackage" not in out, "a custom container carries its code: nothing is built"


def test_json_plan_is_the_same_plan_as_data(plans: dict[str, subprocess.CompletedProcess[str]]) -> None:
    document = json.loads(plans["prod-json"].stdout)
    assert document["stack"] == "prod" and document["summary"] == {"resources": 8, "custom": 6, "components": 2}

    def flat(nodes: list[dict]) -> list[dict]:
        return [n for node in nodes for n in (node, *flat(node.get("children", [])))]

    resources = flat(document["resources"])
    assert len(resources) == 8
    job = next(r for r in resources if r["type"].endswith("training:TrainingJob"))
    assert job["details"]["worker"] == "a2-ultragpu-8g x3 + 8 NVIDIA_A100_80GB"
    assert job["inputs"]["job"]["trainingInput"]["workerCount"] == "3"
    assert job["inputs"]["guardrails"]["protectJobs"] is True
    assert "__provider" not in job["inputs"]
    assert document["outputs"]["jobDirBucket"] == "prod-job-dir"


@pytest.mark.slow
def test_a_broken_stack_exits_1_naming_every_field_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.broken.yaml").write_text(textwrap.dedent("""\
        config:
          gcp:project: my-ml-test
          gcp-training-jobs:backend: vertex
          gcp-training-jobs:jobs:
            gpu:
              trainer: {path: trainers/example}
              trainingInput:
                scaleTier: CUSTOM
                masterType: n1-standard-8
                masterConfig: {acceleratorConfig: {type: NVIDIA_TESLA_T4, count: 3}}
                runtimeVersion: "2.11"
                pythonModule: trainer.task
                region: us-central1
            k80:
              trainer: {path: trainers/example}
              trainingInput: {scaleTier: BASIC_GPU, runtimeVersion: "2.11", pythonModule: trainer.task}
        """))
    result = plan("--stack", "broken", "--stacks-dir", str(tmp_path), build_dir=tmp_path / "build")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    stack_file = tmp_path / "Pulumi.broken.yaml"
    assert f"{stack_file}: gcp-training-jobs:jobs.gpu.trainingInput.masterConfig.acceleratorConfig.count: 3 " \
        "NVIDIA_TESLA_T4 on n1-standard-8; allowed: 1, 2, 4" in lines
    assert any(line.startswith(f"{stack_file}: gcp-training-jobs:jobs.k80.trainingInput.scaleTier: NVIDIA_TESLA_K80 "
                               "is not offered by Vertex AI") for line in lines), lines
    assert "Traceback" not in result.stdout + result.stderr
    assert not (tmp_path / "build").exists(), "nothing is built for an invalid stack"


@pytest.mark.slow
def test_a_missing_stack_exits_2_listing_the_stacks(tmp_path: Path) -> None:
    result = plan("--stack", "qa", build_dir=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("stacks/Pulumi.qa.yaml: no such stack file; available stacks in stacks: ")
    assert {"dev", "prod", "staging"} <= set(result.stderr.rsplit(": ", 1)[1].strip().split(", "))


@pytest.mark.slow
def test_unreadable_yaml_exits_2(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.bad.yaml").write_text("config:\n  gcp:project: [unclosed\n")
    result = plan("--stack", "bad", "--stacks-dir", str(tmp_path), build_dir=tmp_path)
    assert result.returncode == 2 and "not valid YAML" in result.stderr
    assert "Traceback" not in result.stderr
