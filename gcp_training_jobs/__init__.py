"""GPU and TPU training jobs on Google Cloud as Pulumi resources: the library a Pulumi program imports.

    from gcp_training_jobs import TrainingBuckets, TrainingJob, TrainingJobArgs

Importing this package is cheap: every public name is imported on first use (PEP 562), so
`python -m components validate` never loads pulumi, pulumi_gcp or googleapiclient.
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gcp_training_jobs.jobspec.core.version import __version__ as __version__  # its one home (pyproject.toml reads it)

if TYPE_CHECKING:  # the public names and their modules: the one list of them (`_public` reads it at run time)
    from gcp_training_jobs.jobspec.core.errors import SpecError as SpecError
    from gcp_training_jobs.jobspec.core.errors import TrainingJobsError as TrainingJobsError
    from gcp_training_jobs.jobspec.core.errors import UnreadableError as UnreadableError
    from gcp_training_jobs.jobspec.load import load_job as load_job
    from gcp_training_jobs.jobspec.load import render_body as render_body
    from gcp_training_jobs.resources.package.resource import PackageTrainingJob as PackageTrainingJob
    from gcp_training_jobs.resources.services import ProjectServices as ProjectServices
    from gcp_training_jobs.resources.services import ProjectServicesArgs as ProjectServicesArgs
    from gcp_training_jobs.resources.settings import StackSettings as StackSettings
    from gcp_training_jobs.resources.settings import from_pulumi_config as from_pulumi_config
    from gcp_training_jobs.resources.settings import load_stack_file as load_stack_file
    from gcp_training_jobs.resources.stack import build_stack as build_stack
    from gcp_training_jobs.resources.storage import TrainingBuckets as TrainingBuckets
    from gcp_training_jobs.resources.storage import TrainingBucketsArgs as TrainingBucketsArgs
    from gcp_training_jobs.resources.tpu_access import TpuServiceAgent as TpuServiceAgent
    from gcp_training_jobs.resources.tpu_access import TpuServiceAgentArgs as TpuServiceAgentArgs
    from gcp_training_jobs.resources.trainer_package import TrainerPackage as TrainerPackage
    from gcp_training_jobs.resources.trainer_package import TrainerPackageArgs as TrainerPackageArgs
    from gcp_training_jobs.resources.training_job import TrainingJob as TrainingJob
    from gcp_training_jobs.resources.training_job import TrainingJobArgs as TrainingJobArgs


@functools.cache
def _public() -> dict[str, str]:
    """Public name -> the module that defines it, read from the imports under TYPE_CHECKING above (type checkers
    read them; at run time each name is imported on first use)."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                 and node.test.id == "TYPE_CHECKING")
    return {alias.name: str(node.module) for node in block.body if isinstance(node, ast.ImportFrom)
            for alias in node.names}


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return sorted(_public())
    module = _public().get(name)
    if module is None:
        raise AttributeError(f"module 'gcp_training_jobs' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(_public())
