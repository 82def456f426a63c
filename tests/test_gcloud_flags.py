"""gcloud's own flags and spellings for validate and render: parsed as gcloud parses them, and overriding the
file as gcloud's do (`gcloud ai-platform jobs submit training`, `gcloud ai custom-jobs create`)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.cli.gcloud_flags import _ALL_FLAGS, add_gcloud_flags, input_paths, with_flags, worker_pool_specs
from gcp_training_jobs.cli.main import parser
from gcp_training_jobs.cli.validate import load_file_job
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.io.documents import Document

ROOT = Path(__file__).resolve().parents[1]
GUIDE_EXAMPLES = ROOT / "tests" / "fixtures" / "guide_examples"


def args_of(*flags: str) -> argparse.Namespace:
    return parser().parse_args(["validate", "config.yaml", *flags])


def usage_error(capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    with pytest.raises(SystemExit) as caught:
        args_of(*flags)
    assert caught.value.code == 2
    return capsys.readouterr().err.splitlines()[-1]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "components", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


# --- --scale-tier ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("given", "tier"), [
    ("basic", "BASIC"), ("basic-gpu", "BASIC_GPU"), ("basic-tpu", "BASIC_TPU"), ("custom", "CUSTOM"),
    ("premium-1", "PREMIUM_1"), ("standard-1", "STANDARD_1"), ("CUSTOM", "CUSTOM"), ("Basic-GPU", "BASIC_GPU"),
    ("BASIC_TPU", "BASIC_TPU"),
])
def test_scale_tier_in_gcloud_s_spelling_any_case(given: str, tier: str) -> None:
    assert args_of("--scale-tier", given).scale_tier == tier
    data = with_flags({"trainingInput": {"scaleTier": "BASIC"}}, args_of("--scale-tier", given))
    assert data["trainingInput"]["scaleTier"] == tier


def test_an_unknown_scale_tier_is_a_usage_error_with_the_closest_choice(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, "--scale-tier", "custum").endswith(
        "argument --scale-tier: 'custum' is not a scale tier (did you mean custom?); allowed: basic, basic-gpu, "
        "basic-tpu, custom, premium-1, standard-1 (any case)")


# --- accelerators, machine types, images, counts ---------------------------------------------------------------

@pytest.mark.parametrize("value", ["count=1,type=nvidia-tesla-t4", "type=nvidia-tesla-t4,count=1",
                                   "count=1,type=NVIDIA_TESLA_T4"])
def test_master_accelerator_takes_gcloud_s_value_format(value: str) -> None:
    assert args_of("--master-accelerator", value).master_accelerator == {"type": "NVIDIA_TESLA_T4", "count": 1}


@pytest.mark.parametrize(("value", "message"), [
    ("type=nvidia-tesla-t4",
     "count is missing; allowed: both count=N and type=TYPE (e.g. count=1,type=nvidia-tesla-t4)"),
    ("count=2", "type is missing; allowed: both count=N and type=TYPE (e.g. count=1,type=nvidia-tesla-t4)"),
    ("count=0,type=nvidia-tesla-t4", "count 0 is too small; allowed: 1 or more (greater than 0)"),
    ("count=two,type=nvidia-tesla-t4", "count 'two' is not a whole number; allowed: 1 or more"),
    ("count=1,type=nvidia-tesla-t5", "type 'nvidia-tesla-t5' is not an accelerator (did you mean nvidia-tesla-t4?); "
     "allowed: nvidia-tesla-k80, nvidia-tesla-p100, nvidia-tesla-v100, nvidia-tesla-p4, nvidia-tesla-t4, "
     "nvidia-tesla-a100, tpu-v2, tpu-v3, tpu-v2-pod, tpu-v3-pod, tpu-v4-pod"),
    ("count=1,kind=nvidia-tesla-t4", "unknown key 'kind'; allowed: count=N,type=TYPE"),
    ("nvidia-tesla-t4", "'nvidia-tesla-t4' is not KEY=VALUE; allowed: KEY=VALUE pairs separated by commas "
     "(e.g. count=1,type=nvidia-tesla-t4)"),
])
def test_bad_accelerator_values_are_usage_errors(capsys: pytest.CaptureFixture[str], value: str, message: str) -> None:
    for flag in ("--master-accelerator", "--worker-accelerator", "--parameter-server-accelerator"):
        assert usage_error(capsys, flag, value).endswith(f"argument {flag}: {message}")


def test_role_flags_override_the_file_field_by_field() -> None:
    data = {"labels": {"team": "ml"}, "trainingInput": {
        "scaleTier": "BASIC", "masterType": "complex_model_m_gpu",
        "masterConfig": {"imageUri": "gcr.io/p/old:1", "acceleratorConfig": {"type": "NVIDIA_TESLA_K80", "count": 4}},
        "workerType": "n1-standard-4", "workerCount": 9,
        "workerConfig": {"imageUri": "gcr.io/p/worker:1"},
    }}
    args = args_of("--scale-tier", "custom", "--master-machine-type", "n1-standard-8",
                   "--master-accelerator", "count=1,type=nvidia-tesla-t4",
                   "--worker-machine-type", "n1-highcpu-16", "--worker-count", "2",
                   "--worker-accelerator", "count=2,type=nvidia-tesla-t4",
                   "--parameter-server-machine-type", "n1-highmem-8", "--parameter-server-count", "1",
                   "--parameter-server-image-uri", "gcr.io/p/ps:1",
                   "--labels", "env=dev,owner=alice", "--python-version", "3.7", "--packages", "gs://b/a.tgz,gs://b/c.tgz")
    ti = with_flags(data, args)["trainingInput"]
    assert ti == {
        "scaleTier": "CUSTOM", "masterType": "n1-standard-8",
        "masterConfig": {"imageUri": "gcr.io/p/old:1", "acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 1}},
        "workerType": "n1-highcpu-16", "workerCount": 2,
        "workerConfig": {"imageUri": "gcr.io/p/worker:1", "acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 2}},
        "parameterServerType": "n1-highmem-8", "parameterServerCount": 1,
        "parameterServerConfig": {"imageUri": "gcr.io/p/ps:1"},
        "pythonVersion": "3.7", "packageUris": ["gs://b/a.tgz", "gs://b/c.tgz"],
    }
    assert with_flags(data, args)["labels"] == {"env": "dev", "owner": "alice"}  # replaced, as gcloud does
    assert data["trainingInput"]["masterType"] == "complex_model_m_gpu"  # the file's data is not changed


def test_master_image_uri_and_a_config_without_training_input() -> None:
    data = with_flags({"jobId": "j"}, args_of("--master-image-uri", "gcr.io/p/i:1", "--scale-tier", "basic"))
    assert data == {"jobId": "j", "trainingInput": {"scaleTier": "BASIC", "masterConfig": {"imageUri": "gcr.io/p/i:1"}}}


@pytest.mark.parametrize(("given", "missing"), [
    (["--worker-count", "3"], "--worker-machine-type"),
    (["--worker-machine-type", "n1-standard-4"], "--worker-count"),
    (["--parameter-server-count", "1"], "--parameter-server-machine-type"),
])
def test_a_count_and_its_machine_type_go_together_as_in_gcloud(given: list[str], missing: str) -> None:
    with pytest.raises(SpecError) as caught:
        with_flags({"trainingInput": {}}, args_of(*given))
    (problem,) = caught.value.problems
    assert problem.path == given[0] and problem.message.startswith(f"is given without {missing}; allowed: both")


def test_counts_are_whole_numbers_of_at_least_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, "--worker-count", "0").endswith(
        "argument --worker-count: 0 is too small; allowed: 1 or more")
    assert usage_error(capsys, "--parameter-server-count", "x").endswith(
        "argument --parameter-server-count: 'x' is not a whole number; allowed: 1 or more")


def test_labels_syntax(capsys: pytest.CaptureFixture[str]) -> None:
    assert args_of("--labels", "team=ml,env=prod").labels == {"team": "ml", "env": "prod"}
    assert usage_error(capsys, "--labels", "team").endswith(
        "argument --labels: 'team' is not KEY=VALUE; allowed: KEY=VALUE pairs separated by commas "
        "(e.g. count=1,type=nvidia-tesla-t4)")


@pytest.mark.slow
def test_bad_flag_labels_are_judged_like_the_file_s(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text((GUIDE_EXAMPLES / "gpu_compute_engine.yaml").read_text())
    done = run("validate", str(config), "--labels", "Team=ML")
    assert done.returncode == 1 and f"{config}: labels" in done.stdout


# --- the CLI, end to end ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_validate_and_render_take_a_gcloud_command_line(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("trainingInput:\n  region: us-central1\n")
    flags = ["--scale-tier", "custom", "--master-machine-type", "n1-standard-8",
             "--master-accelerator", "count=1,type=nvidia-tesla-t4", "--master-image-uri", "gcr.io/p/trainer:1",
             "--worker-machine-type", "n1-standard-8", "--worker-count", "2",
             "--worker-accelerator", "count=1,type=nvidia-tesla-t4", "--labels", "team=ml"]
    done = run("validate", str(config), *flags)
    assert done.returncode == 0, done.stdout + done.stderr
    body = json.loads(run("render", str(config), *flags).stdout)
    assert body["labels"]["team"] == "ml"
    assert body["trainingInput"]["workerConfig"]["acceleratorConfig"] == {"type": "NVIDIA_TESLA_T4", "count": "1"}
    vertex = json.loads(run("render", str(config), "--backend", "vertex", *flags).stdout)
    pools = vertex["jobSpec"]["workerPoolSpecs"]
    assert [p["machineSpec"]["acceleratorType"] for p in pools] == ["NVIDIA_TESLA_T4", "NVIDIA_TESLA_T4"]


@pytest.mark.slow
def test_scale_tier_custom_on_a_guide_example_is_no_longer_refused() -> None:
    done = run("validate", str(GUIDE_EXAMPLES / "gpu_compute_engine.yaml"), "--scale-tier", "custom")
    assert done.returncode == 0, done.stdout + done.stderr


def test_render_can_refuse_a_body_without_module_or_package(tmp_path: Path) -> None:
    data = {"trainingInput": {"scaleTier": "BASIC", "region": "us-central1", "runtimeVersion": "2.11"}}
    doc = Document(tmp_path / "c.yaml", "job", data)
    assert load_file_job(doc, args_of()).ok  # validate: gcloud's flags may still supply them
    refused = load_file_job(doc, args_of(), partial=False)
    assert [p.path for p in refused.problems] == ["trainingInput.pythonModule", "trainingInput.packageUris"]
    assert load_file_job(doc, args_of("--module-name", "trainer.task", "--package-uris", "gs://my-bucket/t.tgz"),
                         partial=False).ok


def test_config_flag_names_the_file_as_gcloud_does() -> None:
    assert input_paths(args_of("--config", "other.yaml")) == ["config.yaml", "other.yaml"]
    assert input_paths(parser().parse_args(["render", "a.yaml"])) == ["a.yaml"]


# --- Vertex AI: --worker-pool-spec ----------------------------------------------------------------------------

def test_worker_pool_specs_are_built_as_gcloud_builds_them() -> None:
    args = args_of("--worker-pool-spec", "machine-type=n1-standard-8,replica-count=1,accelerator-type=nvidia-tesla-t4,"
                   "accelerator-count=2,container-image-uri=us-docker.pkg.dev/p/r/trainer:1",
                   "--worker-pool-spec", "machine-type=n1-standard-8,replica-count=3,accelerator-type=NVIDIA_L4",
                   "--worker-pool-spec", "",
                   "--worker-pool-spec", "machine-type=e2-standard-4,executor-image-uri=us-docker.pkg.dev/vertex-ai/"
                   "training/tf-cpu.2-11:latest,python-module=trainer.task",
                   "--python-package-uris", "gs://b/trainer.tgz")
    assert worker_pool_specs(args.worker_pool_spec, args.python_package_uris) == [
        {"machineSpec": {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 2},
         "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/trainer:1"}},
        {"machineSpec": {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
         "replicaCount": 3, "pythonPackageSpec": {"packageUris": ["gs://b/trainer.tgz"]}},
        {},
        {"machineSpec": {"machineType": "e2-standard-4"}, "replicaCount": 1, "pythonPackageSpec": {
            "executorImageUri": "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-11:latest",
            "packageUris": ["gs://b/trainer.tgz"], "pythonModule": "trainer.task"}},
    ]


def test_worker_pool_specs_replace_the_file_s_in_either_shape() -> None:
    args = args_of("--worker-pool-spec", "machine-type=e2-standard-4,container-image-uri=gcr.io/p/i:1",
                   "--labels", "team=ml")
    pools = [{"machineSpec": {"machineType": "e2-standard-4"}, "replicaCount": 1,
              "containerSpec": {"imageUri": "gcr.io/p/i:1"}}]
    spec = {"workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-4"}}], "serviceAccount": "a@b"}
    assert with_flags(spec, args) == {"workerPoolSpecs": pools, "serviceAccount": "a@b"}
    custom_job: dict[str, Any] = {"displayName": "x", "jobSpec": {"workerPoolSpecs": []}, "labels": {"old": "1"}}
    assert with_flags(custom_job, args) == {"displayName": "x", "jobSpec": {"workerPoolSpecs": pools},
                                            "labels": {"team": "ml"}}


@pytest.mark.parametrize(("value", "message"), [
    ("replica-count=1", "machine-type is missing; allowed: machine-type (required), replica-count, accelerator-type, "
     "accelerator-count, and container-image-uri or executor-image-uri with python-module"),
    ("machine-type=e2-standard-4,replica-cuont=2", "unknown key 'replica-cuont' (did you mean replica-count?); "
     "allowed: machine-type (required)"),
    ("machine-type=e2-standard-4,local-package-path=.,script=run.sh", "local-package-path needs gcloud's local "
     "packaging (it builds and pushes a container first), which validate and render cannot judge; allowed:"),
    ("machine-type=e2-standard-4,container-image-uri=gcr.io/p/i,python-module=t.task",
     "container-image-uri is given with executor-image-uri or python-module; allowed: one of a custom container"),
    ("machine-type=e2-standard-4,replica-count=two", "replica-count 'two' is not a whole number; allowed: 1 or more"),
])
def test_bad_worker_pool_specs_are_usage_errors(capsys: pytest.CaptureFixture[str], value: str, message: str) -> None:
    assert f"argument --worker-pool-spec: {message}" in usage_error(capsys, "--worker-pool-spec", value)


def test_flags_of_the_other_command_are_refused_with_the_right_ones_named() -> None:
    with pytest.raises(SpecError) as caught:
        with_flags({"trainingInput": {}}, args_of("--worker-pool-spec", "machine-type=e2-standard-4"))
    assert [p.path for p in caught.value.problems] == ["--worker-pool-spec"]
    assert "allowed: --master-machine-type" in caught.value.problems[0].message
    with pytest.raises(SpecError) as caught:
        with_flags({"workerPoolSpecs": []}, args_of("--master-machine-type", "n1-standard-4", "--scale-tier", "custom"))
    assert [p.path for p in caught.value.problems] == ["--scale-tier", "--master-machine-type"]
    assert all("allowed: --worker-pool-spec" in p.message for p in caught.value.problems)


# --- the commands page documents every flag --------------------------------------------------------------------

def test_the_commands_page_documents_each_gcloud_flag() -> None:
    readme = (ROOT / "docs" / "reference" / "commands.md").read_text()
    probe = argparse.ArgumentParser()
    add_gcloud_flags(probe)
    flags = {option for action in probe._actions for option in action.option_strings if option.startswith("--")}
    flags.discard("--help")
    documented = set(re.findall(r"`(--[a-z-]+)", readme))
    assert flags <= documented, sorted(flags - documented)


def test_every_gcloud_flag_counts_as_given_so_a_file_is_never_taken_as_is_past_one() -> None:
    """with_flags takes a file as it is when none of _ALL_FLAGS is given: each flag add_gcloud_flags defines
    must be one of them (--region sets a default, --config names the file)."""
    flags = argparse.ArgumentParser()
    add_gcloud_flags(flags)
    assert {action.dest for action in flags._actions} - {"help", "region", "config"} == set(_ALL_FLAGS)
