"""TpuServiceAgent: lets Cloud TPU act for AI Platform Training in the project (the AI Platform Training
TPU guide, https://cloud.google.com/ai-platform/training/docs/using-tpus).

The guide's two steps, as resources: (1) `projects.getConfig` names the project's Cloud TPU service
account (`config.tpuServiceAccount`) — a small dynamic resource, TpuServiceAccount, looks it up at apply
unless the config names it; (2) that account gets `roles/ml.serviceAgent` on the project through
`gcp.projects.IAMMember`, which adds one member to one role. Never IAMBinding or IAMPolicy: both own
the whole role (or policy) and would remove every member this stack does not know about.

The lookup's provider is pickled into Pulumi state (see ARCHITECTURE.md): it keeps only the endpoint
override read in `configure`, and builds its API client (cached in gcp_training_jobs.backends.transport)
inside each method.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp
from pulumi.dynamic import (
    CheckFailure,
    CheckResult,
    CreateResult,
    DiffResult,
    ReadResult,
    Resource,
    UpdateResult,
)

from gcp_training_jobs.resources.args import resolve_args
from gcp_training_jobs.resources.provider_base import EndpointProvider, environment_failures

TYPE = "gcp-training:index:TpuServiceAgent"
#: The role the TPU guide grants the TPU service account ("Agente de serviço do Cloud ML").
ROLE = "roles/ml.serviceAgent"


class TpuServiceAccountProvider(EndpointProvider):
    """Reads `config.tpuServiceAccount` from projects.getConfig; nothing is created or deleted."""

    def _lookup(self, project: str) -> dict[str, Any]:
        from gcp_training_jobs.backends.ml_v1 import project_config

        answer = project_config(project, self._endpoint())
        account = (answer.get("config") or {}).get("tpuServiceAccount")
        if not account:
            raise RuntimeError(f"projects.getConfig for {project} returned no config.tpuServiceAccount; set "
                               "gcp-training-jobs:tpuAccess.serviceAccount to the Cloud TPU service account")
        return {"project": project, "serviceAccount": str(account)}

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        failures = [] if news.get("project") else [CheckFailure("project", "required: the Google Cloud project")]
        failures += environment_failures()
        return CheckResult(news, self._refused("TpuServiceAccount", "lookup", failures))

    def create(self, props: dict[str, Any]) -> CreateResult:
        outs = self._lookup(str(props["project"]))
        return CreateResult(f"projects/{outs['project']}/tpuServiceAccount", outs)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_, self._lookup(str(props.get("project") or id_.split("/")[1])))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = olds.get("project") != news.get("project")
        return DiffResult(changes=changed, replaces=["project"] if changed else [], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(self._lookup(str(news["project"])))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """A lookup owns nothing: deleting it changes nothing in Google Cloud."""


class TpuServiceAccount(Resource, module="training", name="TpuServiceAccount"):
    """The project's Cloud TPU service account, from projects.getConfig (AI Platform Training v1)."""

    project: pulumi.Output[str]
    serviceAccount: pulumi.Output[str]  # noqa: N815 - the output's property name
    """The Cloud TPU service account's email (service-NUMBER@cloud-tpu.iam.gserviceaccount.com)."""

    def __init__(self, resource_name: str, project: pulumi.Input[str],
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TpuServiceAccountProvider(), resource_name,
                         {"project": project, "serviceAccount": None}, opts)


@dataclass
class TpuServiceAgentArgs:
    """Whose TPU service account gets the role."""

    project: pulumi.Input[str]
    """The Google Cloud project the role is granted on (and whose TPU service account is looked up)."""
    service_account: str | None = None
    """The TPU service account's email if known; None: looked up with projects.getConfig at apply."""


class TpuServiceAgent(pulumi.ComponentResource):
    """roles/ml.serviceAgent for the project's Cloud TPU service account, added to the project's policy."""

    service_account: pulumi.Output[str]
    """The TPU service account's email."""
    member: gcp.projects.IAMMember
    """The grant (one member of one role; other members of the role are untouched)."""
    lookup: TpuServiceAccount | None
    """The getConfig lookup, when the service account was not given."""

    def __init__(self, name: str, args: TpuServiceAgentArgs | None = None, opts: pulumi.ResourceOptions | None = None,
                 **kwargs: Any) -> None:
        args = resolve_args(TpuServiceAgentArgs, args, kwargs)
        super().__init__(TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        if args.service_account:
            self.lookup = None
            self.service_account = pulumi.Output.from_input(args.service_account)
        else:
            self.lookup = TpuServiceAccount(f"{name}-lookup", args.project, opts=child)
            self.service_account = self.lookup.serviceAccount
        self.member = gcp.projects.IAMMember(
            f"{name}-ml-service-agent",
            project=args.project,
            role=ROLE,
            member=self.service_account.apply(lambda email: f"serviceAccount:{email}"),
            opts=child,
        )
        self.register_outputs({"serviceAccount": self.service_account, "role": ROLE})
