"""The seeds' trainingInput as a Vertex AI CustomJob body (aiplatform v1): a pure translation, no API calls.

Translation: pool 0 is the master (one replica), then workers, parameter servers and evaluators, with `{}`
for an empty pool that a later pool follows (Vertex numbers pools by role). Legacy machine types become
their Compute Engine equivalents (catalog.legacy_equivalent); a prebuilt runtime becomes the matching
prebuilt container (catalog.VERTEX_TF_CONTAINERS); what Vertex cannot express is a SpecError naming the
field, never a silent change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.jobspec import catalog
from components.jobspec.errors import SpecError
from components.jobspec.models import Job, ReplicaConfig, TrainingInput
from components.jobspec.problems import Problem, allowed
from components.jobspec.rules import TI, scale_tier


@dataclass(frozen=True)
class Machine:
    """One pool's machine: a Compute Engine type and its accelerators, and where it came from."""

    machine_type: str
    accelerator_type: str | None
    accelerator_count: int | None
    replicas: int
    config: ReplicaConfig | None
    path: str  # the field the machine was written in, for messages


def _machine(role: str, ti: TrainingInput, problems: list[Problem]) -> Machine | None:
    """The machine of one role, translated; None where the role has no replicas or cannot translate."""
    tier = scale_tier(ti)
    config = ti.role_config(role)
    if tier != "CUSTOM":
        if tier in ("STANDARD_1", "PREMIUM_1"):
            if role == "master":
                problems.append(Problem(f"{TI}.scaleTier", f"{tier} has no documented machine composition, "
                                        "so it has no Vertex AI equivalent; allowed on Vertex: BASIC, "
                                        "BASIC_TPU (with a custom container) or CUSTOM with explicit types"))
            return None
        if role == "master":
            return _legacy(catalog.TIER_MASTER[tier], 1, config, f"{TI}.scaleTier", problems)
        if role == "worker" and tier == "BASIC_TPU":
            return Machine(catalog.VERTEX_TPU_MACHINE, catalog.TPU_V2, catalog.TPU_CORES, 1, config,
                           f"{TI}.scaleTier")
        return None
    mt, count = ti.role_type(role), ti.role_count(role) or 0
    if mt is None or count <= 0:
        return None
    path = f"{TI}.{role}Type"
    if mt == catalog.CLOUD_TPU:
        acc = config.accelerator_config if config else None
        kind = acc.type if acc and acc.type else catalog.TPU_V2
        return Machine(catalog.VERTEX_TPU_MACHINE, kind, catalog.TPU_CORES, count, config, path)
    if mt in catalog.LEGACY_GPUS:
        return _legacy(mt, count, config, path, problems)
    acc = config.accelerator_config if config else None
    return Machine(mt, acc.type if acc else None, acc.count if acc else None, count, config, path)


def _legacy(mt: str, count: int, config: ReplicaConfig | None, path: str, problems: list[Problem]) -> Machine | None:
    base = catalog.legacy_equivalent(mt)
    if base is None:
        problems.append(Problem(path, f"legacy machine type {mt} has no documented Compute Engine equivalent "
                                "on Vertex AI; allowed: a Compute Engine type such as n1-highcpu-16"))
        return None
    builtin = catalog.LEGACY_GPUS.get(mt)
    return Machine(base, builtin[0] if builtin else None, builtin[1] if builtin else None, count, config, path)


def _host(ti: TrainingInput) -> str:
    return catalog.VERTEX_CONTAINER_HOSTS.get((ti.region or "us").split("-")[0], "us-docker.pkg.dev")


def _executor_image(ti: TrainingInput, gpu: bool, problems: list[Problem]) -> str | None:
    runtime = ti.runtime_version or catalog.VERTEX_DEFAULT_RUNTIME
    tag = catalog.VERTEX_TF_CONTAINERS.get(runtime)
    if tag is None:
        problems.append(Problem(f"{TI}.runtimeVersion", f"{runtime}: Vertex AI has no prebuilt "
                                f"training container for this runtime; allowed: "
                                f"{allowed(catalog.VERTEX_TF_CONTAINERS)}, or a custom container in "
                                "masterConfig.imageUri"))
        return None
    if ti.python_version not in (None, catalog.VERTEX_CONTAINER_PYTHON):
        problems.append(Problem(f"{TI}.pythonVersion", f"{ti.python_version}: Vertex AI's prebuilt containers "
                                f"for runtime {runtime} run Python {catalog.VERTEX_CONTAINER_PYTHON}; allowed: "
                                f"{catalog.VERTEX_CONTAINER_PYTHON}"))
        return None
    return f"{_host(ti)}/vertex-ai/training/tf-{'gpu' if gpu else 'cpu'}.{tag}:latest"


def _pool(machine: Machine, ti: TrainingInput, problems: list[Problem]) -> dict[str, Any]:
    spec: dict[str, Any] = {"machineType": machine.machine_type}
    if machine.accelerator_type:
        retired = catalog.VERTEX_RETIRED_ACCELERATORS.get(machine.accelerator_type)
        if retired:
            problems.append(Problem(machine.path, f"{machine.accelerator_type} is not offered by Vertex AI: "
                                    f"{retired}; allowed: "
                                    f"{allowed(t for t in catalog.GPU_TYPES if t != catalog.K80)}"))
        spec["acceleratorType"] = machine.accelerator_type
        spec["acceleratorCount"] = machine.accelerator_count
    pool: dict[str, Any] = {"machineSpec": spec, "replicaCount": str(machine.replicas)}
    config = machine.config
    master_image = ti.master_config.image_uri if ti.master_config else None
    image = (config.image_uri if config else None) or master_image
    if config and config.tpu_tf_version:
        problems.append(Problem(f"{machine.path.replace('Type', 'Config')}.tpuTfVersion", "has no Vertex AI "
                                "equivalent (TPU VM images carry their own TensorFlow); allowed: unset"))
    if image:
        container: dict[str, Any] = {"imageUri": image}
        if config and config.container_command:
            container["command"] = list(config.container_command)
        args = (config.container_args if config else None) or ti.args
        if args:
            container["args"] = list(args)
        pool["containerSpec"] = container
    else:
        if machine.machine_type != catalog.VERTEX_TPU_MACHINE:
            executor = _executor_image(ti, bool(machine.accelerator_type), problems)
        elif ti.runtime_version is None:
            executor = f"{_host(ti)}/vertex-ai/training/{catalog.VERTEX_DEFAULT_TPU_IMAGE}:latest"
        else:
            executor = None
            problems.append(Problem(f"{TI}.runtimeVersion", f"{ti.runtime_version}: Vertex AI has no "
                                    "prebuilt TPU container for AI Platform runtimes (its TPU images start at "
                                    "TensorFlow 2.12); allowed: a custom container in masterConfig.imageUri, "
                                    "no runtimeVersion (tf-tpu.2-12), or backend ai-platform"))
        package: dict[str, Any] = {
            "executorImageUri": executor or "",
            "packageUris": list(ti.package_uris or []),
            "pythonModule": ti.python_module or "",
        }
        if ti.args:
            package["args"] = list(ti.args)
        pool["pythonPackageSpec"] = package
    disk = config.disk_config if config else None
    if disk and (disk.boot_disk_type or disk.boot_disk_size_gb):
        pool["diskSpec"] = {k: v for k, v in (("bootDiskType", disk.boot_disk_type),
                                              ("bootDiskSizeGb", disk.boot_disk_size_gb)) if v}
    return pool


def custom_job_body(job: Job, display_name: str, labels: dict[str, str]) -> dict[str, Any]:
    """The Vertex CustomJob for a validated job, or SpecError with everything Vertex cannot express."""
    ti = job.training_input
    problems: list[Problem] = []
    machines = [_machine(role, ti, problems) for role in catalog.ROLES]
    last = max((i for i, m in enumerate(machines) if m is not None), default=-1)
    pools = [_pool(m, ti, problems) if m else {} for m in machines[: last + 1]]
    if ti.hyperparameters is not None:
        problems.append(Problem(f"{TI}.hyperparameters", "hyperparameter tuning is a separate Vertex AI "
                                "resource (HyperparameterTuningJob) that this backend does not create; "
                                "allowed on Vertex: unset"))
    sched = ti.scheduling
    if sched and sched.priority is not None:
        problems.append(Problem(f"{TI}.scheduling.priority", "has no Vertex AI equivalent; allowed: unset"))
    if problems:
        raise SpecError(problems)
    spec: dict[str, Any] = {"workerPoolSpecs": pools}
    if ti.job_dir:
        spec["baseOutputDirectory"] = {"outputUriPrefix": ti.job_dir}
    if sched and (sched.max_running_time or sched.max_wait_time):
        spec["scheduling"] = {k: v for k, v in (("timeout", sched.max_running_time),
                                                ("maxWaitDuration", sched.max_wait_time)) if v}
    for key, value in (("serviceAccount", ti.service_account), ("network", ti.network),
                       ("enableWebAccess", ti.enable_web_access)):
        if value is not None:
            spec[key] = value
    body: dict[str, Any] = {"displayName": display_name, "jobSpec": spec}
    if labels:
        body["labels"] = labels
    kms = ti.encryption_config.kms_key_name if ti.encryption_config else None
    if kms:
        body["encryptionSpec"] = {"kmsKeyName": kms}
    return body
