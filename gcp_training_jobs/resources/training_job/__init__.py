"""TrainingJob: a training job as a Pulumi resource, driven by a Python dynamic provider (`provider`).

The package's modules are the provider's jobs: `tries` (fallbacks, retries, re-runs), `quota` (the quota check),
`review` (what a reviewer is told: rules, cost, a running job's fate, a waited job's reports) and `provider` (check,
diff, create, read, update, delete); what a job is without Pulumi (its inputs read once, the labels it is found by,
its runs, its protection) is `resources/job_model/`, which the command line and the policy pack read too.

The job is given in any of the three vocabularies (`job_model.inputs`): AI Platform Training's `trainingInput`, or a
Vertex AI CustomJobSpec (`jobSpec`) or tuning config (`tuningJob`), each with its region. The resource computes its
`identity` (who its job belongs to) from the Pulumi organization, project, stack and resource name, since a dynamic
provider is never given the URN at create; its job carries that identity as a label, so a re-run finds and adopts
it (see ARCHITECTURE.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from inspect import isawaitable
from typing import Any

import pulumi
from pulumi.dynamic import Resource

from gcp_training_jobs.jobspec.catalog.credentials import masked
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.core.names import DEFAULT_BACKEND, command
from gcp_training_jobs.resources.args import resolve_args
from gcp_training_jobs.resources.job_model.identity import identity_labels, identity_of
from gcp_training_jobs.resources.job_model.inputs import UNKNOWN, canonical, input_problems, new_job_id, spec_of
from gcp_training_jobs.resources.job_model.runs import REPLACING
from gcp_training_jobs.resources.training_job.provider import OUTPUT_KEYS, TrainingJobProvider


def resource_identity(resource_name: str) -> str:
    """Who a job belongs to: the Pulumi organization, project, stack and resource name."""
    return identity_of(pulumi.get_organization(), pulumi.get_project(), pulumi.get_stack(), resource_name)


class InvalidArgs(TrainingJobsError, pulumi.RunError):
    """TrainingJob was given an argument it cannot take (a RunError: Pulumi reports it as one line, no traceback)."""


@dataclass
class TrainingJobArgs:
    """One training job: where, on which API, the job itself, and the stack's rules on it.

    Each field is checked where it is given (`TrainingJob(...)` raises InvalidArgs naming the field: `retries="three"`
    is refused); a value that is an Output, not known until the engine resolves it, is checked by the provider's
    `check` instead, against the same rules (gcp_training_jobs.resources.job_model.inputs)."""

    project: pulumi.Input[str]
    """The Google Cloud project the job runs in."""
    job: pulumi.Input[dict[str, Any]]
    """The job, in either vocabulary: AI Platform Training's (a gcloud config.yaml Job: `{"trainingInput": {...},
    "labels": ...}`), or Vertex AI's (`{"jobSpec": CustomJobSpec, "region": R, "labels": ...}`, vertex only); leaves may
    be Outputs (a package URI, a job dir)."""
    backend: pulumi.Input[str] = DEFAULT_BACKEND
    """vertex (Vertex AI custom jobs) or ai-platform (AI Platform Training v1)."""
    wait_for_completion: pulumi.Input[bool] = False
    """Whether create (and replace) waits until the job ends."""
    wait_timeout_seconds: pulumi.Input[float] | None = None
    """How long to wait at most (default: 24 hours)."""
    guardrails: pulumi.Input[dict[str, Any]] | None = None
    """The stack's guardrails (`gcp-training-jobs:guardrails`, camelCase keys), checked on this job by the
    provider's check (the per-job ones and the fixed job rules); `protectJobs` protects it when active."""
    protect: pulumi.Input[bool] | None = None
    """Refuse a change that replaces or deletes the job while it is QUEUED, PREPARING or RUNNING (None: the
    guardrails' protectJobs)."""
    fallbacks: pulumi.Input[list[dict[str, Any]]] | None = None
    """Where else the job may run, in order (each: `region`, `machineSpec` {machineType, acceleratorType,
    acceleratorCount}, `scheduling.strategy`), when a create is refused for quota or capacity or the job fails for
    capacity before it ran; adding or editing them never replaces a running job."""
    retries: pulumi.Input[int] | None = None
    """How many times a job that failed for Google's reasons (capacity, preemption, internal faults) is made again
    (None: 2); a failure of the user's code never is."""
    rerun: pulumi.Input[str] | None = None
    """Any text: changing it replaces the job with a fresh run of the same spec."""
    delete_record_on_delete: pulumi.Input[bool] | None = None
    """Whether deleting or replacing the resource also removes its finished job's record from Vertex AI (None,
    False: every record stays, the job's history; an active job is cancelled either way)."""
    persistent_resource_declared: pulumi.Input[bool] | None = None
    """Whether the persistent resource the job runs on is the stack's own (stack.py; None: an existing one, which the
    check asks Vertex about: it exists and is RUNNING)."""
    cheapest_first: pulumi.Input[bool] | None = None
    """`jobs.NAME.placement: cheapest`: `fallbacks` are the job's placements, cheapest first, and the job as written
    is not tried before them (the stack's placement candidates, settings.placement); None: the job as written, then
    its fallbacks."""
    stack_quota: pulumi.Input[dict[str, Any]] | None = None
    """What the stack's jobs need of Vertex AI's quotas ({"jobs": [{resource, name, region, needs}]}, stack.py), so
    that the quota check of this job's preview counts the stack's other new jobs too."""
    budget: pulumi.Input[dict[str, Any]] | None = None
    """The stack's monthly budget and worst case ({"monthlyUsd", "stackWorstCase"}: resources.budget.budget_input),
    held by the check as the guardrail `budget`; a stack figure, never compared by diff (as stackQuota)."""


class TrainingJob(Resource, module="training", name="TrainingJob"):
    """A training job on AI Platform Training (ml v1) or Vertex AI, in AI Platform Training's or Vertex AI's
    vocabulary."""

    # Outputs are attributes named as the properties (camelCase), as for every dynamic resource.
    jobId: pulumi.Output[str]
    """The job's id (name + random suffix; a new one whenever the job is replaced)."""
    resourceName: pulumi.Output[str]
    """The full API resource name (projects/P/jobs/ID, or projects/P/locations/R/customJobs/N)."""
    state: pulumi.Output[str]
    """QUEUED, PREPARING, RUNNING, SUCCEEDED, FAILED, CANCELLING or CANCELLED (both backends)."""
    trialCount: pulumi.Output[int]
    """Tuning jobs (Vertex AI HyperparameterTuningJob): the number of trials so far; None for training jobs."""
    bestTrial: pulumi.Output[dict]
    """Tuning jobs: the best trial so far (id, final metrics, parameters); None for training jobs."""
    consoleUrl: pulumi.Output[str]
    """The job's page in the Google Cloud console."""
    placement: pulumi.Output[dict]
    """Which placement runs the job: {index (0: the job as written, i: fallbacks[i-1]), region, machine}."""
    retryCount: pulumi.Output[int]
    """How many times the job was made again after failing for Google's reasons (0: the first run of its spec)."""
    waitFailure: pulumi.Output[str | None]
    """The error of the FAILED job this `pulumi up` waited for (waitForCompletion), else None. The update fails on it
    (exit non-zero) after the job is recorded in the state; the next `up` clears it and does not run the job again
    (a failure of the user's code never is; Google's keep their retries)."""
    costUsd: pulumi.Output[float]
    """What the job has cost so far in USD (the time it has run times the rate it runs at: Spot for SPOT, from the
    price table; gcp_training_jobs.jobspec.review.run_cost), as of its last read: `pulumi refresh` updates it. None
    when a part of it has no known price."""

    def __init__(self, resource_name: str, args: TrainingJobArgs | None = None,
                 opts: pulumi.ResourceOptions | None = None, **kwargs: Any) -> None:
        args = resolve_args(TrainingJobArgs, args, kwargs)
        if opts is not None and opts.import_:
            raise pulumi.RunError(
                f"TrainingJob {resource_name}: import_ cannot work for a Python dynamic resource (the engine "
                "reads an imported resource without its pickled provider: KeyError '__provider' in "
                "pulumi/dynamic/__main__.py). A live job of this resource is adopted by its labels on the next "
                "`pulumi up` instead; see the README, \"Recovering after a crash\"")
        props: dict[str, Any] = {
            "name": resource_name,
            "project": args.project,
            "backend": args.backend,
            "job": args.job,
            "waitForCompletion": args.wait_for_completion,
            "waitTimeoutSeconds": args.wait_timeout_seconds,
            "guardrails": args.guardrails,
            "protect": args.protect,
            "fallbacks": args.fallbacks,
            "retries": args.retries,
            "rerun": args.rerun,
            "deleteRecordOnDelete": args.delete_record_on_delete,
            "stackQuota": args.stack_quota,
            "budget": args.budget,
            "cheapestFirst": args.cheapest_first,
            "persistentResourceDeclared": args.persistent_resource_declared,
            "identity": resource_identity(resource_name),
        }
        _check_args(resource_name, props)
        opts = _conceal_credentials(props, opts)
        props.update({key: None for key in OUTPUT_KEYS})
        super().__init__(TrainingJobProvider(), resource_name, props, opts)
        # A failed waited run is a failed deploy: the error is raised once the create's outputs resolve, after the
        # engine has recorded the job (a raised create would lose it). The SDK awaits every output before the
        # program ends, so the update exits non-zero; RunError is reported as one error line, no traceback.
        self.waitFailure.apply(lambda failure: _fail_update(resource_name, failure))


def _field(prop: str) -> str:
    """The TrainingJobArgs field of an input (waitForCompletion: wait_for_completion)."""
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", prop).lower()
    return snake if snake in {f.name for f in fields(TrainingJobArgs)} else prop


def _check_args(name: str, props: dict[str, Any]) -> None:
    """The known arguments judged now (an Output is the provider's to check once it resolves); InvalidArgs naming
    every field that is wrong."""
    known = {k: UNKNOWN if isinstance(v, pulumi.Output) or isawaitable(v) else v for k, v in props.items()}
    problems = [f"{_field(key)}: {problem}" for key, problem in input_problems(known)]
    if problems:
        raise InvalidArgs(f"TrainingJob {name}: " + "; ".join(problems))


#: The inputs that may carry a job's text (args, env, commands): a credential in them is made a secret.
CONCEALED_INPUTS = ("job", "fallbacks")


def _conceal_credentials(props: dict[str, Any], opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions | None:
    """Each text of the job (or its fallbacks) that holds a credential (catalog.credentials.masked, the one walk)
    made a Pulumi secret where it stands, so `pulumi preview --diff`, `pulumi up` and the state show `[secret]` in its
    place while the rest of the job stays readable and known at preview; the provider is given the plain value. The
    outputs that echo the input are named secret too (additional_secret_outputs). A value still unknown (an Output)
    is made secret once it resolves, if it is one. A job without one is passed on as it is: nothing changes."""
    hidden: list[str] = []
    for key in CONCEALED_INPUTS:
        walked = masked(props[key], conceal=pulumi.Output.secret)
        if walked.found:
            props[key], hidden = walked.value, [*hidden, key]
        props[key] = _conceal_unknown(props[key])
    named = (opts.additional_secret_outputs or []) if opts else []
    hidden = [key for key in hidden if key not in named]
    if not hidden:
        return opts
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=hidden))  # appended


def _conceal_unknown(value: Any) -> Any:
    """`value` with each Output in it (at any depth) made secret when it resolves to a text holding a credential."""
    if isinstance(value, pulumi.Output):
        return value.apply(lambda known: masked(known, conceal=pulumi.Output.secret).value)
    if isinstance(value, dict):
        return {key: _conceal_unknown(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_conceal_unknown(item) for item in value]
    return value


def _fail_update(name: str, failure: str | None) -> None:
    if failure:
        raise pulumi.RunError(
            f"job {name}: {failure}. The job is recorded in the state as FAILED (`{command('status')}` shows it)"
            "; the next `pulumi up` does not run it again: fix it and change the job, or set "
            f"jobs.{name}.rerun, to run it again")


__all__ = ["OUTPUT_KEYS", "REPLACING", "UNKNOWN", "InvalidArgs", "TrainingJob", "TrainingJobArgs",
           "TrainingJobProvider", "canonical", "identity_labels", "new_job_id", "resource_identity", "spec_of"]
