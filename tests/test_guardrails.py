"""Guardrails: each one with a failing example and its exact message; the fixed rules; the settings that
declare them; what a merge does to a running job; `plan` exiting 1 with the guardrail named."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from components.jobspec.core.errors import SpecError
from components.jobspec.review.guardrails import (
    Guardrails,
    RenderedJob,
    all_guardrail_problems,
    end_of_life_problems,
    guardrail_problems,
    is_authoritative_iam,
    is_protected,
    protected_job_problem,
    resource_problems,
    running_job_warning,
    stack_guardrail_problems,
)
from components.resources.settings import load_stack_file
from components.resources.settings.guardrails import guardrail_problems_of

ROOT = Path(__file__).resolve().parents[1]


def pool(machine: str, acc: str | None = None, count: int = 0, replicas: int = 1) -> dict[str, Any]:
    spec: dict[str, Any] = {"machineType": machine}
    if acc:
        spec.update(acceleratorType=acc, acceleratorCount=count)
    return {"machineSpec": spec, "replicaCount": str(replicas)}


def vertex(*pools: dict[str, Any], strategy: str | None = None, labels: dict[str, str] | None = None
           ) -> dict[str, Any]:
    spec: dict[str, Any] = {"workerPoolSpecs": list(pools)}
    if strategy:
        spec["scheduling"] = {"strategy": strategy}
    body: dict[str, Any] = {"displayName": "job", "jobSpec": spec}
    if labels is not None:
        body["labels"] = labels
    return body


PROD_CLUSTER = vertex(pool("n1-highcpu-16", "NVIDIA_TESLA_T4", 4), pool("n1-highcpu-16", "NVIDIA_TESLA_T4", 4, 9),
                      pool("n1-highmem-8", replicas=3))


def messages(problems: list[Any]) -> list[str]:
    return [str(p) for p in problems]


# --- Each guardrail ------------------------------------------------------------------------------------


def test_allowed_accelerators_names_the_job_the_type_and_the_pools() -> None:
    assert messages(guardrail_problems(PROD_CLUSTER, "distributed", {}, {"allowedAccelerators": ["NVIDIA_L4"]})) == [
        "gcp-training-jobs:guardrails.allowedAccelerators: job distributed uses NVIDIA_TESLA_T4 "
        "(jobSpec.workerPoolSpecs[0], jobSpec.workerPoolSpecs[1]); allowed: NVIDIA_L4"]


def test_max_accelerators_per_job_counts_every_replica() -> None:
    assert messages(guardrail_problems(PROD_CLUSTER, "distributed", {}, {"maxAcceleratorsPerJob": 8})) == [
        "gcp-training-jobs:guardrails.maxAcceleratorsPerJob: job distributed holds 40 accelerators at once "
        "(4 NVIDIA_TESLA_T4 x 1 replica + 4 NVIDIA_TESLA_T4 x 9 replicas); allowed: at most 8"]
    assert guardrail_problems(PROD_CLUSTER, "distributed", {}, {"maxAcceleratorsPerJob": 40}) == []


def test_max_accelerators_per_job_counts_parallel_trials_of_a_tuning_job() -> None:
    tuning = {"displayName": "hp", "parallelTrialCount": 3,
              "trialJobSpec": {"workerPoolSpecs": [pool("g2-standard-8", "NVIDIA_L4", 1)]}}
    assert messages(guardrail_problems(tuning, "sweep", {}, {"maxAcceleratorsPerJob": 2})) == [
        "gcp-training-jobs:guardrails.maxAcceleratorsPerJob: job sweep holds 3 accelerators at once "
        "((1 NVIDIA_L4 x 1 replica) x 3 parallel trials); allowed: at most 2"]


def test_max_accelerators_per_job_counts_ml_v1_tpu_cores_and_built_in_gpus() -> None:
    ml = {"jobId": "j", "trainingInput": {"scaleTier": "CUSTOM", "masterType": "complex_model_m_gpu",
                                          "workerType": "cloud_tpu", "workerCount": "1"}}
    assert messages(guardrail_problems(ml, "legacy", None, {"maxAcceleratorsPerJob": 8})) == [
        "gcp-training-jobs:guardrails.maxAcceleratorsPerJob: job legacy holds 12 accelerators at once "
        "(4 NVIDIA_TESLA_K80 x 1 replica + 8 TPU_V2 x 1 replica); allowed: at most 8"]


def test_required_labels_names_the_missing_ones() -> None:
    assert messages(guardrail_problems(PROD_CLUSTER, "distributed", {"env": "prod"},
                                       {"requiredLabels": ["env", "team", "cost-center"]})) == [
        "gcp-training-jobs:guardrails.requiredLabels: job distributed has no label team, cost-center; allowed: "
        "jobs labelled env, team, cost-center (the job's labels or the stack's gcp-training-jobs:labels)"]


def test_required_labels_default_to_the_bodys_labels() -> None:
    body = vertex(pool("n1-standard-4"), labels={"env": "prod", "team": "ml"})
    assert guardrail_problems(body, "j", None, {"requiredLabels": ["env", "team"]}) == []


def test_spot_only_refuses_on_demand_vertex_jobs_and_ignores_ml_v1() -> None:
    assert messages(guardrail_problems(PROD_CLUSTER, "distributed", {}, {"spotOnly": True})) == [
        "gcp-training-jobs:guardrails.spotOnly: job distributed runs as STANDARD (on demand); allowed: "
        "scheduling.strategy SPOT or FLEX_START"]
    for strategy in ("SPOT", "FLEX_START"):
        assert guardrail_problems(vertex(pool("n1-standard-4"), strategy=strategy), "j", {}, {"spotOnly": True}) == []
    assert guardrail_problems({"trainingInput": {"scaleTier": "BASIC"}}, "old", {}, {"spotOnly": True}) == []


def test_max_accelerators_per_stack_sums_the_jobs() -> None:
    jobs = [RenderedJob("a", vertex(pool("g2-standard-8", "NVIDIA_L4", 1, 4))),
            RenderedJob("b", vertex(pool("g2-standard-24", "NVIDIA_L4", 2, 3)))]
    assert messages(stack_guardrail_problems(jobs, {"maxAcceleratorsPerStack": 9})) == [
        "gcp-training-jobs:guardrails.maxAcceleratorsPerStack: the stack's jobs hold 10 accelerators at once "
        "(a 4, b 6); allowed: at most 9"]


def test_max_hourly_usd_over_the_cap_with_known_prices() -> None:
    # the one machine the price table has a sourced price for: n1-standard-4 in us-central1, $0.21849885/h
    jobs = [RenderedJob("cpu", vertex(pool("n1-standard-4", None, 0, 10)), "us-central1")]
    assert messages(stack_guardrail_problems(jobs, {"maxHourlyUsd": 1})) == [
        "gcp-training-jobs:guardrails.maxHourlyUsd: the stack's estimated on-demand cost is $2.18/h, over the "
        "cap; allowed: at most $1.00/h"]
    assert stack_guardrail_problems(jobs, {"maxHourlyUsd": 25}) == []


def test_max_hourly_usd_fails_when_a_price_is_unknown_rather_than_guessing() -> None:
    jobs = [RenderedJob("t4", vertex(pool("n1-standard-8", "NVIDIA_TESLA_T4", 2)), "us-central1")]
    assert messages(stack_guardrail_problems(jobs, {"maxHourlyUsd": 100})) == [
        "gcp-training-jobs:guardrails.maxHourlyUsd: the stack's estimated on-demand cost is unknown (no price "
        "for t4: 1 x n1-standard-8; t4: 2 x NVIDIA_TESLA_T4): it cannot be held to the cap; allowed: at most "
        "$100.00/h, with every machine and accelerator priced in components/jobspec/catalog/prices.py"]


def test_no_guardrails_no_problems() -> None:
    jobs = [RenderedJob("distributed", PROD_CLUSTER, "us-central1")]
    assert all_guardrail_problems(jobs, None, today=date(2026, 11, 22)) == []
    assert all_guardrail_problems(jobs, Guardrails(), today=date(2026, 11, 22)) == []


def test_guardrails_read_pulumi_numbers_and_camel_case() -> None:
    rails = Guardrails.of({"maxAcceleratorsPerJob": 8.0, "spotOnly": True, "requiredLabels": ["env"]})
    assert rails.max_accelerators_per_job == 8 and rails.spot_only and rails.required_labels == ("env",)


# --- Fixed rules ----------------------------------------------------------------------------------------


def test_end_of_life_accelerators_by_date_and_retired_ones() -> None:
    p100 = vertex(pool("n1-standard-8", "NVIDIA_TESLA_P100", 1))
    assert messages(end_of_life_problems(p100, "old", today=date(2026, 11, 22))) == [
        "no-end-of-life-accelerators: job old uses NVIDIA_TESLA_P100 (jobSpec.workerPoolSpecs[0]), which reached "
        "end of support on 2026-09-15; allowed: an accelerator without a past end-of-support date"]
    assert end_of_life_problems(p100, "old", today=date(2026, 9, 14)) == []
    t4 = vertex(pool("n1-standard-8", "NVIDIA_TESLA_T4", 1))
    assert end_of_life_problems(t4, "t4", today=date(2026, 11, 22)) == []
    assert end_of_life_problems(t4, "t4", today=date(2027, 8, 1)) != []
    k80 = {"trainingInput": {"scaleTier": "BASIC_GPU"}}
    assert messages(end_of_life_problems(k80, "k80", today=date(2026, 11, 22)))[0].startswith(
        "no-end-of-life-accelerators: job k80 uses NVIDIA_TESLA_K80 (trainingInput.scaleTier), which reached end "
        "of support on 2024-05-01")


def test_buckets_must_be_uniform_and_prevent_public_access() -> None:
    assert resource_problems("gcp:storage/bucket:Bucket", "ok", {"uniformBucketLevelAccess": True,
                                                                 "publicAccessPrevention": "enforced"}) == []
    bucket = resource_problems("gcp:storage/bucket:Bucket", "open", {"publicAccessPrevention": "inherited"})
    assert messages(bucket) == [
        "private-buckets: bucket open has uniformBucketLevelAccess unset; allowed: true",
        "private-buckets: bucket open has publicAccessPrevention 'inherited'; allowed: enforced"]


def test_iam_is_additive_members_only() -> None:
    for kind in ("gcp:projects/iAMBinding:IAMBinding", "gcp:projects/iAMPolicy:IAMPolicy",
                 "gcp:storage/bucketIAMBinding:BucketIAMBinding", "gcp:serviceaccount/iAMPolicy:IAMPolicy"):
        assert is_authoritative_iam(kind), kind
    for kind in ("gcp:projects/iAMMember:IAMMember", "gcp:storage/bucketIAMMember:BucketIAMMember",
                 "gcp:projects/iAMCustomRole:IAMCustomRole"):
        assert not is_authoritative_iam(kind), kind
    assert messages(resource_problems("gcp:projects/iAMBinding:IAMBinding", "admins", {})) == [
        "additive-iam-only: admins is a IAMBinding (gcp:projects/iAMBinding:IAMBinding), which owns a whole role "
        "or policy and removes grants made elsewhere; allowed: additive IAMMember resources"]


# --- What a merge does to a running job -----------------------------------------------------------------


def test_running_job_warning_in_words() -> None:
    assert running_job_warning("distributed", "RUNNING", "2026-11-19T08:00:00Z", replacing=True) == (
        "replacing job distributed (RUNNING since 2026-11-19T08:00:00Z): the running job will be cancelled")
    assert running_job_warning("d", "QUEUED", None, replacing=False) == (
        "deleting job d (QUEUED): the running job will be cancelled")
    assert running_job_warning("d", "SUCCEEDED", "2026-11-19T08:00:00Z", replacing=True) is None


def test_protected_running_job_fails_naming_the_setting() -> None:
    problem = protected_job_problem("distributed", "RUNNING", "2026-11-19T08:00:00Z", replacing=True, by_job=False)
    assert str(problem) == (
        "gcp-training-jobs:guardrails.protectJobs: replacing job distributed (RUNNING since 2026-11-19T08:00:00Z): "
        "the running job will be cancelled, and job distributed is protected; allowed: let it finish (or cancel "
        "it) first, or set gcp-training-jobs:jobs.distributed.protect to false")
    assert protected_job_problem("d", "CANCELLED", None, replacing=True, by_job=True) is None
    assert is_protected({"protectJobs": True}, None) and not is_protected({"protectJobs": True}, False)
    assert is_protected(None, True) and not is_protected(None, None)


# --- Declared per stack ---------------------------------------------------------------------------------


JOBS = """\
  gcp-training-jobs:jobs:
    big:
      trainingInput:
        scaleTier: CUSTOM
        masterType: n1-standard-16
        masterConfig:
          acceleratorConfig: {type: NVIDIA_TESLA_T4, count: 4}
          imageUri: us-docker.pkg.dev/my-ml-test/trainers/trainer:1
        workerType: n1-standard-16
        workerCount: 3
        workerConfig:
          acceleratorConfig: {type: NVIDIA_TESLA_T4, count: 4}
"""


def stack_file(tmp_path: Path, guardrails: str) -> Path:
    """stacks file `Pulumi.qa.yaml` with these guardrails (YAML lines) and one 16-GPU job."""
    path = tmp_path / "Pulumi.qa.yaml"
    path.write_text("config:\n  gcp:project: my-ml-test\n  gcp:region: us-central1\n"
                    "  gcp-training-jobs:labels: {env: qa}\n  gcp-training-jobs:guardrails:\n"
                    + textwrap.indent(textwrap.dedent(guardrails), "    ") + JOBS)
    return path


def test_settings_reject_unknown_accelerators_and_label_keys_naming_the_key(tmp_path: Path) -> None:
    path = stack_file(tmp_path, """\
        allowedAccelerators: [NVIDIA_TESLA_T5]
        requiredLabels: [Team]
        maxAcceleratorsPerJob: -1
        """)
    with pytest.raises(SpecError) as caught:
        load_stack_file(path)
    lines = [str(p) for p in caught.value.problems]
    assert any(line.startswith(f"{path}: gcp-training-jobs:guardrails.allowedAccelerators: ")
               and "'NVIDIA_TESLA_T5' is not an accelerator type (did you mean NVIDIA_TESLA_T4?)" in line
               for line in lines), lines
    assert any("gcp-training-jobs:guardrails.requiredLabels" in line and "'Team' is not a label key" in line
               for line in lines), lines
    assert any("gcp-training-jobs:guardrails.maxAcceleratorsPerJob" in line for line in lines), lines


def test_settings_take_guardrails_as_pulumi_passes_them_json_text() -> None:
    from components.resources.settings.guardrails import GuardrailSettings

    assert GuardrailSettings.model_validate('{"maxAcceleratorsPerJob": 4}').max_accelerators_per_job == 4
    assert GuardrailSettings.model_validate("").max_accelerators_per_job is None
    assert GuardrailSettings.model_validate(None) == GuardrailSettings()


def test_a_judged_stack_is_held_to_its_guardrails(tmp_path: Path) -> None:
    path = stack_file(tmp_path, """\
        maxAcceleratorsPerJob: 8
        requiredLabels: [env, team]
        """)
    settings = load_stack_file(path)
    assert messages(guardrail_problems_of(settings)) == [
        "gcp-training-jobs:guardrails.maxAcceleratorsPerJob: job big holds 16 accelerators at once "
        "(4 NVIDIA_TESLA_T4 x 1 replica + 4 NVIDIA_TESLA_T4 x 3 replicas); allowed: at most 8",
        "gcp-training-jobs:guardrails.requiredLabels: job big has no label team; allowed: jobs labelled env, team "
        "(the job's labels or the stack's gcp-training-jobs:labels)"]


@pytest.mark.parametrize("name", ["dev", "staging", "prod", "local"])
def test_the_repository_stacks_keep_their_guardrails(name: str) -> None:
    try:
        settings = load_stack_file(ROOT / "stacks" / f"Pulumi.{name}.yaml")
    except SpecError as error:  # the stacks' other problems are tests/test_stacks.py's and test_cli.py's
        assert not [p for p in error.problems if "guardrails" in p.path], error
        pytest.skip(f"stack {name} does not judge: {error.problems[0]}")
    assert guardrail_problems_of(settings) == []
    if name in ("prod", "staging"):
        assert settings.guardrails.allowed_accelerators and settings.guardrails.required_labels == ("env", "team")
    assert settings.guardrails.protect_jobs == (name == "prod")


def test_plan_exits_1_naming_the_guardrail_the_job_and_the_value(tmp_path: Path) -> None:
    path = stack_file(tmp_path, "maxAcceleratorsPerJob: 8\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")}
    env["GCP_TRAINING_JOBS_BUILD_DIR"] = str(tmp_path / "build")
    result = subprocess.run([sys.executable, "-m", "components", "plan", "--stack", "qa", "--stacks-dir",
                             str(path.parent)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{path}: gcp-training-jobs:guardrails.maxAcceleratorsPerJob: job big holds 16 accelerators at once " \
        "(4 NVIDIA_TESLA_T4 x 1 replica + 4 NVIDIA_TESLA_T4 x 3 replicas); allowed: at most 8" \
        in result.stdout.splitlines(), result.stdout
    assert "Guardrails (gcp-training-jobs:guardrails): maxAcceleratorsPerJob 8;" in result.stdout
    assert "    big: us-central1: on demand unknown (no price for 4 x n1-standard-16; 16 x NVIDIA_TESLA_T4); Spot " \
        "unknown (no Spot price for any part)" in result.stdout.splitlines()
    assert "    prices: Vertex AI pricing" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
