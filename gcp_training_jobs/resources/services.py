"""ProjectServices: the Google APIs a stack needs, enabled in its project.

Only what the stack uses: Cloud Storage always (the buckets); AI Platform Training (ml) or Vertex AI
(aiplatform) for the backend, ml also for the TPU service account lookup (projects.getConfig); Cloud Quotas on
Vertex AI (the quota check reads the limits there, else from Service Usage with a warning); Cloud
Resource Manager when the stack grants a role on the project (IAM policy reads and writes go through
it). Service Usage itself must already be on (nothing can enable it through itself).

Destroying a stack never turns an API off (`disable_on_destroy=False`): other stacks and people in the
project may use it, and disabling an API can delete their resources.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from gcp_training_jobs.jobspec.core.names import VERTEX_SERVICE
from gcp_training_jobs.resources.args import resolve_args

TYPE = "gcp-training:index:ProjectServices"

STORAGE = "storage.googleapis.com"
ML = "ml.googleapis.com"
AIPLATFORM = VERTEX_SERVICE
RESOURCE_MANAGER = "cloudresourcemanager.googleapis.com"
CLOUD_QUOTAS = "cloudquotas.googleapis.com"
BACKEND_APIS = {"ai-platform": ML, "vertex": AIPLATFORM}


def required_apis(backend: str, *, grants_role: bool, looks_up_tpu_account: bool) -> list[str]:
    """The APIs a stack with this backend needs, in a stable order."""
    apis = [STORAGE, BACKEND_APIS[backend]]
    if backend == "vertex":
        apis.append(CLOUD_QUOTAS)
    if looks_up_tpu_account:
        apis.append(ML)
    if grants_role:
        apis.append(RESOURCE_MANAGER)
    return list(dict.fromkeys(apis))


@dataclass
class ProjectServicesArgs:
    """Which APIs, in which project."""

    project: pulumi.Input[str]
    """The Google Cloud project the APIs are enabled in."""
    services: tuple[str, ...]
    """Service names, e.g. storage.googleapis.com."""


class ProjectServices(pulumi.ComponentResource):
    """One gcp.projects.Service per API; depend on this component to wait until all are on."""

    services: dict[str, gcp.projects.Service]
    """Service name -> its resource."""

    def __init__(self, name: str, args: ProjectServicesArgs | None = None, opts: pulumi.ResourceOptions | None = None,
                 **kwargs: Any) -> None:
        args = resolve_args(ProjectServicesArgs, args, kwargs)
        super().__init__(TYPE, name, None, opts)
        self.services = {
            service: gcp.projects.Service(
                f"{name}-{service.split('.')[0]}",
                project=args.project,
                service=service,
                disable_on_destroy=False,
                disable_dependent_services=False,
                opts=pulumi.ResourceOptions(parent=self),
            )
            for service in args.services
        }
        self.register_outputs({"services": list(self.services)})
