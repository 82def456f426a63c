"""The policy pack's policies, run directly: the inputs as the engine hands them (pulumi_policy's proxies,
numbers as floats, values unknown at preview), the guardrails from the stack's file, each violation's text.
The pack under the real engine: tests/test_e2e_policy.py."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("CI"):
    import pulumi_policy  # CI installs it (.ci/run): a missing package fails there
else:
    pulumi_policy = pytest.importorskip("pulumi_policy")

from pulumi_policy import (  # noqa: E402
    EnforcementLevel,
    PolicyResource,
    ResourceValidationArgs,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.deserialize import deserialize_properties  # noqa: E402
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy  # noqa: E402

from gcp_training_jobs.jobspec.review.guardrails import end_of_life_problems  # noqa: E402
from policies import pack  # noqa: E402

JOB_TYPE = "pulumi-python:dynamic/training:TrainingJob"


def props(value: dict[str, Any]) -> Any:
    """Inputs as the analyzer sees them."""
    return unknown_checking_proxy(deserialize_properties(value))


def training_job(name: str, count: float = 4.0, workers: str = "3", labels: dict[str, str] | None = None,
                 accelerator: str = "NVIDIA_TESLA_T4", backend: str = "vertex") -> dict[str, Any]:
    """A TrainingJob's inputs as build_stack registers them (jobDir unknown at preview, numbers as floats)."""
    return {
        "name": name, "project": "my-ml-test", "backend": backend, "jobId": None,
        "job": {"labels": labels if labels is not None else {"env": "qa", "team": "ml"}, "trainingInput": {
            "scaleTier": "CUSTOM", "region": "us-central1", "jobDir": UNKNOWN_STRING_VALUE,
            "masterType": "n1-standard-16", "workerType": "n1-standard-16", "workerCount": workers,
            "masterConfig": {"acceleratorConfig": {"type": accelerator, "count": count},
                             "imageUri": "us-docker.pkg.dev/my-ml-test/trainers/trainer:1"},
            "workerConfig": {"acceleratorConfig": {"type": accelerator, "count": count}}}},
    }


def urn(name: str, typ: str = JOB_TYPE, stack: str = "qa") -> str:
    return f"urn:pulumi:{stack}::gcp-training-jobs::{typ}::{name}"


def resource_args(name: str, inputs: dict[str, Any], typ: str = JOB_TYPE) -> ResourceValidationArgs:
    return ResourceValidationArgs(typ, props(inputs), urn(name, typ), name, None, None)


def stack_args(*resources: tuple[str, dict[str, Any]]) -> StackValidationArgs:
    return StackValidationArgs([PolicyResource(JOB_TYPE, props(inputs), urn(name), name, None, None, None, [], {})
                                for name, inputs in resources])


def run(validate: Any, args: Any) -> list[str]:
    found: list[str] = []
    validate(args, lambda message, urn=None: found.append(message))
    return found


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project whose `qa` stack declares guardrails; the pack runs in it (the engine's working directory)."""
    (tmp_path / "Pulumi.yaml").write_text("name: gcp-training-jobs\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.qa.yaml").write_text(textwrap.dedent("""\
        config:
          gcp:project: my-ml-test
          gcp-training-jobs:guardrails:
            allowedAccelerators: [NVIDIA_TESLA_T4, NVIDIA_L4]
            maxAcceleratorsPerJob: 16
            maxAcceleratorsPerStack: 20
            requiredLabels: [env, team]
        """))
    monkeypatch.chdir(tmp_path)
    pack.stack_guardrails.cache_clear()
    yield tmp_path
    pack.stack_guardrails.cache_clear()


def test_the_pack_holds_every_policy_mandatory_but_the_cost_advisory() -> None:
    levels = {p.name: p.enforcement_level for p in pack.policies()}
    assert levels == {"training-job-guardrails": EnforcementLevel.MANDATORY,
                      "stack-guardrails": EnforcementLevel.MANDATORY,
                      "no-end-of-life-accelerators": EnforcementLevel.MANDATORY,
                      "private-buckets": EnforcementLevel.MANDATORY,
                      "additive-iam-only": EnforcementLevel.MANDATORY,
                      "estimated-cost": EnforcementLevel.ADVISORY,
                      "quota-asked": EnforcementLevel.ADVISORY}
    assert {p.name for p in pack.policies() if isinstance(p, StackValidationPolicy)} == {
        "stack-guardrails", "estimated-cost", "quota-asked"}


def test_a_job_within_its_guardrails_passes_with_unknowns_at_preview(project: Path) -> None:
    assert run(pack.validate_job_guardrails, resource_args("ok", training_job("ok"))) == []


def test_a_job_over_its_guardrails_is_named_with_the_value(project: Path) -> None:
    found = run(pack.validate_job_guardrails, resource_args("big", training_job("big", workers="7", labels={})))
    assert found == [
        "gcp-training-jobs:guardrails.maxAcceleratorsPerJob: job big holds 32 accelerators at once "
        "(4 NVIDIA_TESLA_T4 x 1 replica + 4 NVIDIA_TESLA_T4 x 7 replicas); allowed: at most 16",
        "gcp-training-jobs:guardrails.requiredLabels: job big has no label env, team; allowed: jobs labelled env, "
        "team (the job's labels or the stack's gcp-training-jobs:labels)"]


def test_a_forbidden_accelerator(project: Path) -> None:
    inputs = training_job("v100", count=2.0, workers="0", accelerator="NVIDIA_TESLA_V100")
    assert run(pack.validate_job_guardrails, resource_args("v100", inputs)) == [
        "gcp-training-jobs:guardrails.allowedAccelerators: job v100 uses NVIDIA_TESLA_V100 "
        "(jobSpec.workerPoolSpecs[0]); allowed: NVIDIA_TESLA_T4, NVIDIA_L4"]


def test_end_of_life_accelerators(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = training_job("t4", workers="0")
    assert run(pack.validate_end_of_life, resource_args("t4", inputs)) == []
    after_t4 = functools.partial(end_of_life_problems, today=date(2027, 8, 1))  # T4's end of support
    monkeypatch.setattr(pack, "end_of_life_problems", after_t4)
    assert run(pack.validate_end_of_life, resource_args("t4", inputs)) == [
        "no-end-of-life-accelerators: job t4 uses NVIDIA_TESLA_T4 (jobSpec.workerPoolSpecs[0]), which reached end "
        "of support on 2027-08-01; allowed: an accelerator without a past end-of-support date"]


def test_the_stack_total_is_judged_over_all_jobs(project: Path) -> None:
    args = stack_args(("a", training_job("a")), ("b", training_job("b", count=1.0)))
    assert run(pack.validate_stack_guardrails, args) == []  # 16 + 4: at the cap
    args = stack_args(("a", training_job("a")), ("b", training_job("b", count=2.0)))
    assert run(pack.validate_stack_guardrails, args) == [
        "gcp-training-jobs:guardrails.maxAcceleratorsPerStack: the stack's jobs hold 24 accelerators at once "
        "(a 16, b 8); allowed: at most 20"]


#: training_job(): 4 x n1-standard-16 with 4 NVIDIA_TESLA_T4 each, us-central1, on demand: 4 x 0.8739954 + 16 x
#: 0.4025 = $9.94/h (Spot $5.17/h); no timeout: 168 h, $1,669.24.
A_JOB = ("a: us-central1, runs on demand: $9.94/h (on demand $9.94/h; Spot $5.17/h); worst case $1,669.24 "
         "($9.94/h x 168 h; no timeout set: Vertex AI's default, 7 days)")


def test_the_cost_advisory_lists_each_job_the_stack_the_table_and_its_sources(project: Path) -> None:
    (message,) = run(pack.validate_estimated_cost, stack_args(("b", training_job("b")), ("a", training_job("a"))))
    lines = message.splitlines()
    assert lines[0] == A_JOB and lines[1] == "b" + A_JOB[1:]
    assert lines[2] == ("stack: $19.87/h at the jobs' rates (on demand $19.87/h; Spot $10.34/h); worst case "
                        "$3,338.49")
    assert lines[3] == "prices: bundled snapshot of 2026-11-23, oldest prices 2026-07-30"
    assert lines[4].startswith("prices: Google Cloud pricing (Compute Engine list prices") and len(lines) == 7


def test_the_cost_advisory_warns_when_the_table_is_old(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GCP_TRAINING_JOBS_TODAY", "2027-06-01")
    (message,) = run(pack.validate_estimated_cost, stack_args(("a", training_job("a"))))
    assert message.splitlines()[-1] == (
        "warning: the price table's oldest prices are of 2026-07-30, 306 days before 2027-06-01 (more than 180): "
        "estimates may be out of date; refresh the table with `gcp-training-jobs prices refresh`")


def with_guardrails(project: Path, lines: str) -> None:
    path = project / "stacks" / "Pulumi.qa.yaml"
    path.write_text(path.read_text() + textwrap.indent(textwrap.dedent(lines), "    "))
    pack.stack_guardrails.cache_clear()


def test_a_job_over_its_worst_case_or_without_a_timeout_fails_the_mandatory_policy(project: Path) -> None:
    with_guardrails(project, """\
        maxJobCostUsd: 1500
        requireTimeout: true
        """)
    assert run(pack.validate_job_guardrails, resource_args("a", training_job("a"))) == [
        "gcp-training-jobs:guardrails.requireTimeout: job a sets no timeout, so it may run 7 days (Vertex AI's "
        "default); allowed: a job with its longest run set: scheduling.timeout in a jobSpec (e.g. 7200s), "
        "scheduling.maxRunningTime in a trainingInput",
        "gcp-training-jobs:guardrails.maxJobCostUsd: job a's worst case is $1,669.24 ($9.94/h x 168 h; no timeout "
        "set: Vertex AI's default, 7 days), running on demand, over the cap; allowed: at most $1,500.00"]
    capped = training_job("a")
    capped["job"]["trainingInput"]["scheduling"] = {"maxRunningTime": "36000s"}  # 10 h: $99.36
    assert run(pack.validate_job_guardrails, resource_args("a", capped)) == []


def test_max_hourly_usd_holds_the_priced_stack(project: Path) -> None:
    with_guardrails(project, "maxHourlyUsd: 16\n")
    args = stack_args(("a", training_job("a")), ("b", training_job("b", count=1.0)))  # 9.94 + 4 x (0.87 + 0.40)
    # = $15.04/h
    assert run(pack.validate_stack_guardrails, args) == []
    args = stack_args(("a", training_job("a")), ("b", training_job("b")))
    assert run(pack.validate_stack_guardrails, args)[1:] == [  # [0]: maxAcceleratorsPerStack, 32 over 20
        "gcp-training-jobs:guardrails.maxHourlyUsd: the stack's estimated on-demand cost is $19.87/h, over the "
        "cap; allowed: at most $16.00/h"]


def test_a_stack_without_a_file_or_guardrails_has_none(project: Path) -> None:
    inputs = training_job("big", workers="7", labels={})
    other = ResourceValidationArgs(JOB_TYPE, props(inputs), urn("big", stack="elsewhere"), "big", None, None)
    assert run(pack.validate_job_guardrails, other) == []


def test_bad_guardrails_in_the_stack_file_are_reported(project: Path) -> None:
    path = project / "stacks" / "Pulumi.qa.yaml"
    path.write_text("config:\n  gcp-training-jobs:guardrails:\n    maxAcceleratorsPerJob: many\n")
    (message,) = run(pack.validate_job_guardrails, resource_args("ok", training_job("ok")))
    assert message.startswith(f"{path}: gcp-training-jobs:guardrails.maxAcceleratorsPerJob: 'many'")


def test_an_invalid_or_unknown_job_is_left_to_the_providers_check(project: Path) -> None:
    inputs = training_job("x", count=3.0)  # 3 T4 on n1-standard-16: the provider's check says so
    inputs["job"]["trainingInput"]["masterType"] = "n1-standard-8"
    assert run(pack.validate_job_guardrails, resource_args("x", inputs)) == []
    unknown = {**training_job("u"), "job": UNKNOWN_STRING_VALUE}
    assert run(pack.validate_job_guardrails, resource_args("u", unknown)) == []


def test_buckets_and_iam_fixed_rules(project: Path) -> None:
    bucket = "gcp:storage/bucket:Bucket"
    good = {"uniformBucketLevelAccess": True, "publicAccessPrevention": "enforced", "name": UNKNOWN_STRING_VALUE}
    assert run(pack.validate_private_buckets, resource_args("ok", good, bucket)) == []
    assert run(pack.validate_private_buckets, resource_args("open", {"uniformBucketLevelAccess": False}, bucket)) == [
        "private-buckets: bucket open has uniformBucketLevelAccess false; allowed: true",
        "private-buckets: bucket open has publicAccessPrevention unset; allowed: enforced"]
    binding = "gcp:projects/iAMBinding:IAMBinding"
    assert run(pack.validate_additive_iam, resource_args("admins", {"role": "roles/owner"}, binding)) == [
        "additive-iam-only: admins is a IAMBinding (gcp:projects/iAMBinding:IAMBinding), which owns a whole role "
        "or policy and removes grants made elsewhere; allowed: additive IAMMember resources"]
    member = "gcp:projects/iAMMember:IAMMember"
    assert run(pack.validate_additive_iam, resource_args("grant", {"role": "roles/ml.serviceAgent"}, member)) == []


def test_plain_reads_through_proxies_without_raising_on_unknowns() -> None:
    value = props({"a": [1.0, {"b": UNKNOWN_STRING_VALUE}], "c": "x"})
    assert pack.plain(value) == {"a": [1.0, {"b": UNKNOWN_STRING_VALUE}], "c": "x"}
    assert pack.stack_of("urn:pulumi:prod::gcp-training-jobs::pulumi:pulumi:Stack::gcp-training-jobs-prod") == "prod"


@pytest.mark.slow
def test_the_pack_reaches_the_jobs_judge_without_loading_the_provider() -> None:
    """Importing the pack loads the job's judge (job_model.inputs) and the stack's settings, never the TrainingJob
    resource and its provider (gcp_training_jobs.resources.training_job, job_provider) nor pulumi_gcp."""
    root = Path(__file__).resolve().parents[1]
    script = ("import sys\nimport policies.pack\n"
              "print('LOADED', sorted(m for m in sys.modules\n"
              "                       if m.startswith(('gcp_training_jobs.resources', 'pulumi_gcp'))))"
              "\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split("LOADED ", 1)[1]
    assert "'gcp_training_jobs.resources.job_model.inputs'" in loaded
    assert "'gcp_training_jobs.resources.settings'" in loaded
    assert "gcp_training_jobs.resources.training_job" not in loaded
    assert "gcp_training_jobs.resources.job_provider" not in loaded
    assert "pulumi_gcp" not in loaded


# --- Persistent resources -------------------------------------------------------------------------------------

L4_MACHINE = {"machineType": "g2-standard-24", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 2}
A100_MACHINE = {"machineType": "a2-highgpu-1g", "acceleratorType": "NVIDIA_TESLA_A100", "acceleratorCount": 1}


def registered_stack(project: Path, max_replicas: int, machine: dict[str, Any] = L4_MACHINE) -> StackValidationArgs:
    """The repository's program run under mocks on a stack that declares a persistent resource (1..max_replicas of
    `machine`, 2 L4 each by default) and a job on it (3 of them: a primary and 2 workers): every resource it
    registers, as the engine hands them to the pack."""
    from gcp_training_jobs.cli.plan.mocks import pulumi_config, run_program

    container = {"imageUri": "us-docker.pkg.dev/my-ml-test/trainers/trainer:1"}
    on_pool = {"persistentResourceId": "team-pool", "scheduling": {"timeout": "7200s"}, "workerPoolSpecs": [
        {"machineSpec": machine, "replicaCount": 1, "containerSpec": container},
        {"machineSpec": machine, "replicaCount": 2, "containerSpec": container}]}
    config = {"gcp:project": "my-ml-test", "gcp:region": "us-central1", "gcp-training-jobs:backend": "vertex",
              "gcp-training-jobs:enableApis": False,
              "gcp-training-jobs:buckets": {"staging": "qa-staging", "jobDir": "qa-job-dir"},
              "gcp-training-jobs:labels": {"env": "qa", "team": "ml"},
              "gcp-training-jobs:persistentResources": {"team-pool": {"resourcePools": [
                  {"machineSpec": machine,
                   "autoscalingSpec": {"minReplicaCount": 1, "maxReplicaCount": max_replicas}}]}},
              "gcp-training-jobs:jobs": {"on-pool": {"jobSpec": on_pool}}}
    text, secrets = pulumi_config({"config": config})
    recording = run_program("qa", text, secrets, main=Path(__file__).resolve().parents[1] / "__main__.py")
    assert {r.type for r in recording.resources} >= {pack.RESOURCE_TYPE, JOB_TYPE}, [
        r.type for r in recording.resources]
    return StackValidationArgs([  # each in the qa stack's URN, as the engine names it
        PolicyResource(r.type, props(r.inputs), urn(r.name, r.type), r.name, None, None, None, [], {})
        for r in recording.resources if r.custom])


def test_a_persistent_resource_counts_at_its_most_and_the_job_on_it_counts_nothing(project: Path) -> None:
    """The stack's cap of 20 accelerators (the project's qa stack): 8 machines of 2 L4 hold 16, within it, and the
    job on the resource (3 machines of 2 L4) adds none; 12 machines hold 24, over it, named as the resource's."""
    assert run(pack.validate_stack_guardrails, registered_stack(project, 8)) == []
    assert run(pack.validate_stack_guardrails, registered_stack(project, 12)) == [
        "gcp-training-jobs:guardrails.maxAcceleratorsPerStack: the stack's jobs and persistent resources hold 24 "
        "accelerators at once (persistent resource team-pool 24); allowed: at most 20"]


def test_a_persistent_resources_accelerators_are_held_to_the_allowed_list(project: Path) -> None:
    """The qa stack allows T4 and L4: a resource of A100s is named, as registered (its Pulumi name)."""
    found = run(pack.validate_stack_guardrails, registered_stack(project, 2, A100_MACHINE))
    assert found == ["gcp-training-jobs:guardrails.allowedAccelerators: persistent resource team-pool uses "
                     "NVIDIA_TESLA_A100 (team-pool.resourcePools[0]); allowed: NVIDIA_TESLA_T4, NVIDIA_L4"]


def test_the_cost_advisory_prices_the_resource_while_it_exists_and_the_job_on_it_at_nothing(project: Path) -> None:
    (message,) = run(pack.validate_estimated_cost, registered_stack(project, 4))
    lines = message.splitlines()
    assert lines[0].startswith("on-pool: us-central1, runs on persistent resource team-pool: $0.00/h"), lines
    assert lines[1].startswith("persistent resource team-pool: us-central1, on demand while it exists: "), lines
    assert " at the least, " in lines[1] and " at the most" in lines[1], lines
    assert "persistent resources team-pool counted at the most" in lines[2], lines


def test_the_quota_advisory_reads_the_one_list_the_stack_s_jobs_carry(project: Path) -> None:
    """The pack says what the stack asks of the quotas from the same list the provider's check places (the stack's
    quota input, quota_fit): the resource its machines at the most in its region, the job on it nothing."""
    (message,) = run(pack.validate_quota_asked, registered_stack(project, 4))
    lines = message.splitlines()
    assert lines[0].startswith("quota asked (offline;"), lines
    assert "us-central1 custom_model_training_nvidia_l4_gpus: 8 (persistent resource team-pool 8)" in lines, lines
    assert not any("on-pool" in line for line in lines), lines
    assert run(pack.validate_quota_asked, stack_args()) == []


def test_a_job_on_a_reservation_with_fallbacks_is_held_at_its_worst_placement(project: Path) -> None:
    """The pack prices a job as the provider and plan do: on a SPECIFIC_RESERVATION, the fee; with fallbacks, its
    machines off the reservation (tests/test_reservation_cost.py: the plan and the provider's check)."""
    with_guardrails(project, """\
        maxJobCostUsd: 50
        maxHourlyUsd: 50
        """)
    reservation = {"reservationAffinityType": "SPECIFIC_RESERVATION", "key": "compute.googleapis.com/reservation-name",
                   "values": ["projects/my-ml-test/zones/us-central1-a/reservations/h100s"]}
    machine = {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8.0,
               "reservationAffinity": reservation}
    held = {"name": "held", "project": "my-ml-test", "backend": "vertex", "jobId": None,
            "job": {"region": "us-central1", "labels": {"env": "qa", "team": "ml"}, "jobSpec": {
                "workerPoolSpecs": [{"machineSpec": machine, "replicaCount": 1.0,
                                     "containerSpec": {"imageUri": "us-docker.pkg.dev/my-ml-test/trainers/t:1"}}],
                "scheduling": {"timeout": "3600s"}}}}
    leaves = {**held, "fallbacks": [{"scheduling": {"strategy": "STANDARD"}}]}

    def cost(validate: Any, args: Any) -> list[str]:  # (the fixture's allowedAccelerators refuse H100s too)
        return [line for line in run(validate, args) if "Usd:" in line]

    assert cost(pack.validate_job_guardrails, resource_args("held", held)) == []  # the fee: $15.26
    said = cost(pack.validate_job_guardrails, resource_args("held", leaves))
    assert len(said) == 1 and "maxJobCostUsd: job held's worst case is $101.76" in said[0]
    assert cost(pack.validate_stack_guardrails, stack_args(("held", held))) == []
    assert cost(pack.validate_stack_guardrails, stack_args(("held", leaves))) == [
        "gcp-training-jobs:guardrails.maxHourlyUsd: the stack's estimated on-demand cost is $101.76/h, over the cap; "
        "allowed: at most $50.00/h"]


def test_the_policy_pack_holds_the_registered_jobs_to_the_registered_budget() -> None:
    """The guardrail `budget` in the pack: the registered jobs' worst cases summed against the registered
    pulumi-gcp Budget's amount in USD (another currency is no amount the review can hold dollars to)."""
    budget_type = "gcp:billing/budget:Budget"

    def args(units: str, currency: str = "USD") -> Any:
        budget = {"billingAccount": "012345-6789AB-CDEF01", "amount": {"specifiedAmount": {"currencyCode": currency,
                                                                             "units": units, "nanos": 0.0}}}
        return StackValidationArgs([
            PolicyResource(JOB_TYPE, props(training_job("a")), urn("a"), "a", None, None, None, [], {}),
            PolicyResource(budget_type, props(budget), urn("budget", budget_type), "budget", None, None, None, [], {})])

    assert pack.budget_amount({"amount": {"specifiedAmount": {"units": "2000", "nanos": 500_000_000}}}) == 2000.5
    found = run(pack.validate_stack_guardrails, args("10"))  # job a: 4 T4 x 4 machines for 7 days
    assert [m for m in found if m.startswith("gcp-training-jobs:budget: the stack's worst case is $")], found
    assert not [m for m in run(pack.validate_stack_guardrails, args("1000000")) if "budget" in m]
    assert not [m for m in run(pack.validate_stack_guardrails, args("10", "EUR")) if "budget" in m]
