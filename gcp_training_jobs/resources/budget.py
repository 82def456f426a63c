"""StackBudget: the stack's monthly budget (`gcp-training-jobs:budget`), the net under the stack after the review.

One pulumi-gcp `billing.Budget` per stack, on its billing account, scoped to the stack's project and to its jobs by
the label the provider stamps on every job, `pulumi-stack` (job_model.identity.stack_label). Google's Budget API
takes one label key and one value in a filter ("A single label and value pair ... Currently, multiple entries or
multiple values per entry are not allowed",
https://cloud.google.com/billing/docs/reference/budget/rest/v1/billingAccounts.budgets), so the stack's own label is
the one that fits: every job of the stack carries it, no other stack's does. A label filter counts the usage of the
labelled resources as billed: Google's Vertex AI Pipelines page on label propagation
(https://cloud.google.com/vertex-ai/docs/pipelines/gcpc-label-propagation) names CustomJob and
HyperparameterTuningJob among the resources whose labels break down billed charges (docs/capacity-and-cost.md,
"Budgets", says to check a month's billing report for the label before relying on it). The filter's project is
its number, as the Budget API answers it (`projects/{project_number}`).

Threshold rules: one on CURRENT_SPEND per `thresholds` fraction (default 0.5, 0.9, 1.0), and one on FORECASTED_SPEND
at 1.0. With `enforce: true`, as Google's "Control resource usage with notifications"
(https://cloud.google.com/billing/docs/how-to/control-usage) does for Compute Engine: a Pub/Sub topic the budget
notifies, and a Cloud Run function (gen 2 `cloudfunctionsv2.Function`) whose source is shipped with the library
(resources/budget_stop: main.py and requirements.txt only, uploaded as an archive to the staging bucket) that cancels
the stack's queued and running custom and tuning jobs once the month's spend reaches the budget. The topic takes
messages from Cloud Billing alone: the Pub/Sub publisher role is granted on it (additively, `TopicIAMMember`) to the
identity Google names as the one budgets publish as, BILLING_PUBLISHER
(https://cloud.google.com/billing/docs/how-to/budgets-programmatic-notifications, read 2026-12-02), and to no one
else (a project-wide publisher grant made outside the stack reaches every topic: docs/capacity-and-cost.md says so).
The function runs as a service account of its own holding one custom role, made of the four permissions it uses
(Vertex AI's IAM permissions, https://cloud.google.com/iam/docs/permissions-reference:
aiplatform.customJobs.cancel, .list, aiplatform.hyperparameterTuningJobs.cancel, .list; no get, no create) and
nothing else, granted by an additive `IAMMember` on the project. No grant can be narrower: custom and tuning jobs
have no IAM policy of their own (Vertex AI v1's customJobs and hyperparameterTuningJobs have no getIamPolicy or
setIamPolicy method), and an IAM Condition on the resource's name or type is recognised only by the services Google
lists (https://cloud.google.com/iam/docs/conditions-resource-attributes, read 2026-12-02), which do not include Vertex
AI; nor are job labels an IAM attribute. The function narrows what it does itself: the stack's regions, the stack's
label checked on every job, and lists that ask only for the jobs' name, state and labels (never a job's env).
The function's environment names the budget's id and billing account, which it checks against each message's
attributes.

`budget_input` is what every TrainingJob of the stack is given (its `budget` input): the monthly budget and the
stack's worst case as plan counts it, so that the provider's check holds the guardrail `budget` too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pulumi
import pulumi_gcp as gcp

from gcp_training_jobs.jobspec.catalog.prices import PriceTableError
from gcp_training_jobs.jobspec.review.guardrails import BUDGET_TYPE, stack_estimate
from gcp_training_jobs.resources.job_model.identity import stack_label
from gcp_training_jobs.resources.services import ProjectServices, ProjectServicesArgs
from gcp_training_jobs.resources.settings import StackSettings
from gcp_training_jobs.resources.settings.guardrails import falling_back
from gcp_training_jobs.resources.settings.placements import placed, regions

TYPE = "gcp-training:index:StackBudget"
#: What the stop function may do, and nothing else (Google's IAM permissions reference).
STOP_PERMISSIONS = ("aiplatform.customJobs.cancel", "aiplatform.customJobs.list",
                    "aiplatform.hyperparameterTuningJobs.cancel", "aiplatform.hyperparameterTuningJobs.list")
#: The identity Cloud Billing publishes budget notifications as (Google's programmatic notifications page), the one
#: publisher of the stop function's topic, and the role it is granted there.
BILLING_PUBLISHER = "serviceAccount:billing-budget-alert@system.gserviceaccount.com"
PUBLISHER_ROLE = "roles/pubsub.publisher"
#: The APIs the budget needs (the Budget API), and what `enforce` adds (Pub/Sub, Cloud Run functions and what they
#: build and trigger with).
BUDGET_APIS = ("billingbudgets.googleapis.com",)
ENFORCE_APIS = ("pubsub.googleapis.com", "cloudfunctions.googleapis.com", "run.googleapis.com",
                "cloudbuild.googleapis.com", "artifactregistry.googleapis.com", "eventarc.googleapis.com")
#: The stop function's source, shipped with the library, and its entry point (budget_stop/main.py).
STOP_SOURCE = Path(__file__).parent / "budget_stop"
STOP_FILES = ("main.py", "requirements.txt")
ENTRY_POINT = "on_budget"
RUNTIME = "python312"
#: Google's event for a message published to a topic (Eventarc's Pub/Sub trigger of a gen 2 function).
PUBSUB_EVENT = "google.cloud.pubsub.topic.v1.messagePublished"


def budget_input(settings: StackSettings) -> dict[str, Any] | None:
    """The `budget` input of each of the stack's TrainingJobs: {"monthlyUsd", "stackWorstCase": {"knownUsd",
    "unknown"}} (the stack's worst case as plan counts it: its jobs' worst cases summed); None without a budget."""
    if settings.budget is None:
        return None
    try:
        worst = stack_estimate({name: job.facts for name, job in settings.jobs.items()},
                               falls_back=falling_back(settings), placed=placed(settings)).worst_case
    except PriceTableError:  # the plan and validate say so; the provider judges the job's own worst case
        return {"monthlyUsd": settings.budget.monthly_usd}
    return {"monthlyUsd": settings.budget.monthly_usd,
            "stackWorstCase": {"knownUsd": round(worst.known, 2), "unknown": list(worst.unknown)}}


def display_name(stack: str) -> str:
    """The budget's display name (at most 60 characters, the Budget API's bound): `training jobs STACK`."""
    return f"training jobs {stack}"[:60]


class StackBudget(pulumi.ComponentResource):
    """The stack's billing.Budget and, with `enforce`, its topic, stop function, service account and role."""

    budget: gcp.billing.Budget
    topic: gcp.pubsub.Topic | None = None
    function: gcp.cloudfunctionsv2.Function | None = None

    def __init__(self, name: str, settings: StackSettings, project: pulumi.Input[str],
                 staging_bucket: pulumi.Input[str], labels: pulumi.Input[dict[str, str]], secret: bool = False,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        assert settings.budget is not None  # stack_budget makes one only for a stack with a budget
        spec = settings.budget
        child = pulumi.ResourceOptions(parent=self)
        apis = [*BUDGET_APIS, *(ENFORCE_APIS if spec.enforce else ())]
        after: list[pulumi.Resource] = []
        if settings.enable_apis:
            after.append(ProjectServices(f"{name}-apis", ProjectServicesArgs(project, tuple(apis)), opts=child))
        waits = pulumi.ResourceOptions(parent=self, depends_on=after)
        (key, value), = stack_label(pulumi.get_project(), pulumi.get_stack()).items()
        title = display_name(pulumi.get_stack())
        number = gcp.organizations.get_project_output(project_id=project).number
        rules = [gcp.billing.BudgetThresholdRuleArgs(threshold_percent=f, spend_basis="CURRENT_SPEND")
                 for f in spec.thresholds]
        rules.append(gcp.billing.BudgetThresholdRuleArgs(threshold_percent=1.0, spend_basis="FORECASTED_SPEND"))
        notify = None
        if spec.enforce:
            self.topic = gcp.pubsub.Topic(f"{name}-alerts", project=project, labels=labels, opts=waits)
            gcp.pubsub.TopicIAMMember(f"{name}-alerts-publisher", project=project, topic=self.topic.id,
                                      role=PUBLISHER_ROLE, member=BILLING_PUBLISHER, opts=waits)
            notify = gcp.billing.BudgetAllUpdatesRuleArgs(pubsub_topic=self.topic.id, schema_version="1.0")
        self.budget = gcp.billing.Budget(
            name,
            billing_account=pulumi.Output.secret(spec.billing_account) if secret else spec.billing_account,
            display_name=title,
            amount=gcp.billing.BudgetAmountArgs(specified_amount=gcp.billing.BudgetAmountSpecifiedAmountArgs(
                currency_code="USD", units=str(int(spec.monthly_usd)),
                nanos=round((spec.monthly_usd - int(spec.monthly_usd)) * 1e9))),
            budget_filter=gcp.billing.BudgetBudgetFilterArgs(
                projects=[number.apply(lambda n: f"projects/{n}")], labels={key: value},
                calendar_period="MONTH", credit_types_treatment="INCLUDE_ALL_CREDITS"),
            threshold_rules=rules,
            all_updates_rule=notify,
            opts=waits)
        if self.topic is not None:
            self.function = self._stop_function(name, settings, project, staging_bucket, labels, self.topic,
                                                f"{key}={value}", title, secret, waits)
        self.register_outputs({"budget": self.budget.name})

    def _stop_function(self, name: str, settings: StackSettings, project: pulumi.Input[str],
                       staging_bucket: pulumi.Input[str], labels: pulumi.Input[dict[str, str]],
                       topic: gcp.pubsub.Topic, label: str, title: str, secret: bool,
                       opts: pulumi.ResourceOptions) -> gcp.cloudfunctionsv2.Function:
        """The function that cancels the stack's running jobs, its service account, role and grant."""
        stack = pulumi.get_stack()
        account = gcp.serviceaccount.Account(f"{name}-stop", project=project, account_id=_account_id(stack),
                                             display_name=f"Stops {title}'s jobs at its budget", opts=opts)
        role = gcp.projects.IAMCustomRole(
            f"{name}-stop-role", project=project, role_id=_role_id(stack), title=f"Stop {title}"[:100],
            description="Cancel (and list) Vertex AI custom and tuning jobs: what a budget's stop function needs",
            permissions=list(STOP_PERMISSIONS), opts=opts)
        grant = gcp.projects.IAMMember(f"{name}-stop-grant", project=project, role=role.name,
                                       member=account.email.apply(lambda email: f"serviceAccount:{email}"),
                                       opts=opts)
        source = gcp.storage.BucketObject(
            f"{name}-stop-source", bucket=staging_bucket, name=f"budget-stop/{name}.zip",
            source=pulumi.AssetArchive({f: pulumi.FileAsset(str(STOP_SOURCE / f)) for f in STOP_FILES}), opts=opts)
        env: dict[str, pulumi.Input[str]] = {
            "STACK_LABEL": label, "PROJECT": project, "REGIONS": ",".join(regions(settings)),
            "BUDGET_DISPLAY_NAME": title, "BUDGET_ID": self.budget.name.apply(lambda n: budget_name_part(n, -1))}
        if not secret:  # a secret billing account stays out of the function's configuration
            env["BILLING_ACCOUNT"] = self.budget.name.apply(lambda n: budget_name_part(n, 1))
        return gcp.cloudfunctionsv2.Function(
            f"{name}-stop",
            project=project,
            location=settings.region,
            description=f"Cancels {title}'s running Vertex AI jobs once its month's spend reaches its budget",
            labels=labels,
            build_config=gcp.cloudfunctionsv2.FunctionBuildConfigArgs(
                runtime=RUNTIME, entry_point=ENTRY_POINT,
                source=gcp.cloudfunctionsv2.FunctionBuildConfigSourceArgs(
                    storage_source=gcp.cloudfunctionsv2.FunctionBuildConfigSourceStorageSourceArgs(
                        bucket=staging_bucket, object=source.name))),
            service_config=gcp.cloudfunctionsv2.FunctionServiceConfigArgs(
                service_account_email=account.email, environment_variables=env, max_instance_count=1,
                available_memory="256M", timeout_seconds=300, ingress_settings="ALLOW_INTERNAL_ONLY"),
            event_trigger=gcp.cloudfunctionsv2.FunctionEventTriggerArgs(
                event_type=PUBSUB_EVENT, pubsub_topic=topic.id, trigger_region=settings.region,
                retry_policy="RETRY_POLICY_DO_NOT_RETRY"),
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[grant])))


def budget_name_part(name: str | None, index: int) -> str:
    """A part of a budget's resource name (`billingAccounts/ACCOUNT/budgets/ID`): 1 its billing account, -1 its id;
    "" when the name is not yet known or not of that form."""
    parts = (name or "").split("/")
    return parts[index] if len(parts) == 4 and parts[0] == "billingAccounts" and parts[2] == "budgets" else ""


def _account_id(stack: str) -> str:
    """The stop function's service account id, one per stack in a project (6 to 30 lowercase letters, digits and
    hyphens, a letter first)."""
    return re.sub(r"[^a-z0-9-]+", "-", f"budget-stop-{stack}".lower())[:30].rstrip("-")


def _role_id(stack: str) -> str:
    """The custom role's id, one per stack in a project (letters, digits, _ and ., 3 to 64)."""
    return re.sub(r"[^a-zA-Z0-9_.]+", "_", f"trainingJobsBudgetStop_{stack}")[:64]


def stack_budget(settings: StackSettings, project: pulumi.Input[str], staging_bucket: pulumi.Input[str],
                 labels: pulumi.Input[dict[str, str]], after: list[pulumi.Resource],
                 secret: bool = False) -> StackBudget | None:
    """The stack's StackBudget (build_stack's one call), or None when it declares no budget. `secret`: the budget key
    holds a secret (its billing account stays one)."""
    if settings.budget is None:
        return None
    return StackBudget("budget", settings, project, staging_bucket, labels, secret,
                       opts=pulumi.ResourceOptions(depends_on=after))


__all__ = ["BILLING_PUBLISHER", "BUDGET_TYPE", "STOP_PERMISSIONS", "StackBudget", "budget_input", "stack_budget"]
