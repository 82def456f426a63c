"""A job as a Vertex AI CustomJob body (aiplatform v1): a pure translation, no API calls.

A CustomJobSpec is carried over as the user gave it (every field, unchanged; only wrapped in the CustomJob
with its display name and labels). A trainingInput is translated on the worker pools of rules.pools: pool 0
the master (one replica), then workers, parameter servers and evaluators, with `{}` for an empty pool that a
later pool follows (Vertex numbers pools by role); legacy machine types become their Compute Engine
equivalents; a prebuilt runtime becomes the matching prebuilt container; a master beside its Cloud TPU
(BASIC_TPU, or one cloud_tpu worker) one cloud-tpu pool running the master's code (load.Judged warns of it). What
Vertex cannot express or refuses (rules.translate: the pool rules on the translation, container dates
included) is a SpecError naming the field, never a silent change. A job with hyperparameters is not a
CustomJob but a HyperparameterTuningJob (render.tuning_body): trial_job_spec is what each of its trials runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.translate.pools import CONTAINER, RUNTIME, TI, Pool
from gcp_training_jobs.jobspec.vocab.jobs import TuningJob, VertexJob
from gcp_training_jobs.jobspec.vocab.training_input import Job, TrainingInput


def _pool_body(pool: Pool, ti: TrainingInput) -> dict[str, Any]:
    if pool.empty:
        return {}
    machine: dict[str, Any] = {"machineType": pool.machine_type}
    if pool.accelerator_type:
        machine["acceleratorType"] = pool.accelerator_type
        machine["acceleratorCount"] = pool.accelerator_count
    body: dict[str, Any] = {"machineSpec": machine, "replicaCount": str(pool.replicas)}
    config = pool.config
    container = next((uri for _, uri, kind in pool.images if kind == CONTAINER), None)
    if container:
        spec: dict[str, Any] = {"imageUri": container}
        if config and config.container_command:
            spec["command"] = list(config.container_command)
        args = (config.container_args if config else None) or ti.args
        if args:
            spec["args"] = list(args)
        body["containerSpec"] = spec
    else:
        package: dict[str, Any] = {
            "executorImageUri": next((uri for _, uri, kind in pool.images if kind == RUNTIME), ""),
            "packageUris": list(ti.package_uris or []),
            "pythonModule": ti.python_module or "",
        }
        if ti.args:
            package["args"] = list(ti.args)
        body["pythonPackageSpec"] = package
    if pool.disk_type or pool.disk_size_gb:
        body["diskSpec"] = {k: v for k, v in (("bootDiskType", pool.disk_type),
                                              ("bootDiskSizeGb", pool.disk_size_gb)) if v}
    return body


def trial_job_spec(job: Job, pools: Sequence[Pool], untranslated: Sequence[Problem] = ()) -> dict[str, Any]:
    """A trainingInput's CustomJobSpec, hyperparameters aside: what each trial of its HyperparameterTuningJob
    runs (render.tuning_body). SpecError with everything Vertex cannot express."""
    return _training_input_spec(job, pools, untranslated, tuning=True)


def _training_input_spec(job: Job, pools: Sequence[Pool], untranslated: Sequence[Problem] = (), *,
                         tuning: bool = False) -> dict[str, Any]:
    """The CustomJobSpec of a trainingInput from its translation (`pools`, translated once where the job was
    judged, load.Judged; `untranslated`: what did not translate)."""
    ti = job.training_input
    problems: list[Problem] = list(untranslated)
    if ti.hyperparameters is not None and not tuning:
        problems.append(Problem(f"{TI}.hyperparameters", "makes the job a Vertex AI HyperparameterTuningJob, not a "
                                "CustomJob (render.tuning_body, backends.backend_for); allowed in a CustomJob: "
                                "unset"))
    sched = ti.scheduling
    if sched and sched.priority is not None:
        problems.append(Problem(f"{TI}.scheduling.priority", "has no Vertex AI equivalent; allowed: unset"))
    if problems:
        raise SpecError(problems)
    spec: dict[str, Any] = {"workerPoolSpecs": [_pool_body(pool, ti) for pool in pools]}
    if ti.job_dir:
        spec["baseOutputDirectory"] = {"outputUriPrefix": ti.job_dir}
    if sched and sched.max_running_time:
        # maxWaitTime is not sent: Vertex applies maxWaitDuration only under FLEX_START, which a trainingInput never
        # runs as (translate.training_input.wait_left_out, the warning that says so)
        spec["scheduling"] = {"timeout": sched.max_running_time}
    for key, value in (("serviceAccount", ti.service_account), ("network", ti.network),
                       ("enableWebAccess", ti.enable_web_access)):
        if value is not None:
            spec[key] = value
    return spec


def custom_job_body(job: Job | VertexJob | TuningJob, display_name: str, labels: dict[str, str], *,
                    pools: Sequence[Pool], untranslated: Sequence[Problem] = ()) -> dict[str, Any]:
    """The Vertex CustomJob for a validated job, or SpecError with everything Vertex cannot express (for a
    trainingInput; a CustomJobSpec was judged when it was loaded and is carried over unchanged)."""
    if isinstance(job, TuningJob):
        raise SpecError([Problem("studySpec", "a tuning config is a Vertex AI HyperparameterTuningJob, not a "
                                 "CustomJob (render.tuning_body, backends.backend_for); allowed in a CustomJob: a "
                                 "CustomJobSpec")])
    if isinstance(job, VertexJob):
        from gcp_training_jobs.jobspec.vocab.custom_job import spec_body  # imported already: job.spec is its model

        body: dict[str, Any] = {"displayName": display_name, "jobSpec": spec_body(job.spec)}
        if labels:
            body["labels"] = labels
        return body
    body = {"displayName": display_name, "jobSpec": _training_input_spec(job, pools, untranslated)}
    if labels:
        body["labels"] = labels
    ti = job.training_input
    kms = ti.encryption_config.kms_key_name if ti.encryption_config else None
    if kms:
        body["encryptionSpec"] = {"kmsKeyName": kms}
    return body
