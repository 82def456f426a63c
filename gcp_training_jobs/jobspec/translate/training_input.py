"""A trainingInput translated as Vertex AI would run it: pool 0 the master, then workers, parameter servers and
evaluators (catalog.ROLES); legacy types as their Compute Engine equivalents; a runtime version as its prebuilt
TensorFlow container; a master beside its Cloud TPU as the one cloud-tpu pool, running the master's code. Each role's
machine is read once, as AI Platform ran it (translate.pools.written_machine); what has no translation is a Problem
naming the field, what the translation leaves out a warning.
"""

from __future__ import annotations

from dataclasses import replace

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.problems import Problem, allowed
from gcp_training_jobs.jobspec.translate.pools import (
    CONTAINER,
    RUNTIME,
    TI,
    Pool,
    RoleMachine,
    scale_tier,
    written_machine,
)
from gcp_training_jobs.jobspec.vocab.training_input import TrainingInput


def _host(ti: TrainingInput) -> str:
    return catalog.VERTEX_CONTAINER_HOSTS.get((ti.region or "us").split("-")[0], "us-docker.pkg.dev")


def _runtime_image(ti: TrainingInput, gpu: bool, problems: list[Problem]) -> str | None:
    """The prebuilt TensorFlow container of the job's runtime version (catalog.VERTEX_TF_CONTAINERS)."""
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


def _tpu_image(ti: TrainingInput, problems: list[Problem]) -> str | None:
    if ti.runtime_version is None:
        return f"{_host(ti)}/vertex-ai/training/{catalog.VERTEX_DEFAULT_TPU_IMAGE}:latest"
    problems.append(Problem(f"{TI}.runtimeVersion", f"{ti.runtime_version}: Vertex AI has no prebuilt TPU "
                            "container for AI Platform runtimes (its TPU images start at TensorFlow 2.12); allowed: "
                            "a custom container in masterConfig.imageUri, no runtimeVersion (tf-tpu.2-12), or "
                            "backend ai-platform"))
    return None


def _legacy(m: RoleMachine, problems: list[Problem]) -> RoleMachine | None:
    """A legacy type as the Compute Engine machine it ran on, with its built-in GPUs."""
    mt = str(m.machine_type)
    base = catalog.legacy_equivalent(mt)
    if base is None:
        problems.append(Problem(m.where, f"legacy machine type {mt} has no documented Compute Engine equivalent "
                                "on Vertex AI; allowed: a Compute Engine type such as n1-highcpu-16"))
        return None
    builtin = catalog.LEGACY_GPUS.get(mt)
    return replace(m, machine_type=base, accelerator_type=builtin[0] if builtin else None,
                   accelerator_count=builtin[1] if builtin else None, accelerator_at=m.where, count_at=m.where)


def _machine(role: str, ti: TrainingInput, problems: list[Problem]) -> RoleMachine | None:
    """The machine of one role, translated; None where the role has no replicas or cannot translate."""
    m = written_machine(role, ti)
    if m is None:
        return None
    tier = scale_tier(ti)
    if m.machine_type is None:
        problems.append(Problem(m.where, f"{tier} has no documented machine composition, so it has no Vertex AI "
                                "equivalent; allowed on Vertex: BASIC, BASIC_TPU (with a custom container) or "
                                "CUSTOM with explicit types"))
        return None
    if m.machine_type == catalog.CLOUD_TPU:
        return replace(m, machine_type=catalog.CLOUD_TPU_MACHINE)
    if tier != "CUSTOM" or m.machine_type in catalog.LEGACY_GPUS:
        return _legacy(m, problems)
    return m


def _master_beside_tpu(ti: TrainingInput) -> tuple[str, str] | None:
    """(where, what) of the master of a job whose only other task is its Cloud TPU worker: BASIC_TPU (a `standard`
    master beside a Cloud TPU, catalog.TIER_MACHINES), or CUSTOM with cloud_tpu workers and no parameter server or
    evaluator (the AI Platform Training TPU guide's two shapes). On Vertex AI the TPU VM runs the code itself, so that
    master is not used."""
    machines = {role: m for role in catalog.ROLES if (m := written_machine(role, ti)) is not None}
    master, worker = machines.get("master"), machines.get("worker")
    if set(machines) != {"master", "worker"} or worker is None or worker.machine_type != catalog.CLOUD_TPU \
            or master is None or master.machine_type in (catalog.CLOUD_TPU, None):
        return None
    tier = scale_tier(ti)
    if tier != "CUSTOM":
        return f"{TI}.scaleTier", f"{tier}'s {master.machine_type} master"
    acc = ti.master_config.accelerator_config if ti.master_config else None
    gpus = f" with {acc.count if acc.count is not None else '?'} {acc.type}" if acc and acc.type else ""
    return f"{TI}.masterType", f"the master {master.machine_type}{gpus}"


def _tpu_alone(ti: TrainingInput, problems: list[Problem],
               warnings: list[Problem] | None) -> list[tuple[str, RoleMachine | None]] | None:
    """A master beside its Cloud TPU as Vertex AI runs it: the one cloud-tpu pool, in the master's place and
    with the master's code (its container, command, args and disk: what ran the training on AI Platform), and a
    warning naming the master left out. None for any other job."""
    unused = _master_beside_tpu(ti)
    if unused is None:
        return None
    tpu = _machine("worker", ti, problems)
    if tpu is None:
        return None
    worker = ti.role_config("worker")
    if worker and worker.tpu_tf_version:
        problems.append(Problem(f"{TI}.workerConfig.tpuTfVersion", "has no Vertex AI equivalent (TPU VM images "
                                "carry their own TensorFlow); allowed: unset"))
    if warnings is not None:
        where, master = unused
        warnings.append(Problem(where, f"{master} is not used on Vertex AI: there the TPU VM runs the code itself, "
                                f"so the job is one {catalog.CLOUD_TPU_MACHINE} pool ({tpu.accelerator_count} "
                                f"{tpu.accelerator_type} cores) running the master's code; AI Platform Training ran "
                                "that master beside the TPU"))
    return [("master", tpu)]


def wait_left_out(max_wait_time: str) -> Problem:
    """The warning of a trainingInput's `scheduling.maxWaitTime` on Vertex AI: Vertex applies a wait limit
    (`maxWaitDuration`) only to a FLEX_START job (the discovery document's Scheduling.maxWaitDuration), and a
    trainingInput has no strategy there (it runs as STANDARD), so the limit is not sent (render.custom_job)."""
    return Problem(f"{TI}.scheduling.maxWaitTime", f"{max_wait_time} is not kept on Vertex AI: its wait limit "
                   "(scheduling.maxWaitDuration) applies only to a FLEX_START job, and a trainingInput runs as "
                   "STANDARD there; the job waits for capacity as long as Vertex AI queues it. To bound the wait, "
                   "write the job as a jobSpec with scheduling.strategy FLEX_START and maxWaitDuration")


def training_input_pools(ti: TrainingInput, problems: list[Problem],
                         warnings: list[Problem] | None = None) -> list[Pool]:
    """The Vertex AI pools of a trainingInput (an empty pool where a later role follows), appending to
    `problems` what has no Vertex AI translation and to `warnings` what the translation leaves out."""
    machines = _tpu_alone(ti, problems, warnings) or [(role, _machine(role, ti, problems)) for role in catalog.ROLES]
    if warnings is not None and ti.scheduling is not None and ti.scheduling.max_wait_time:
        warnings.append(wait_left_out(ti.scheduling.max_wait_time))
    last = max((i for i, (_, m) in enumerate(machines) if m is not None), default=-1)
    master_image = ti.master_config.image_uri if ti.master_config else None
    pools: list[Pool] = []
    for index, (role, m) in enumerate(machines[: last + 1]):
        if m is None:
            pools.append(Pool(index, f"{TI}.{role}Type", empty=True, role=role))
            continue
        config = ti.role_config(role)
        image = (config.image_uri if config else None) or master_image or _tpu_worker_image(ti, m)
        if config and config.tpu_tf_version:
            problems.append(Problem(f"{TI}.{role}Config.tpuTfVersion", "has no Vertex AI equivalent (TPU VM "
                                    "images carry their own TensorFlow); allowed: unset"))
        images: tuple[tuple[str, str, str], ...] = ()
        if image:
            at = (f"{TI}.{role}Config.imageUri" if config and config.image_uri else
                  f"{TI}.masterConfig.imageUri" if master_image else f"{TI}.workerConfig.imageUri")
            images = ((at, image, CONTAINER),)
        else:
            prebuilt = (_tpu_image(ti, problems) if m.machine_type == catalog.CLOUD_TPU_MACHINE
                        else _runtime_image(ti, bool(m.accelerator_type), problems))
            if prebuilt:
                images = ((f"{TI}.runtimeVersion", prebuilt, RUNTIME),)
        disk = config.disk_config if config else None
        disk_at = f"{TI}.{role}Config.diskConfig"
        count_at = m.replicas_at
        pools.append(Pool(
            index, m.where,
            machine_type=m.machine_type, accelerator_type=m.accelerator_type, accelerator_count=m.accelerator_count,
            replicas=m.replicas,
            disk_type=disk.boot_disk_type if disk else None, disk_size_gb=disk.boot_disk_size_gb if disk else None,
            code=("containerSpec",) if image else ("pythonPackageSpec",),
            images=images,
            paths={"machineType": m.where, "acceleratorType": m.accelerator_at, "acceleratorCount": m.count_at,
                   "replicaCount": count_at, "bootDiskType": f"{disk_at}.bootDiskType",
                   "bootDiskSizeGb": f"{disk_at}.bootDiskSizeGb"},
            role=role, config=config, custom_container_field="masterConfig.imageUri",
        ))
    return pools


def _tpu_worker_image(ti: TrainingInput, m: RoleMachine) -> str | None:
    """A Cloud TPU worker's own container, for the one cloud-tpu pool of a job whose master gives none."""
    worker = ti.role_config("worker")
    return worker.image_uri if m.machine_type == catalog.CLOUD_TPU_MACHINE and worker else None
