"""Rules on the cluster's shape: scale tier, region, machine types and roles, and the code it runs."""

from __future__ import annotations

from collections.abc import Iterator

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.problems import Problem, allowed
from gcp_training_jobs.jobspec.rules.regions import region_choices, region_problem
from gcp_training_jobs.jobspec.rules.tasks import TI, Options, scale_tier, tasks
from gcp_training_jobs.jobspec.vocab.training_input import Job


def rule_scale_tier(job: Job, opts: Options) -> Iterator[Problem]:
    ti = job.training_input
    if ti.scale_tier is not None and ti.scale_tier not in catalog.SCALE_TIERS:
        yield Problem(f"{TI}.scaleTier", f"{ti.scale_tier!r} is not a scale tier; allowed: "
                      f"{allowed(catalog.SCALE_TIERS)}")


def rule_region(job: Job, opts: Options) -> Iterator[Problem]:
    """A region is given (or comes from --region); on AI Platform, one of its training regions (rules.regions, the
    one region rule; on Vertex AI the pool rules ask it on the translation)."""
    region = job.training_input.region
    if region is None and opts.partial:
        return
    if region is None:
        yield Problem(f"{TI}.region", "required (or pass --region); allowed: "
                      f"{region_choices('us-central1', opts.backend)}")
    elif not opts.vertex and (refused := region_problem(region, f"{TI}.region", opts.backend)) is not None:
        yield refused


def rule_cluster_shape(job: Job, opts: Options) -> Iterator[Problem]:
    """CUSTOM needs masterType; types and counts only under CUSTOM; a count needs its type."""
    ti = job.training_input
    tier = scale_tier(ti)
    if tier not in catalog.SCALE_TIERS:
        return
    for task in tasks(ti):
        if tier != "CUSTOM":
            if task.machine_type is not None:
                yield Problem(task.type_path, f"{task.machine_type!r} is set but scaleTier is {tier}; "
                              "machine types are allowed only with scaleTier CUSTOM")
            if task.role != "master" and task.count is not None:
                yield Problem(task.count_path, f"{task.count} is set but scaleTier is {tier}; "
                              "counts are allowed only with scaleTier CUSTOM")
            if task.accelerator is not None:
                yield Problem(f"{task.config_path}.acceleratorConfig", f"is set but scaleTier is {tier}; "
                              "accelerators attach only to CUSTOM Compute Engine machine types")
            continue
        if task.role == "master" and task.machine_type is None:
            yield Problem(task.type_path, "required when scaleTier is CUSTOM; allowed: a Compute Engine "
                          "machine type (e.g. n1-highcpu-16) or a legacy type (e.g. complex_model_m)")
        if task.role != "master" and (task.count or 0) > 0 and task.machine_type is None:
            yield Problem(task.type_path, f"required because {task.role}Count is {task.count}")
        if task.machine_type is None and task.config is not None and task.role != "master":
            yield Problem(task.config_path, f"is set but {task.role}Type is not")


#: The catalog's machine types as sets: each task of each job is looked up in them.
_MACHINE_TYPES = frozenset(catalog.MACHINE_TYPES)
_VERTEX_MACHINE_TYPES = frozenset(catalog.VERTEX_MACHINE_TYPES)


def rule_machine_types(job: Job, opts: Options) -> Iterator[Problem]:
    """Known types; cloud_tpu only as worker; never legacy and Compute Engine types mixed."""
    ti = job.training_input
    if scale_tier(ti) != "CUSTOM":
        return
    kinds: dict[str, list[str]] = {"Compute Engine": [], "legacy": []}
    for task in tasks(ti):
        mt = task.machine_type
        if mt is None:
            continue
        if mt == catalog.CLOUD_TPU:
            if task.role != "worker":
                yield Problem(task.type_path, f"{mt!r} is allowed only as workerType")
            continue
        if opts.vertex:
            continue  # Vertex AI's machine types are judged on the translation (rules.vertex_hardware)
        if mt in _VERTEX_MACHINE_TYPES and mt not in _MACHINE_TYPES:
            yield Problem(task.type_path, f"{mt!r} is a machine type of Vertex AI, not of AI Platform Training; "
                          "allowed: backend vertex (validate/render --backend vertex, or the stack's backend), or "
                          "an AI Platform type (e.g. n1-highcpu-16)")
            continue
        if mt not in _MACHINE_TYPES:
            near = [t for t in catalog.MACHINE_TYPES if t.split("-", 1)[0] == mt.split("-", 1)[0]]
            choices = allowed(near) if near and "-" in mt else (
                f"a Compute Engine type (e.g. n1-highcpu-16; {len(catalog.COMPUTE_ENGINE_TYPES)} in all) or a "
                f"legacy type ({allowed(catalog.LEGACY_TYPES)})")
            yield Problem(task.type_path, f"{mt!r} is not a machine type; allowed: {choices}")
            continue
        if task.runs or task.role == "master":
            kinds["Compute Engine" if task.is_compute_engine else "legacy"].append(f"{task.role}Type {mt}")
    if kinds["Compute Engine"] and kinds["legacy"]:
        yield Problem(f"{TI}.masterType", "Compute Engine and legacy machine types are mixed ("
                      f"{', '.join(kinds['Compute Engine'] + kinds['legacy'])}); allowed: all task types "
                      "Compute Engine types, or all legacy types")


def rule_code(job: Job, opts: Options) -> Iterator[Problem]:
    """A package (packageUris + pythonModule) on a runtime version, or a container image; not both."""
    ti = job.training_input
    image = ti.master_config.image_uri if ti.master_config else None
    if image and ti.runtime_version:
        yield Problem(f"{TI}.runtimeVersion", f"{ti.runtime_version!r} is set with masterConfig.imageUri; "
                      "allowed: one of imageUri (custom container) or runtimeVersion (prebuilt runtime)")
    if image:
        for field in ("package_uris", "python_module", "python_version"):
            if getattr(ti, field):
                wire = "".join(w.capitalize() if i else w for i, w in enumerate(field.split("_")))
                yield Problem(f"{TI}.{wire}", "is set with masterConfig.imageUri; allowed: a custom "
                              "container or a Python package, not both")
    else:
        if not ti.python_module and not opts.partial:
            yield Problem(f"{TI}.pythonModule", "required without masterConfig.imageUri; allowed: the "
                          "trainer's module (e.g. trainer.task) or a container image in masterConfig.imageUri")
        if ti.package_uris and not ti.python_module and opts.partial:
            yield Problem(f"{TI}.pythonModule", "required with packageUris; allowed: the trainer's module "
                          "(e.g. trainer.task)")
        if not ti.package_uris and not opts.package_supplied and not opts.partial:
            yield Problem(f"{TI}.packageUris", "required without masterConfig.imageUri; allowed: gs:// URIs "
                          "of the trainer package(s) or a container image in masterConfig.imageUri")
        if ti.runtime_version is not None and ti.runtime_version not in catalog.RUNTIME_VERSIONS:
            yield Problem(f"{TI}.runtimeVersion", f"{ti.runtime_version!r} is not a runtime version; "
                          f"allowed: {allowed(catalog.RUNTIME_VERSIONS)}")
        elif ti.python_version is not None:
            pythons = catalog.RUNTIME_PYTHON_VERSIONS.get(ti.runtime_version or "1.0", ())
            if ti.python_version not in pythons:
                yield Problem(f"{TI}.pythonVersion", f"{ti.python_version!r} on runtime "
                              f"{ti.runtime_version or '1.0 (the default)'}; allowed: {allowed(pythons)}")
    for task in tasks(ti):
        cfg = task.config
        if cfg is None:
            continue
        if (cfg.container_command or cfg.container_args) and not (cfg.image_uri or image):
            yield Problem(f"{task.config_path}.containerCommand", "is set without a container image; "
                          "allowed only with imageUri")
        if cfg.container_command and ti.args:
            yield Problem(f"{task.config_path}.containerCommand", "is set together with trainingInput.args; "
                          "allowed: one of containerCommand or args")
        if cfg.tpu_tf_version and not (task.is_tpu and (cfg.image_uri or image)):
            yield Problem(f"{task.config_path}.tpuTfVersion", "allowed only on a cloud_tpu worker of a "
                          "custom-container job")
