"""GPU and TPU training jobs on Google Cloud as Pulumi resources: the library a Pulumi program imports.

    from components import TrainingBuckets, TrainingJob, TrainingJobArgs

Importing this package is cheap: every public name is imported on first use (PEP 562), so
`python -m components validate` never loads pulumi, pulumi_gcp or googleapiclient.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from components.jobspec.core.version import __version__ as __version__  # its one home (pyproject.toml reads it)

#: Public name -> the module that defines it.
_PUBLIC = {
    "TrainingJob": "components.resources.training_job",
    "TrainingJobArgs": "components.resources.training_job",
    "TrainingBuckets": "components.resources.storage",
    "TrainingBucketsArgs": "components.resources.storage",
    "TpuServiceAgent": "components.resources.tpu_access",
    "TpuServiceAgentArgs": "components.resources.tpu_access",
    "TrainerPackage": "components.resources.trainer_package",
    "TrainerPackageArgs": "components.resources.trainer_package",
    "ProjectServices": "components.resources.services",
    "ProjectServicesArgs": "components.resources.services",
    "build_stack": "components.resources.stack",
    "StackSettings": "components.resources.settings",
    "from_pulumi_config": "components.resources.settings",
    "load_stack_file": "components.resources.settings",
    "load_job": "components.jobspec.load",
    "render_body": "components.jobspec.render.bodies",
    "TrainingJobsError": "components.jobspec.core.errors",
    "SpecError": "components.jobspec.core.errors",
    "UnreadableError": "components.jobspec.core.errors",
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
    from components.jobspec.core.errors import SpecError, TrainingJobsError, UnreadableError
    from components.jobspec.load import load_job
    from components.jobspec.render.bodies import render_body
    from components.resources.services import ProjectServices, ProjectServicesArgs
    from components.resources.settings import StackSettings, from_pulumi_config, load_stack_file
    from components.resources.stack import build_stack
    from components.resources.storage import TrainingBuckets, TrainingBucketsArgs
    from components.resources.tpu_access import TpuServiceAgent, TpuServiceAgentArgs
    from components.resources.trainer_package import TrainerPackage, TrainerPackageArgs
    from components.resources.training_job import TrainingJob, TrainingJobArgs


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'components' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
