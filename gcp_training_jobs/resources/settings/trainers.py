"""`gcp-training-jobs:jobs.NAME.trainer`: a job's trainer folder in the checkout checked against the job: it holds
the module(s) the job runs, and it goes with a Python package job, not a container image."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gcp_training_jobs.jobspec.core.names import JOB_SPEC, TRAINING_INPUT, TUNING_JOB
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.io.vocabulary import pool_path
from gcp_training_jobs.resources.settings.model import JobSettings


def trainer_problems(settings: JobSettings, root: Path) -> list[Problem]:
    """A built trainer must hold the job's module(s), and cannot go with a container image."""
    trainer = settings.trainer
    if trainer is None:
        return []
    if settings.job_spec is not None or settings.tuning_job is not None:
        return _custom_trainer_problems(settings, root)
    ti = settings.training_input or {}
    master = ti.get("masterConfig")
    image = master.get("imageUri") if isinstance(master, dict) else None
    if image:
        return [Problem("trainer", f"is set with trainingInput.masterConfig.imageUri {image!r}; a container job "
                        "carries its code in the image; allowed: one of trainer or imageUri")]
    return _module_problem(trainer, root, ti.get("pythonModule"), f"{TRAINING_INPUT}.pythonModule")


def _custom_trainer_problems(settings: JobSettings, root: Path) -> list[Problem]:
    """A trainer with a jobSpec goes into its pythonPackageSpec pools, each running a module of it."""
    assert settings.trainer is not None
    trial = (settings.tuning_job or {}).get("trialJobSpec")
    spec, at = (settings.job_spec, JOB_SPEC) if settings.job_spec is not None else \
        (trial if isinstance(trial, dict) else {}, f"{TUNING_JOB}.trialJobSpec")
    pools = (spec or {}).get("workerPoolSpecs")
    single = isinstance(pools, dict)
    listed = [pools] if single else pools if isinstance(pools, list) else []
    problems: list[Problem] = []
    packaged = 0
    for index, pool in enumerate(listed):
        package = pool.get("pythonPackageSpec") if isinstance(pool, dict) else None
        if not isinstance(package, dict):
            continue
        packaged += 1
        where = f"{at}.{pool_path(index, single)}.pythonPackageSpec.pythonModule"
        problems += _module_problem(settings.trainer, root, package.get("pythonModule"), where)
    if not packaged:
        problems.append(Problem("trainer", f"is set, but no pool of {at} runs a Python package (a container "
                                "carries its code in the image); allowed: a pythonPackageSpec pool, or no trainer"))
    return problems


def _module_problem(trainer: Any, root: Path, module: Any, where: str) -> list[Problem]:
    if isinstance(module, str) and module and not trainer.has_module(root, module):
        return [Problem(where, f"{module!r} is not a module of trainer {trainer.path} (no {module.replace('.', '/')}"
                        ".py in it); allowed: a module of the trainer package, e.g. trainer.task")]
    return []
