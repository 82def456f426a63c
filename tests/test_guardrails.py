"""Guardrails: each one with a failing example and its exact message; the fixed rules; the settings that
declare them; what a merge does to a running job; `plan` exiting 1 with the guardrail named."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.jobspec.catalog import prices
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.review.guardrails import (
    Guardrails,
    all_guardrail_problems,
    end_of_life_problems,
    guardrail_problems,
    stack_guardrail_problems,
)
from gcp_training_jobs.jobspec.translate.facts import JobFacts, facts_of_body
from gcp_training_jobs.resources.job_model.protection import is_protected
from gcp_training_jobs.resources.resource_rules import is_authoritative_iam, resource_problems
from gcp_training_jobs.resources.settings import load_stack_file
from gcp_training_jobs.resources.settings.guardrails import guardrail_problems_of
from gcp_training_jobs.resources.training_job.review import protected_job_problem, running_job_warning

ROOT = Path(__file__).resolve().parents[1]


def pool(machine: str, acc: str | None = None, count: int = 0, replicas: int = 1) -> dict[str, Any]:
    spec: dict[str, Any] = {"machineType": machine}
    if acc:
        spec.update(acceleratorType=acc, acceleratorCount=count)
    return {"machineSpec": spec, "replicaCount": str(replicas)}


def vertex(*pools: dict[str, Any], strategy: str | None = None, labels: dict[str, str] | None = None,
           timeout: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"workerPoolSpecs": list(pools)}
    scheduling = {k: v for k, v in (("strategy", strategy), ("timeout", timeout)) if v}
    if scheduling:
        spec["scheduling"] = scheduling
    body: dict[str, Any] = {"displayName": "job", "jobSpec": spec}
    if labels is not None:
        body["labels"] = labels
    return body


PROD_CLUSTER = vertex(pool("n1-highcpu-16", "NVIDIA_TESLA_T4", 4), pool("n1-highcpu-16", "NVIDIA_TESLA_T4", 4, 9),
                      pool("n1-highmem-8", replicas=3))


def facts(body: dict[str, Any], labels: dict[str, str] | None = None, region: str | None = None) -> JobFacts:
    """A body's facts (translate.facts.facts_of_body) in `region`, created with `labels` (default: the body's)."""
    read = facts_of_body(body, region=region)
    return read if labels is None else dataclasses.replace(read, labels=labels)


def messages(problems: list[Any]) -> list[str]:
    return [str(p) for p in problems]


# --- Each guardrail ------------------------------------------------------------------------------------


def test_allowed_accelerators_names_the_job_the_type_and_the_pools() -> None:
    prod = facts(PROD_CLUSTER, {})
    assert messages(guardrail_problems(prod, "distributed", {"allowedAccelerators": ["NVIDIA_L4"]})) == [
        "gcp-training-jobs:guardrails.allowedAccelerators: job distributed uses NVIDIA_TESLA_T4 "
        "(jobSpec.workerPoolSpecs[0], jobSpec.workerPoolSpecs[1]); allowed: NVIDIA_L4"]


def test_max_accelerators_per_job_counts_every_replica() -> None:
    assert messages(guardrail_problems(facts(PROD_CLUSTER, {}), "distributed", {"maxAcceleratorsPerJob": 8})) == [
        "gcp-training-jobs:guardrails.maxAcceleratorsPerJob: job distributed holds 40 accelerators at once "
        "(4 NVIDIA_TESLA_T4 x 1 replica + 4 NVIDIA_TESLA_T4 x 9 replicas); allowed: at most 8"]
    assert guardrail_problems(facts(PROD_CLUSTER, {}), "distributed", {"maxAcceleratorsPerJob": 40}) == []


def test_max_accelerators_per_job_counts_parallel_trials_of_a_tuning_job() -> None:
    tuning = {"displayName": "hp", "parallelTrialCount": 3,
              "trialJobSpec": {"workerPoolSpecs": [pool("g2-standard-8", "NVIDIA_L4", 1)]}}
    assert messages(guardrail_problems(facts(tuning, {}), "sweep", {"maxAcceleratorsPerJob": 2})) == [
        "gcp-training-jobs:guardrails.maxAcceleratorsPerJob: job sweep holds 3 accelerators at once "
        "((1 NVIDIA_L4 x 1 replica) x 3 parallel trials); allowed: at most 2"]


def test_max_accelerators_per_job_counts_ml_v1_tpu_cores_and_built_in_gpus() -> None:
    ml = {"jobId": "j", "trainingInput": {"scaleTier": "CUSTOM", "masterType": "complex_model_m_gpu",
                                          "workerType": "cloud_tpu", "workerCount": "1"}}
    assert messages(guardrail_problems(facts(ml), "legacy", {"maxAcceleratorsPerJob": 8})) == [
        "gcp-training-jobs:guardrails.maxAcceleratorsPerJob: job legacy holds 12 accelerators at once "
        "(4 NVIDIA_TESLA_K80 x 1 replica + 8 TPU_V2 x 1 replica); allowed: at most 8"]


def test_required_labels_names_the_missing_ones() -> None:
    assert messages(guardrail_problems(facts(PROD_CLUSTER, {"env": "prod"}), "distributed",
                                       {"requiredLabels": ["env", "team", "cost-center"]})) == [
        "gcp-training-jobs:guardrails.requiredLabels: job distributed has no label team, cost-center; allowed: "
        "jobs labelled env, team, cost-center (the job's labels or the stack's gcp-training-jobs:labels)"]


def test_required_labels_default_to_the_bodys_labels() -> None:
    body = vertex(pool("n1-standard-4"), labels={"env": "prod", "team": "ml"})
    assert guardrail_problems(facts(body), "j", {"requiredLabels": ["env", "team"]}) == []


def test_spot_only_refuses_on_demand_vertex_jobs_and_ignores_ml_v1() -> None:
    assert messages(guardrail_problems(facts(PROD_CLUSTER, {}), "distributed", {"spotOnly": True})) == [
        "gcp-training-jobs:guardrails.spotOnly: job distributed runs as STANDARD (on demand); allowed: "
        "scheduling.strategy SPOT or FLEX_START"]
    for strategy in ("SPOT", "FLEX_START"):
        spot = facts(vertex(pool("n1-standard-4"), strategy=strategy), {})
        assert guardrail_problems(spot, "j", {"spotOnly": True}) == []
    assert guardrail_problems(facts({"trainingInput": {"scaleTier": "BASIC"}}, {}), "old", {"spotOnly": True}) == []


def test_max_accelerators_per_stack_sums_the_jobs() -> None:
    jobs = {"a": facts(vertex(pool("g2-standard-8", "NVIDIA_L4", 1, 4))),
            "b": facts(vertex(pool("g2-standard-24", "NVIDIA_L4", 2, 3)))}
    assert messages(stack_guardrail_problems(jobs, {"maxAcceleratorsPerStack": 9})) == [
        "gcp-training-jobs:guardrails.maxAcceleratorsPerStack: the stack's jobs hold 10 accelerators at once "
        "(a 4, b 6); allowed: at most 9"]


def test_max_hourly_usd_over_the_cap_with_known_prices() -> None:
    # n1-standard-4 in us-central1, $0.21849885/h: Google's own figure (tests/test_prices.py)
    jobs = {"cpu": facts(vertex(pool("n1-standard-4", None, 0, 10)), None, "us-central1")}
    assert messages(stack_guardrail_problems(jobs, {"maxHourlyUsd": 1})) == [
        "gcp-training-jobs:guardrails.maxHourlyUsd: the stack's estimated on-demand cost is $2.18/h, over the "
        "cap; allowed: at most $1.00/h"]
    assert stack_guardrail_problems(jobs, {"maxHourlyUsd": 25}) == []


def test_max_hourly_usd_holds_on_a_priced_stack_of_gpu_jobs_in_their_regions() -> None:
    jobs = {"t4": facts(vertex(pool("n1-standard-8", "NVIDIA_TESLA_T4", 2)), None, "us-central1"),
            "l4": facts(vertex(pool("g2-standard-8", "NVIDIA_L4", 1, 2)), None, "europe-west4")}
    assert stack_guardrail_problems(jobs, {"maxHourlyUsd": 4}) == []  # 1.2419977 + 2 x 1.031782077 = $3.31/h
    assert messages(stack_guardrail_problems(jobs, {"maxHourlyUsd": 3})) == [
        "gcp-training-jobs:guardrails.maxHourlyUsd: the stack's estimated on-demand cost is $3.31/h, over the cap; "
        "allowed: at most $3.00/h"]


def test_max_hourly_usd_fails_when_a_price_is_unknown_rather_than_guessing() -> None:
    jobs = {"h200": facts(vertex(pool("a3-ultragpu-8g", "NVIDIA_H200_141GB", 8)), None, "us-central1")}
    assert messages(stack_guardrail_problems(jobs, {"maxHourlyUsd": 100})) == [
        "gcp-training-jobs:guardrails.maxHourlyUsd: the stack's estimated on-demand cost is unknown (no price "
        "for h200: 1 x a3-ultragpu-8g (no source prices it: Cyclenerd pricing.yml has no a3-ultragpu and SkyPilot's "
        "H200 rows disagree across regions (36.60258 and 74.49392 for the same 8 GPUs) (region us-central1))): it "
        "cannot be held to the cap; allowed: at most $100.00/h, with every machine and accelerator priced in the "
        "price table (gcp_training_jobs/jobspec/catalog/prices.py)"]


SPOT_T4 = vertex(pool("n1-standard-4", "NVIDIA_TESLA_T4", 1, 2), strategy="SPOT", timeout="36000s")


def test_max_job_cost_usd_is_the_worst_case_at_the_rate_the_job_runs_at() -> None:
    # 2 x (n1-standard-4 Spot 0.09550985 + T4 Spot 0.2275) = $0.646/h, for at most 10 h: $6.46
    assert messages(guardrail_problems(facts(SPOT_T4, {}, "us-central1"), "t4", {"maxJobCostUsd": 5})) == [
        "gcp-training-jobs:guardrails.maxJobCostUsd: job t4's worst case is $6.46 ($0.65/h x 10 h; "
        "jobSpec.scheduling.timeout 36000s), running SPOT, at Spot rates, over the cap; allowed: at most $5.00"]
    assert guardrail_problems(facts(SPOT_T4, {}, "us-central1"), "t4", {"maxJobCostUsd": 6.5}) == []


def test_max_job_cost_usd_without_a_timeout_counts_seven_days() -> None:
    on_demand = vertex(pool("n1-standard-4", "NVIDIA_TESLA_T4", 1, 2))  # 2 x (0.21849885 + 0.4025) x 168 h
    assert messages(guardrail_problems(facts(on_demand, {}, "us-central1"), "t4", {"maxJobCostUsd": 200})) == [
        "gcp-training-jobs:guardrails.maxJobCostUsd: job t4's worst case is $208.66 ($1.24/h x 168 h; no timeout "
        "set: Vertex AI's default, 7 days), running on demand, over the cap; allowed: at most $200.00"]
    ml = {"trainingInput": {"scaleTier": "BASIC", "region": "us-central1", "scheduling": {"maxRunningTime": "3600s"}}}
    assert guardrail_problems(facts(ml, {}), "ml", {"maxJobCostUsd": 0.25}) == []  # $0.22 for its one hour


def test_max_job_cost_usd_fails_on_an_unknown_price_and_waits_for_an_unknown_region() -> None:
    h200 = vertex(pool("a3-ultragpu-8g", "NVIDIA_H200_141GB", 8), timeout="3600s")
    (message,) = messages(guardrail_problems(facts(h200, {}, "us-central1"), "h200", {"maxJobCostUsd": 1000}))
    assert message.startswith("gcp-training-jobs:guardrails.maxJobCostUsd: job h200's worst case is unknown (no "
                              "price for 1 x a3-ultragpu-8g (no source prices it: ")
    assert message.endswith("it cannot be held to the cap; allowed: at most $1,000.00, with every machine and "
                            "accelerator priced in the price table (gcp_training_jobs/jobspec/catalog/prices.py)")
    assert guardrail_problems(facts(h200, {}), "h200", {"maxJobCostUsd": 1000}) == []  # preview: region unknown


def test_require_timeout_names_the_default_of_each_api() -> None:
    assert messages(guardrail_problems(facts(vertex(pool("n1-standard-4")), {}), "j", {"requireTimeout": True})) == [
        "gcp-training-jobs:guardrails.requireTimeout: job j sets no timeout, so it may run 7 days (Vertex AI's "
        "default); allowed: a job with its longest run set: scheduling.timeout in a jobSpec (e.g. 7200s), "
        "scheduling.maxRunningTime in a trainingInput"]
    ml = {"trainingInput": {"scaleTier": "BASIC"}}
    assert messages(guardrail_problems(facts(ml, {}), "ml", {"requireTimeout": True}))[0].startswith(
        "gcp-training-jobs:guardrails.requireTimeout: job ml sets no timeout, so it may run 7 days (AI Platform "
        "Training's default)")
    assert guardrail_problems(facts(SPOT_T4, {}), "t4", {"requireTimeout": True}) == []
    tuning = {"parallelTrialCount": 2, "trialJobSpec": {"workerPoolSpecs": [pool("n1-standard-4")],
                                                        "scheduling": {"timeout": "600s"}}}
    assert guardrail_problems(facts(tuning, {}), "sweep", {"requireTimeout": True}) == []
    ml["trainingInput"]["scheduling"] = {"maxRunningTime": "7200s"}
    assert guardrail_problems(facts(ml, {}), "ml", {"requireTimeout": True}) == []


def test_no_guardrails_no_problems() -> None:
    jobs = {"distributed": facts(PROD_CLUSTER, None, "us-central1")}
    assert all_guardrail_problems(jobs, None, today=date(2026, 11, 22)) == []
    assert all_guardrail_problems(jobs, Guardrails(), today=date(2026, 11, 22)) == []


def test_guardrails_read_pulumi_numbers_and_camel_case() -> None:
    rails = Guardrails.of({"maxAcceleratorsPerJob": 8.0, "spotOnly": True, "requiredLabels": ["env"],
                           "maxJobCostUsd": 250, "requireTimeout": True})
    assert rails.max_accelerators_per_job == 8 and rails.spot_only and rails.required_labels == ("env",)
    assert rails.max_job_cost_usd == 250.0 and rails.require_timeout


# --- Fixed rules ----------------------------------------------------------------------------------------


def test_end_of_life_accelerators_by_date_and_retired_ones() -> None:
    p100 = vertex(pool("n1-standard-8", "NVIDIA_TESLA_P100", 1))
    assert messages(end_of_life_problems(facts(p100), "old", today=date(2026, 11, 22))) == [
        "no-end-of-life-accelerators: job old uses NVIDIA_TESLA_P100 (jobSpec.workerPoolSpecs[0]), which reached "
        "end of support on 2026-09-15; allowed: an accelerator without a past end-of-support date"]
    assert end_of_life_problems(facts(p100), "old", today=date(2026, 9, 14)) == []
    t4 = vertex(pool("n1-standard-8", "NVIDIA_TESLA_T4", 1))
    assert end_of_life_problems(facts(t4), "t4", today=date(2026, 11, 22)) == []
    assert end_of_life_problems(facts(t4), "t4", today=date(2027, 8, 1)) != []
    k80 = {"trainingInput": {"scaleTier": "BASIC_GPU"}}
    assert messages(end_of_life_problems(facts(k80), "k80", today=date(2026, 11, 22)))[0].startswith(
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
        "it) first, or set gcp-training-jobs:guardrails.protectJobs to false (every job), or "
        "gcp-training-jobs:jobs.distributed.protect to false (this job; in a program, TrainingJob's protect "
        "argument), then run `pulumi up` to record that: a replace or destroy reads the protection the last "
        "`pulumi up` recorded")
    own = protected_job_problem("d", "RUNNING", None, replacing=False, by_job=True)
    assert str(own).startswith("gcp-training-jobs:jobs.d.protect: deleting job d (RUNNING): ")
    assert "set gcp-training-jobs:jobs.d.protect to false (a job's own protect wins over " \
           "gcp-training-jobs:guardrails.protectJobs; in a program, TrainingJob's protect argument), then run " \
           "`pulumi up` to record that" in str(own)
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
        maxJobCostUsd: -5
        requireTimeout: sometimes
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
    assert any("gcp-training-jobs:guardrails.maxJobCostUsd" in line for line in lines), lines
    assert any("gcp-training-jobs:guardrails.requireTimeout" in line for line in lines), lines


def test_an_unknown_allowed_accelerator_is_offered_accelerator_types_in_support_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """allowedAccelerators' refusal lists accelerator types only, none past its end of support on the day judged
    (K80 ended on 2024-05-01, P100 on 2026-09-15), and names the TPU VM machine types (TPU v6e, TPU7x: no
    acceleratorType value) in words; an end-of-life name or a TPU VM machine type a stack lists still validates."""
    path = stack_file(tmp_path, "allowedAccelerators: [NVIDIA_TESLA_T5]\n")

    def refusal(day: str) -> str:
        monkeypatch.setenv("GCP_TRAINING_JOBS_TODAY", day)
        with pytest.raises(SpecError) as caught:
            load_stack_file(path)
        (line,) = [str(p) for p in caught.value.problems if "allowedAccelerators" in str(p)]
        return line

    before, after = refusal("2026-09-14"), refusal("2026-09-15")
    listed = after.split("allowed: ", 1)[1].split(", or ")[0].split(", ")
    assert "NVIDIA_TESLA_K80" not in before and "NVIDIA_TESLA_P100" in before
    assert "NVIDIA_TESLA_K80" not in listed and "NVIDIA_TESLA_P100" not in listed
    assert {"NVIDIA_H100_80GB", "NVIDIA_TESLA_T4", "TPU_V5_LITEPOD"} <= set(listed)
    assert not [name for name in listed if not name.isupper()], listed  # no machine type among them
    assert after.endswith("or for a TPU v6e or TPU7x (no acceleratorType value) its machine type: ct6e-standard-* "
                          "or tpu7x-standard-*")
    ok = stack_file(tmp_path, "allowedAccelerators: [NVIDIA_TESLA_K80, NVIDIA_TESLA_P100, ct6e-standard-4t]\n")
    assert load_stack_file(ok).guardrails.allowed_accelerators == (
        "NVIDIA_TESLA_K80", "NVIDIA_TESLA_P100", "ct6e-standard-4t")


def test_settings_take_guardrails_as_pulumi_passes_them_json_text() -> None:
    from gcp_training_jobs.resources.settings.guardrails import GuardrailSettings

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


@pytest.mark.parametrize("name", ["dev", "dev-ai-platform", "staging", "prod", "local", "local-ai-platform"])
def test_the_repository_stacks_keep_their_guardrails(name: str) -> None:
    """Every repository stack judges (a stack that stopped judging is a regression, failed here, never skipped) and
    keeps its guardrails."""
    try:
        settings = load_stack_file(ROOT / "stacks" / f"Pulumi.{name}.yaml")
    except SpecError as error:
        pytest.fail(f"stack {name} does not judge: {[(p.path, p.message) for p in error.problems]}")
    assert guardrail_problems_of(settings) == []
    if name in ("prod", "staging"):
        assert settings.guardrails.allowed_accelerators and settings.guardrails.required_labels == ("env", "team")
    assert settings.guardrails.protect_jobs == (name == "prod")
    if name in ("prod", "staging"):  # the cost guardrails hold on priced stacks
        rails = settings.guardrails
        assert rails.max_hourly_usd and rails.max_job_cost_usd and rails.require_timeout == (name == "staging")


def plan(path: Path, tmp_path: Path, *extra: str, **env_: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")}
    env.update(GCP_TRAINING_JOBS_BUILD_DIR=str(tmp_path / "build"), **env_)
    return subprocess.run([sys.executable, "-m", "components", "plan", "--stack", "qa", "--stacks-dir",
                           str(path.parent), *extra], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


#: The `big` job of JOBS: 4 x n1-standard-16 and 16 NVIDIA_TESLA_T4 (4 per replica) in us-central1, on demand:
#: 4 x 0.8739954 + 16 x 0.4025 = $9.94/h (Spot 4 x 0.3820394 + 16 x 0.2275 = $5.17/h); no timeout: 7 days, 168 h,
#: $1,669.24.
BIG_HOURLY, BIG_WORST = "$9.94/h", "$1,669.24"


@pytest.mark.slow
def test_plan_exits_1_naming_the_guardrail_the_job_and_the_value(tmp_path: Path) -> None:
    path = stack_file(tmp_path, "maxAcceleratorsPerJob: 8\n")
    result = plan(path, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{path}: gcp-training-jobs:guardrails.maxAcceleratorsPerJob: job big holds 16 accelerators at once " \
        "(4 NVIDIA_TESLA_T4 x 1 replica + 4 NVIDIA_TESLA_T4 x 3 replicas); allowed: at most 8" \
        in result.stdout.splitlines(), result.stdout
    assert "Guardrails (gcp-training-jobs:guardrails): maxAcceleratorsPerJob 8;" in result.stdout
    lines = result.stdout.splitlines()
    assert f"    big: us-central1, runs on demand: {BIG_HOURLY} (on demand {BIG_HOURLY}; Spot $5.17/h); worst case " \
        f"{BIG_WORST} ({BIG_HOURLY} x 168 h; no timeout set: Vertex AI's default, 7 days)" in lines, result.stdout
    assert "        4 x n1-standard-16 (machine): $0.87/h each on demand, $0.38/h Spot; Compute Engine list " \
        "2026-07-30 + Vertex 15%" in lines, result.stdout
    assert f"    stack: {BIG_HOURLY} at the jobs' rates (on demand {BIG_HOURLY}; Spot $5.17/h); worst case " \
        f"{BIG_WORST}" in lines
    assert "    prices: bundled snapshot of 2026-11-23, oldest prices 2026-07-30, from:" in lines
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize(("guardrail", "line"), [
    ("maxHourlyUsd: 9.5", f"maxHourlyUsd: the stack's estimated on-demand cost is {BIG_HOURLY}, over the cap; "
                          "allowed: at most $9.50/h"),
    ("maxJobCostUsd: 1000", f"maxJobCostUsd: job big's worst case is {BIG_WORST} ({BIG_HOURLY} x 168 h; no timeout "
                            "set: Vertex AI's default, 7 days), running on demand, over the cap; allowed: at most "
                            "$1,000.00"),
    ("requireTimeout: true", "requireTimeout: job big sets no timeout, so it may run 7 days (Vertex AI's default); "
                             "allowed: a job with its longest run set: scheduling.timeout in a jobSpec (e.g. 7200s), "
                             "scheduling.maxRunningTime in a trainingInput"),
])
@pytest.mark.slow
def test_each_cost_guardrail_fails_plan_naming_itself(tmp_path: Path, guardrail: str, line: str) -> None:
    path = stack_file(tmp_path, guardrail + "\n")
    result = plan(path, tmp_path, "--json")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.splitlines()[-1] == f"{path}: gcp-training-jobs:guardrails.{line}", result.stderr
    document = json.loads(result.stdout)
    assert document["guardrails"]["problems"] == [f"gcp-training-jobs:guardrails.{line}"]


@pytest.mark.slow
def test_plan_json_keeps_its_cost_shape_and_adds_the_worst_case(tmp_path: Path) -> None:
    result = plan(stack_file(tmp_path, "maxJobCostUsd: 2000\n"), tmp_path, "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    cost = json.loads(result.stdout)["cost"]
    big = cost["jobs"]["big"]
    assert big["onDemand"] == {"complete": True, "knownUsdPerHour": pytest.approx(9.9359816), "unknown": []}
    assert big["spot"]["complete"] and big["spot"]["knownUsdPerHour"] == pytest.approx(5.1681576)
    assert big["worstCaseUsd"] == 1669.24 and big["runsAt"] == "on_demand" and big["worstCase"]["hours"] == 168
    assert [(p["what"], p["units"], p["basis"]) for p in big["parts"]] == [
        ("n1-standard-16", 4, "Compute Engine list 2026-07-30 + Vertex 15%"),
        ("NVIDIA_TESLA_T4", 16, "Compute Engine list (SkyPilot catalog @ 006059e, read 2026-11-23, highest zone) "
                                "+ Vertex 15%")]
    assert cost["stack"]["worstCaseUsd"] == 1669.24 and cost["warnings"] == []
    assert cost["table"] == {"kind": "snapshot", "path": str(prices.BUNDLED), "date": "2026-11-23",
                             "oldest": "2026-07-30"}


@pytest.mark.slow
def test_plan_warns_when_the_price_table_is_older_than_180_days(tmp_path: Path) -> None:
    path = stack_file(tmp_path, "maxJobCostUsd: 2000\n")
    result = plan(path, tmp_path, GCP_TRAINING_JOBS_TODAY="2027-02-15")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "    warning: the price table's oldest prices are of 2026-07-30, 200 days before 2027-02-15 (more than " \
        "180): estimates may be out of date; refresh the table with `gcp-training-jobs prices refresh`" \
        in result.stdout.splitlines(), result.stdout
    result = plan(path, tmp_path, "--json", GCP_TRAINING_JOBS_TODAY="2027-02-15")
    assert "warning: the price table's oldest prices are of 2026-07-30" in result.stderr
    assert json.loads(result.stdout)["cost"]["warnings"][0].startswith("the price table's oldest prices")


@pytest.mark.slow
def test_plan_refuses_a_broken_price_table_naming_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "prices.json"
    broken.write_text("{not json")
    result = plan(stack_file(tmp_path, "maxJobCostUsd: 2000\n"), tmp_path,
                  GCP_TRAINING_JOBS_PRICES_FILE=str(broken))
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{broken}: not JSON at line 1" in result.stderr and "Traceback" not in result.stderr


def validate(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "components", "validate", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("guardrails", [
    "requireTimeout: true\n",
    "spotOnly: true\n",
    "maxAcceleratorsPerJob: 8\nrequiredLabels: [env, team]\n",
    "maxJobCostUsd: 1000\nallowedAccelerators: [NVIDIA_L4]\n",
    "maxJobCostUsd: 2000\nmaxAcceleratorsPerStack: 16\n",  # all hold
])
def test_validate_of_a_stack_file_gives_plans_verdict(tmp_path: Path, guardrails: str) -> None:
    """The review's first check is the whole verdict: a stack whose job breaks its guardrails fails `validate` as it
    fails `plan`, with the same lines; one that keeps them passes both."""
    path = stack_file(tmp_path, guardrails)
    planned = plan(path, tmp_path, "--json")
    broken = [f"{path}: {line}" for line in json.loads(planned.stdout)["guardrails"]["problems"]]
    validated = validate(path)
    assert validated.returncode == planned.returncode, (validated.stdout, planned.stderr)
    if broken:
        assert validated.returncode == 1 and validated.stdout.splitlines() == broken
    else:
        assert validated.returncode == 0 and validated.stdout.splitlines() == [f"{path}: ok (stack)"]
