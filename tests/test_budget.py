"""`gcp-training-jobs:budget`, a budget that outlives the review: the settings as a stack declares them, the
pulumi-gcp Budget in `plan --json` (filtered to the stack's project and its `pulumi-stack` label, with threshold
rules), the worst case against the budget in `plan`'s text, the guardrail `budget` in `validate`, `plan`, the
provider's check and the policy pack, and with `enforce: true` the topic, the stop function and its narrow role."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from gcp_training_jobs.jobspec.core.names import STACK_LABEL
from gcp_training_jobs.resources.job_model.identity import stack_label
from gcp_training_jobs.resources.settings.budget import BudgetSettings
from gcp_training_jobs.resources.training_job.review import budget_input_problems

ROOT = Path(__file__).resolve().parents[1]
ACCOUNT = "012345-6789AB-CDEF01"


def h100_job(workers: int) -> dict[str, Any]:
    """One a3-highgpu-8g chief and `workers` more for 10 h: $101.76/h each in the bundled table (three: $3,052.90;
    the issue's $3,052.90 was at the H100 rule's factor 1.0, before it was settled at Vertex's 1.15)."""
    machine = {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8}
    image = {"imageUri": "us-docker.pkg.dev/p/r/t:1"}
    return {"jobSpec": {"workerPoolSpecs": [{"machineSpec": machine, "replicaCount": 1, "containerSpec": image},
                                            {"machineSpec": machine, "replicaCount": workers, "containerSpec": image}],
                        "scheduling": {"timeout": "36000s"}}}


def stack(monthly: float = 2000, workers: int = 2, enforce: bool = False, **budget: Any) -> str:
    return yaml.safe_dump({"config": {
        "gcp:project": "my-ml-prod", "gcp:region": "us-central1",
        "gcp-training-jobs:budget": {"billingAccount": ACCOUNT, "monthlyUsd": monthly, "enforce": enforce, **budget},
        "gcp-training-jobs:jobs": {"h100": h100_job(workers)}}})


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env_free = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")} | env_free
    return subprocess.run([sys.executable, "-m", "components", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env=env)


def plan(tmp_path: Path, text: str, *flags: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "Pulumi.pr.yaml").write_text(text)
    return run("plan", "--stack", "pr", "--stacks-dir", str(tmp_path), *flags)


def registered(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every resource of the plan document by type and name."""
    def walk(nodes: list[dict[str, Any]]) -> Any:
        for node in nodes:
            yield node
            yield from walk(node.get("children", []))
    return {f"{n['type']} {n['name']}": n for n in walk(document["resources"])}


# --- The settings ---------------------------------------------------------------------------------------


def test_the_settings_take_the_defaults_and_refuse_what_google_would() -> None:
    budget = BudgetSettings.model_validate({"billingAccount": ACCOUNT, "monthlyUsd": 2000})
    assert (budget.thresholds, budget.enforce) == ((0.5, 0.9, 1.0), False)
    for bad, field in (({"billingAccount": f"billingAccounts/{ACCOUNT}", "monthlyUsd": 1}, "billingAccount"),
                       ({"billingAccount": "my-account", "monthlyUsd": 1}, "billingAccount"),
                       ({"billingAccount": ACCOUNT, "monthlyUsd": 0}, "monthlyUsd"),
                       ({"billingAccount": ACCOUNT, "monthlyUsd": 1, "thresholds": []}, "thresholds"),
                       ({"billingAccount": ACCOUNT, "monthlyUsd": 1, "thresholds": [0]}, "thresholds"),
                       ({"billingAccount": ACCOUNT, "monthlyUsd": 1, "alerts": 2}, "alerts")):
        with pytest.raises(ValidationError) as caught:
            BudgetSettings.model_validate(bad)
        assert caught.value.errors()[0]["loc"][0] == field


def test_validate_names_a_bad_budget_by_its_key(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.pr.yaml"
    path.write_text(stack().replace(ACCOUNT, "billingAccounts/" + ACCOUNT))
    done = run("validate", str(path))
    assert done.returncode == 1
    assert f"{path}: gcp-training-jobs:budget.billingAccount: " in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr


# --- plan and validate ----------------------------------------------------------------------------------


def test_plan_json_shows_the_budget_filtered_to_the_project_and_the_stack_label(tmp_path: Path) -> None:
    done = plan(tmp_path, stack(monthly=4000, workers=2, thresholds=[0.25, 1.0]), "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    budget = registered(document)["gcp:billing/budget:Budget budget"]["inputs"]
    assert budget["billingAccount"] == ACCOUNT
    assert budget["amount"]["specifiedAmount"] == {"currencyCode": "USD", "units": "4000", "nanos": 0}
    scope = budget["budgetFilter"]
    assert scope["labels"] == stack_label("gcp-training-jobs", "pr") and list(scope["labels"]) == [STACK_LABEL]
    assert scope["projects"] == ["projects/(the number of my-ml-prod, known after apply)"]
    assert scope["calendarPeriod"] == "MONTH"
    assert budget["thresholdRules"] == [{"thresholdPercent": 0.25, "spendBasis": "CURRENT_SPEND"},
                                        {"thresholdPercent": 1.0, "spendBasis": "CURRENT_SPEND"},
                                        {"thresholdPercent": 1.0, "spendBasis": "FORECASTED_SPEND"}]
    assert "allUpdatesRule" not in budget  # nothing to notify without enforce
    assert document["budget"]["worstCaseUsd"] == 3052.9 and document["budget"]["fits"] is True
    job = registered(document)["pulumi-python:dynamic/training:TrainingJob h100"]["inputs"]
    assert job["budget"] == {"monthlyUsd": 4000.0, "stackWorstCase": {"knownUsd": 3052.9, "unknown": []}}
    assert not [key for key in registered(document) if "cloudfunctionsv2" in key or "pubsub" in key]


def test_plan_text_shows_the_worst_case_against_the_budget_and_refuses_a_stack_past_it(tmp_path: Path) -> None:
    done = plan(tmp_path, stack(monthly=2000))
    assert done.returncode == 1, done.stderr
    assert ("Budget (gcp-training-jobs:budget): worst case $3,052.90 of the $2,000.00 monthly budget (refused: see "
            "below)") in done.stdout
    assert "    alerts at 50%, 90%, 100% of current spend and 100% of forecast spend\n" in done.stdout
    assert (f"{tmp_path / 'Pulumi.pr.yaml'}: gcp-training-jobs:budget: the stack's worst case is $3,052.90, over the "
            "$2,000.00 monthly budget; allowed:") in done.stdout
    fits = plan(tmp_path, stack(monthly=4000))
    assert fits.returncode == 0, fits.stdout + fits.stderr
    assert "Budget (gcp-training-jobs:budget): worst case $3,052.90 of the $4,000.00 monthly budget\n" in fits.stdout


def test_validate_refuses_a_stack_past_its_budget_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.pr.yaml"
    path.write_text(stack(monthly=2000))
    done = run("validate", str(path))
    assert done.returncode == 1
    assert f"{path}: gcp-training-jobs:budget: the stack's worst case is $3,052.90, over the $2,000.00" in done.stdout
    path.write_text(stack(monthly=2100, workers=1))  # two machines for 10 h: $2,035.27
    assert run("validate", str(path)).returncode == 0


def test_enforce_adds_the_topic_the_function_and_a_role_that_may_only_cancel_jobs(tmp_path: Path) -> None:
    done = plan(tmp_path, stack(monthly=4000, enforce=True), "--json")
    assert done.returncode == 0, done.stderr
    found = registered(json.loads(done.stdout))
    topic = found["gcp:pubsub/topic:Topic budget-alerts"]
    budget = found["gcp:billing/budget:Budget budget"]["inputs"]
    assert budget["allUpdatesRule"]["pubsubTopic"] == "projects/my-ml-prod/topics/budget-alerts"
    assert topic["inputs"]["project"] == "my-ml-prod"
    function = found["gcp:cloudfunctionsv2/function:Function budget-stop"]["inputs"]
    assert function["eventTrigger"]["pubsubTopic"] == "projects/my-ml-prod/topics/budget-alerts"
    assert function["buildConfig"]["entryPoint"] == "on_budget"
    env = function["serviceConfig"]["environmentVariables"]
    (key, value), = stack_label("gcp-training-jobs", "pr").items()
    assert env["STACK_LABEL"] == f"{key}={value}" and env["REGIONS"] == "us-central1"
    account = function["serviceConfig"]["serviceAccountEmail"]
    role = found["gcp:projects/iAMCustomRole:IAMCustomRole budget-stop-role"]["inputs"]
    assert sorted(role["permissions"]) == ["aiplatform.customJobs.cancel", "aiplatform.customJobs.list",
                                           "aiplatform.hyperparameterTuningJobs.cancel",
                                           "aiplatform.hyperparameterTuningJobs.list"]
    grants = {n["type"]: n["inputs"] for n in found.values() if n["type"].endswith("IAMMember")}
    assert sorted(grants) == ["gcp:projects/iAMMember:IAMMember",  # additive grants only
                              "gcp:pubsub/topicIAMMember:TopicIAMMember"]
    assert grants["gcp:projects/iAMMember:IAMMember"]["member"] == f"serviceAccount:{account}"
    # The topic takes publishes from Cloud Billing's budgets alone: the one publisher grant on it.
    publisher = grants["gcp:pubsub/topicIAMMember:TopicIAMMember"]
    assert (publisher["role"], publisher["member"]) == (
        "roles/pubsub.publisher", "serviceAccount:billing-budget-alert@system.gserviceaccount.com")
    assert publisher["topic"] == "projects/my-ml-prod/topics/budget-alerts"
    assert {"BUDGET_DISPLAY_NAME", "BUDGET_ID", "BILLING_ACCOUNT"} <= set(env)
    source = found["gcp:storage/bucketObject:BucketObject budget-stop-source"]["inputs"]["source"]["assetArchive"]
    assert sorted(source) == ["main.py", "requirements.txt"]
    assert all(Path(item["fileAsset"]).is_file() for item in source.values())


# --- The provider's check and the policy pack ---------------------------------------------------------------


def h100_facts(timeout: str = "36000s") -> Any:
    """One a3-highgpu-8g job's facts as the provider judges its inputs ($101.76/h in the bundled table)."""
    from gcp_training_jobs.resources.job_model.inputs import judge_wire, preview_job_id

    job = {"region": "us-central1", "jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8},
        "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/t:1"}}],
        "scheduling": {"timeout": timeout}}}
    return judge_wire(job, backend="vertex", job_id=preview_job_id("h100")).facts


def test_the_provider_s_check_holds_the_job_and_the_stack_to_the_budget() -> None:
    facts = h100_facts()  # $1017.630 at worst
    assert budget_input_problems(facts, "h100", None) == []
    assert budget_input_problems(facts, "h100", {"monthlyUsd": 2000.0}) == []
    (own,) = budget_input_problems(h100_facts("108000s"), "h100", {"monthlyUsd": 2000.0})  # 30 h: $3,052.90
    assert str(own).startswith("gcp-training-jobs:budget: job h100's worst case is $3,052.90, over the $2,000.00 "
                               "monthly budget; allowed:")
    over = {"monthlyUsd": 2000.0, "stackWorstCase": {"knownUsd": 3052.9, "unknown": []}}
    (stack_wide,) = budget_input_problems(facts, "h100", over)
    assert str(stack_wide).startswith("gcp-training-jobs:budget: the stack's worst case is $3,052.90, over the")
    unpriced = {"monthlyUsd": 2000.0, "stackWorstCase": {"knownUsd": 1017.63, "unknown": ["other: 1 x X (no price)"]}}
    (unknown,) = budget_input_problems(facts, "h100", unpriced)
    assert "cannot be held to the $2,000.00 monthly budget" in str(unknown)


def test_a_job_whose_worst_case_cannot_be_priced_is_told_what_the_budget_allows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A price table that does not read: the check names the table's fault and what the budget allows, as every cost
    guardrail does."""
    from gcp_training_jobs.jobspec.catalog.prices import PRICES_FILE_ENV

    broken = tmp_path / "prices.json"
    broken.write_text("{not json")
    monkeypatch.setenv(PRICES_FILE_ENV, str(broken))
    (unpriced,) = budget_input_problems(h100_facts(), "h100", {"monthlyUsd": 2000.0})
    assert str(unpriced).startswith("gcp-training-jobs:budget: job h100's worst case cannot be priced: "), unpriced
    assert f"{broken}: not JSON" in str(unpriced)
    assert str(unpriced).endswith("; allowed: at most the $2,000.00 monthly budget"), unpriced


def test_the_provider_refuses_a_job_of_a_stack_past_its_budget(provider: Any) -> None:
    from tests.helpers import checked, spec_props

    job = {"region": "us-central1", "jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8},
        "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/t:1"}}],
        "scheduling": {"timeout": "36000s"}}}
    over = {"monthlyUsd": 2000.0, "stackWorstCase": {"knownUsd": 3052.9, "unknown": []}}
    refused = provider.check({}, spec_props(job, name="h100", budget=over))
    assert [f.reason.split(";")[0] for f in refused.failures] == [  # the project's own line, naming the guardrail
        "TrainingJob h100, budget: the stack's worst case is $3,052.90, over the $2,000.00 monthly budget"]
    assert checked(provider, spec_props(job, name="h100", budget={**over, "stackWorstCase": {"knownUsd": 1017.63}}))


# --- spend: the month so far against the budget ---------------------------------------------------------------


def test_the_budget_month_begins_at_midnight_pacific_time() -> None:
    from datetime import UTC, datetime

    from gcp_training_jobs.resources.settings.budget import month_start

    assert month_start(datetime(2026, 11, 28, 9, 0, tzinfo=UTC)) == datetime(2026, 11, 1, 8, 0, tzinfo=UTC)
    assert month_start(datetime(2026, 12, 1, 7, 59, tzinfo=UTC)) == datetime(2026, 11, 1, 8, 0, tzinfo=UTC)
    assert month_start(datetime(2026, 12, 1, 8, 0, tzinfo=UTC)) == datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


def test_spend_says_the_month_so_far_against_the_budget() -> None:
    from gcp_training_jobs.cli.live.spend import spend_lines

    document = {"stack": "prod", "project": "my-ml-prod", "since": "2026-10-29T09:00:00Z",
                "until": "2026-11-28T09:00:00Z", "prices": "bundled", "jobs": [], "costUsd": 0.0, "complete": True,
                "jobCount": 0, "budget": {"monthlyUsd": 2000.0, "since": "2026-11-01T08:00:00Z", "costUsd": 412.3,
                                          "complete": True}}
    assert spend_lines(document)[-1] == ("budget: $412.30 this month (since 2026-11-01T08:00:00Z) of the $2,000.00 "
                                         "monthly budget (this estimate; Google's figure reaches the budget within "
                                         "about a day)")
    assert not [line for line in spend_lines({**document, "budget": None}) if line.startswith("budget")]


def test_the_diff_shows_the_head_s_worst_case_against_its_budget(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from gcp_training_jobs.cli.diff.command import diff
    from gcp_training_jobs.cli.diff.text import headline, render_markdown, render_text
    from tests.helpers import commit_all, offline_review, scratch_project

    repo = scratch_project(tmp_path)
    offline_review(monkeypatch, tmp_path)
    (repo / "stacks/Pulumi.pr.yaml").write_text(stack(monthly=2100, workers=1))  # $2,035.27: fits
    base = commit_all(repo, "base")
    (repo / "stacks/Pulumi.pr.yaml").write_text(stack(monthly=2100, workers=2))  # $3,052.90: past the budget
    monkeypatch.chdir(repo)
    document = diff(base, None, ["pr"])
    assert isinstance(document, dict), document
    assert "    budget: worst case $3,052.90 of the $2,100.00 monthly budget\n" in render_text(document)
    assert "- budget: worst case $3,052.90 of the $2,100.00 monthly budget" in render_markdown(document)
    assert headline(document).endswith("; breaks budget in pr")
