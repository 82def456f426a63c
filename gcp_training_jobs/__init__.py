"""GPU and TPU training jobs on Google Cloud as Pulumi resources: the library a Pulumi program imports.

    from gcp_training_jobs import TrainingBuckets, TrainingJob, TrainingJobArgs

Importing this package is cheap: every public name is imported on first use (PEP 562), so
`python -m components validate` never loads pulumi, pulumi_gcp or googleapiclient.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gcp_training_jobs.jobspec.core.version import __version__ as __version__  # its one home (pyproject.toml reads it)

#: Public name -> the module that defines it.
_PUBLIC = {
    "TrainingJob": "gcp_training_jobs.resources.training_job",
    "TrainingJobArgs": "gcp_training_jobs.resources.training_job",
    "TrainingBuckets": "gcp_training_jobs.resources.storage",
    "TrainingBucketsArgs": "gcp_training_jobs.resources.storage",
    "TpuServiceAgent": "gcp_training_jobs.resources.tpu_access",
    "TpuServiceAgentArgs": "gcp_training_jobs.resources.tpu_access",
    "TrainerPackage": "gcp_training_jobs.resources.trainer_package",
    "TrainerPackageArgs": "gcp_training_jobs.resources.trainer_package",
    "ProjectServices": "gcp_training_jobs.resources.services",
    "ProjectServicesArgs": "gcp_training_jobs.resources.services",
    "build_stack": "gcp_training_jobs.resources.stack",
    "StackSettings": "gcp_training_jobs.resources.settings",
    "from_pulumi_config": "gcp_training_jobs.resources.settings",
    "load_stack_file": "gcp_training_jobs.resources.settings",
    "load_job": "gcp_training_jobs.jobspec.load",
    "render_body": "gcp_training_jobs.jobspec.render.bodies",
    "TrainingJobsError": "gcp_training_jobs.jobspec.core.errors",
    "SpecError": "gcp_training_jobs.jobspec.core.errors",
    "UnreadableError": "gcp_training_jobs.jobspec.core.errors",
}

__all__ = [
    "ProjectServices",
    "ProjectServicesArgs",
    "SpecError",
    "StackSettings",
    "TpuServiceAgent",
    "TpuServiceAgentArgs",
    "TrainerPackage",
    "TrainerPackageArgs",
    "TrainingBuckets",
    "TrainingBucketsArgs",
    "TrainingJob",
    "TrainingJobArgs",
    "TrainingJobsError",
    "UnreadableError",
    "build_stack",
    "from_pulumi_config",
    "load_job",
    "load_stack_file",
    "render_body",
]

if TYPE_CHECKING:
    from gcp_training_jobs.jobspec.core.errors import SpecError, TrainingJobsError, UnreadableError
    from gcp_training_jobs.jobspec.load import load_job
    from gcp_training_jobs.jobspec.render.bodies import render_body
    from gcp_training_jobs.resources.services import ProjectServices, ProjectServicesArgs
    from gcp_training_jobs.resources.settings import StackSettings, from_pulumi_config, load_stack_file
    from gcp_training_jobs.resources.stack import build_stack
    from gcp_training_jobs.resources.storage import TrainingBuckets, TrainingBucketsArgs
    from gcp_training_jobs.resources.tpu_access import TpuServiceAgent, TpuServiceAgentArgs
    from gcp_training_jobs.resources.trainer_package import TrainerPackage, TrainerPackageArgs
    from gcp_training_jobs.resources.training_job import TrainingJob, TrainingJobArgs


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'gcp_training_jobs' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
