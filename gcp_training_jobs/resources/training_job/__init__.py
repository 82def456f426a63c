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

from inspect import isawaitable
from typing import Any, get_type_hints

import pulumi
from pulumi.dynamic import Resource

from gcp_training_jobs.jobspec.catalog.credentials import masked
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.core.names import DYNAMIC_JOB_MODULE, JOB_RESOURCE, PACKAGE_JOB_TYPE, command
from gcp_training_jobs.resources.args import resolve_args
from gcp_training_jobs.resources.job_model.declared import (
    FALLBACKS,
    IDENTITY,
    INPUTS,
    JOB,
    NAME,
    OUTPUT_KEYS,
    RERUN,
    TrainingJobArgs,
    TrainingJobOutputs,
)
from gcp_training_jobs.resources.job_model.identity import identity_labels, identity_of
from gcp_training_jobs.resources.job_model.inputs import UNKNOWN, canonical, input_problems, new_job_id, spec_of
from gcp_training_jobs.resources.job_model.runs import REPLACING
from gcp_training_jobs.resources.training_job.provider import TrainingJobProvider


def resource_identity(resource_name: str) -> str:
    """Who a job belongs to: the Pulumi organization, project, stack and resource name."""
    return identity_of(pulumi.get_organization(), pulumi.get_project(), pulumi.get_stack(), resource_name)


class InvalidArgs(TrainingJobsError, pulumi.RunError):
    """TrainingJob was given an argument it cannot take (a RunError: Pulumi reports it as one line, no traceback)."""


class TrainingJob(Resource, TrainingJobOutputs, module=DYNAMIC_JOB_MODULE, name=JOB_RESOURCE):
    """A training job on AI Platform Training (ml v1) or Vertex AI, in AI Platform Training's or Vertex AI's
    vocabulary."""

    # Outputs are attributes named as the properties (camelCase), as for every dynamic resource: declared once in
    # job_model.declared.TrainingJobOutputs, whose annotations are this class's too (set below the class).

    def __init__(self, resource_name: str, args: TrainingJobArgs | None = None,
                 opts: pulumi.ResourceOptions | None = None, **kwargs: Any) -> None:
        args = resolve_args(TrainingJobArgs, args, kwargs)
        if opts is not None and opts.import_:
            raise pulumi.RunError(
                f"TrainingJob {resource_name}: import_ cannot work for a Python dynamic resource (the engine "
                "reads an imported resource without its pickled provider: KeyError '__provider' in "
                "pulumi/dynamic/__main__.py). A live job of this resource is adopted by its labels on the next "
                "`pulumi up` instead; see the README, \"Recovering after a crash\"")
        set_here = {NAME.wire: resource_name, IDENTITY.wire: resource_identity(resource_name)}
        props: dict[str, Any] = {declared.wire: set_here[declared.wire] if declared.arg is None
                                 else getattr(args, declared.arg) for declared in INPUTS}
        check_args(resource_name, props)
        opts = _conceal_credentials(props, opts)
        props.update({key: None for key in OUTPUT_KEYS})
        # the same resource as the package's (a stack back from `jobResource: package`): taken in place, not remade
        back = pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=PACKAGE_JOB_TYPE)])
        super().__init__(TrainingJobProvider(), resource_name, props, pulumi.ResourceOptions.merge(opts, back))
        # A failed waited run is a failed deploy: the error is raised once the create's outputs resolve, after the
        # engine has recorded the job (a raised create would lose it). The SDK awaits every output before the
        # program ends, so the update exits non-zero; RunError is reported as one error line, no traceback.
        self.waitFailure.apply(lambda failure: fail_update(resource_name, failure))


# The SDK reads a resource's own annotations (not its bases') to type what the engine answers (8.0 for an int: 8).
TrainingJob.__annotations__ = get_type_hints(TrainingJobOutputs, localns={"Output_": pulumi.Output})


def _field(prop: str) -> str:
    """The TrainingJobArgs field of an input (waitForCompletion: wait_for_completion), as declared."""
    return next((declared.arg for declared in INPUTS if declared.wire == prop and declared.arg), prop)


def check_args(name: str, props: dict[str, Any]) -> None:
    """The known arguments judged now (an Output is the provider's to check once it resolves); InvalidArgs naming
    every field that is wrong."""
    known = {k: UNKNOWN if isinstance(v, pulumi.Output) or isawaitable(v) else v for k, v in props.items()}
    problems = [f"{_field(key)}: {problem}" for key, problem in input_problems(known)]
    if problems:
        raise InvalidArgs(f"TrainingJob {name}: " + "; ".join(problems))


#: The inputs that may carry a job's text (args, env, commands): a credential in them is made a secret.
CONCEALED_INPUTS = (JOB.wire, FALLBACKS.wire)


def _conceal_credentials(props: dict[str, Any], opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions | None:
    """Each text of the job (or its fallbacks) that holds a credential (catalog.credentials.masked, the one walk)
    made a Pulumi secret where it stands, so `pulumi preview --diff`, `pulumi up` and the state show `[secret]` in its
    place while the rest of the job stays readable and known at preview; the provider is given the plain value. The
    outputs that echo the input are named secret too (additional_secret_outputs). A value still unknown (an Output)
    is made secret once it resolves, if it is one. A job without one is passed on as it is: nothing changes."""
    hidden: list[str] = []
    for key in CONCEALED_INPUTS:
        if masked(props[key]).found:
            hidden.append(key)
        props[key] = concealed(props[key])
    named = (opts.additional_secret_outputs or []) if opts else []
    hidden = [key for key in hidden if key not in named]
    if not hidden:
        return opts
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=hidden))  # appended


def concealed(value: Any) -> Any:
    """`value` (an input that may carry a job's text) with each text holding a credential made a Pulumi secret where
    it stands, and each Output in it (at any depth) made so when it resolves (catalog.credentials.masked)."""
    return _conceal_unknown(masked(value, conceal=pulumi.Output.secret).value)


def _conceal_unknown(value: Any) -> Any:
    """`value` with each Output in it (at any depth) made secret when it resolves to a text holding a credential."""
    if isinstance(value, pulumi.Output):
        return value.apply(lambda known: masked(known, conceal=pulumi.Output.secret).value)
    if isinstance(value, dict):
        return {key: _conceal_unknown(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_conceal_unknown(item) for item in value]
    return value


def fail_update(name: str, failure: str | None) -> None:
    if failure:  # Google's message is often a sentence of its own ("... status of 1."): one period ends it
        raise pulumi.RunError(
            f"job {name}: {failure.rstrip().removesuffix('.')}. The job is recorded in the state as FAILED "
            f"(`{command('status')}` shows it)"
            "; the next `pulumi up` does not run it again: fix it and change the job, or set "
            f"jobs.{name}.{RERUN.wire}, to run it again")


__all__ = ["OUTPUT_KEYS", "REPLACING", "UNKNOWN", "InvalidArgs", "TrainingJob", "TrainingJobArgs",
           "TrainingJobProvider", "canonical", "identity_labels", "new_job_id", "resource_identity", "spec_of"]
