"""The provider package's TrainingJob as a Python program registers it, and the provider a stack file's program
configures it with (the program's side: it never imports the plugin's protocol, resources/package/provider.py).

`PackageTrainingJob` takes TrainingJob's arguments (job_model.declared.TrainingJobArgs) and registers the package's
resource, `gcp-training-jobs:index:TrainingJob`, served by the package's plugin: nothing is pickled into the state,
and a credential in the job is a secret where it stands (the inputs a dynamic resource cannot make secret one by one).
It carries an alias to the dynamic resource's type, so a stack deployed by a release that registered the dynamic
resource moves to it by an update in place (docs/provider-package.md: reads only, the same job, id and labels).

`StackProvider` is the explicit provider of a stack file's jobs: its inputs are the stack's config as the dynamic
provider's `configure` is handed it (the library's keys and gcp:project / gcp:region, each as text; a secret one, or
one holding a credential the stack allows in plain text, secret) and the Pulumi organization, so the package judges
the stack's plan (its jobs in order against the quotas and reservations, training_job/plan.py) from the one config,
once per run, as the dynamic provider does, and labels each job with the identity TrainingJob gives it
(organization/project/stack/name). The inputs are the provider's, stored once in the state, not in any job's.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi

from gcp_training_jobs.jobspec.catalog.credentials import found_in
from gcp_training_jobs.jobspec.core.names import (
    DYNAMIC_JOB_TYPE,
    NAMESPACE,
    ORGANIZATION_INPUT,
    PACKAGE_JOB_TYPE,
    STACK_CONFIG_INPUT,
)
from gcp_training_jobs.resources.args import resolve_args
from gcp_training_jobs.resources.job_model.declared import INPUTS, OUTPUT_KEYS, TrainingJobArgs, TrainingJobOutputs
from gcp_training_jobs.resources.settings.pulumi_config import program_config
from gcp_training_jobs.resources.training_job import (
    CONCEALED_INPUTS,
    TrainingJob,
    check_args,
    concealed,
    fail_update,
)


class StackProvider(pulumi.ProviderResource):
    """The package's provider for a stack file's jobs, configured with the stack's config and organization."""

    def __init__(self, resource_name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        config = {key: pulumi.Output.secret(text) if secret or _holds_credential(text) else text
                  for key, (text, secret) in sorted(program_config().items())}
        given = {STACK_CONFIG_INPUT: config, ORGANIZATION_INPUT: pulumi.get_organization()}
        super().__init__(NAMESPACE, resource_name, given, opts)


def _holds_credential(text: str) -> bool:
    """Whether a config key's text (an object as JSON) holds a credential a stack allowed in plain text
    (`plaintextCredentials: allow`): that key goes to the provider secret, as the job's input holds it
    (catalog.credentials.found_in, the one walk)."""
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = text
    return bool(found_in(data))


class PackageTrainingJob(pulumi.CustomResource, TrainingJobOutputs):
    """A training job on Vertex AI (or AI Platform Training), as the package's resource: TrainingJob's arguments and
    outputs, served by the package's plugin."""

    def __init__(self, resource_name: str, args: TrainingJobArgs | None = None,
                 opts: pulumi.ResourceOptions | None = None, **kwargs: Any) -> None:
        args = resolve_args(TrainingJobArgs, args, kwargs)
        # the inputs a program gives (the package sets the name and the identity from the URN)
        props: dict[str, Any] = {declared.wire: getattr(args, declared.arg) for declared in INPUTS
                                 if declared.arg is not None}
        check_args(resource_name, props)
        for key in CONCEALED_INPUTS:
            props[key] = concealed(props[key])
        props.update({key: None for key in OUTPUT_KEYS})
        moved = pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=DYNAMIC_JOB_TYPE)])
        super().__init__(PACKAGE_JOB_TYPE, resource_name, props, pulumi.ResourceOptions.merge(opts, moved))
        self.waitFailure.apply(lambda failure: fail_update(resource_name, failure))


# The SDK reads a resource's own annotations to type what the engine answers (8.0 for an int: 8): TrainingJob's.
PackageTrainingJob.__annotations__ = TrainingJob.__annotations__
