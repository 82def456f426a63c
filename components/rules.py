"""The rules a training job must obey before anything is sent, judged against catalog.py.

Each rule is a small function that yields Problems; `check_job` runs them all so a spec's every problem
is reported at once. Sources of the rules: seed 000 (TPUs), seed 001 (GPUs) and ml.v1.json's field docs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from components import catalog
from components.problems import Problem, allowed
from components.spec import AcceleratorConfig, Job, ReplicaConfig, TrainingInput

TI = "trainingInput"

JOB_ID = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
LABEL_KEY = re.compile(r"[a-z][a-z0-9_-]{0,62}")
LABEL_VALUE = re.compile(r"[a-z0-9_-]{0,63}")
GCS_URI = re.compile(r"gs://[a-z0-9][a-z0-9._-]{1,220}[a-z0-9](/.*)?")
DURATION = re.compile(r"\d+(\.\d{1,9})?s")
SERVICE_ACCOUNT = re.compile(r"[a-z0-9-]+@[a-z0-9.-]+\.gserviceaccount\.com|[^@\s]+@[^@\s]+\.[a-z]+")
NETWORK = re.compile(r"projects/[^/]+/global/networks/[^/]+")
KMS_KEY = re.compile(r"projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+")


@dataclass(frozen=True)
class Options:
    """How complete a job must be.

    `partial`: a gcloud config.yaml, whose region, runtime version, module and package gcloud fills from
    its flags at submit time: values present are judged, absent ones are not required.
    `package_supplied`: a stack job whose trainer package is built by the stack (packageUris come later).
    """

    partial: bool = False
    package_supplied: bool = False


@dataclass(frozen=True)
class Task:
    """One task role of the job as written: master, worker, parameterServer or evaluator."""

    role: str
    machine_type: str | None
    config: ReplicaConfig | None
    count: int | None

    @property
    def type_path(self) -> str:
        return f"{TI}.{self.role}Type"

    @property
    def config_path(self) -> str:
        return f"{TI}.{self.role}Config"

    @property
    def count_path(self) -> str:
        return f"{TI}.{self.role}Count"

    @property
    def accelerator(self) -> AcceleratorConfig | None:
        return self.config.accelerator_config if self.config else None

    @property
    def is_compute_engine(self) -> bool:
        return self.machine_type in catalog.COMPUTE_ENGINE_TYPES

    @property
    def is_legacy(self) -> bool:
        return self.machine_type in catalog.LEGACY_GPUS

    @property
    def is_tpu(self) -> bool:
        return self.machine_type == catalog.CLOUD_TPU

    @property
    def runs(self) -> bool:
        """Whether this role gets any machine: the master always, others with a positive count."""
        return self.role == "master" or (self.count or 0) > 0


def tasks(ti: TrainingInput) -> list[Task]:
    return [Task(r, ti.role_type(r), ti.role_config(r), ti.role_count(r)) for r in catalog.ROLES]


def scale_tier(ti: TrainingInput) -> str:
    return ti.scale_tier or catalog.DEFAULT_SCALE_TIER


def uses_tpu(ti: TrainingInput) -> bool:
    """BASIC_TPU, or a CUSTOM cluster with a cloud_tpu worker."""
    return scale_tier(ti) == "BASIC_TPU" or ti.worker_type == catalog.CLOUD_TPU


def gpus_used(ti: TrainingInput) -> list[tuple[str, str]]:
    """(field path, GPU type) for every GPU the job asks for: attached, built into a type, or a tier's."""
    found: list[tuple[str, str]] = []
    tier = scale_tier(ti)
    if tier in catalog.TIER_GPUS:
        found.append((f"{TI}.scaleTier", catalog.TIER_GPUS[tier][0]))
    if tier != "CUSTOM":
        return found
    for task in tasks(ti):
        if not task.runs:
            continue
        builtin = catalog.LEGACY_GPUS.get(task.machine_type or "")
        if builtin:
            found.append((task.type_path, builtin[0]))
        acc = task.accelerator
        if task.is_compute_engine and acc and acc.type in catalog.GPU_TYPES:
            found.append((f"{task.config_path}.acceleratorConfig.type", acc.type))
    return found


Rule = Callable[[Job, Options], Iterator[Problem]]


def rule_job_id(job: Job, opts: Options) -> Iterator[Problem]:
    if job.job_id is None:
        return
    if not JOB_ID.fullmatch(job.job_id) or len(job.job_id) > 128:
        yield Problem(
            "jobId",
            f"{job.job_id!r} is not a valid job id; allowed: letters, digits and underscores, "
            "starting with a letter, at most 128 characters",
        )


def rule_labels(job: Job, opts: Options) -> Iterator[Problem]:
    labels = job.labels or {}
    if len(labels) > 64:
        yield Problem("labels", f"{len(labels)} labels; allowed: at most 64")
    for key, value in labels.items():
        if not LABEL_KEY.fullmatch(key):
            yield Problem(
                f"labels.{key}",
                f"{key!r} is not a valid label key; allowed: lowercase letters, digits, _ and -, "
                "starting with a letter, at most 63 characters",
            )
        if not LABEL_VALUE.fullmatch(value):
            yield Problem(
                f"labels.{key}",
                f"{value!r} is not a valid label value; allowed: lowercase letters, digits, _ and -, "
                "at most 63 characters",
            )


def rule_scale_tier(job: Job, opts: Options) -> Iterator[Problem]:
    ti = job.training_input
    if ti.scale_tier is not None and ti.scale_tier not in catalog.SCALE_TIERS:
        yield Problem(f"{TI}.scaleTier", f"{ti.scale_tier!r} is not a scale tier; allowed: "
                      f"{allowed(catalog.SCALE_TIERS)}")


def rule_region(job: Job, opts: Options) -> Iterator[Problem]:
    region = job.training_input.region
    if region is None and opts.partial:
        return
    if region is None:
        yield Problem(f"{TI}.region", "required (or pass --region); allowed: "
                      f"{allowed(catalog.TRAINING_REGIONS)}")
    elif region not in catalog.TRAINING_REGIONS:
        yield Problem(f"{TI}.region", f"{region!r} is not a training region; allowed: "
                      f"{allowed(catalog.TRAINING_REGIONS)}")


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
        if mt not in catalog.MACHINE_TYPES:
            yield Problem(task.type_path, f"{mt!r} is not a machine type; allowed: a Compute Engine type "
                          f"({allowed(catalog.COMPUTE_ENGINE_TYPES)}) or a legacy type "
                          f"({allowed(catalog.LEGACY_TYPES)})")
            continue
        if task.runs or task.role == "master":
            kinds["Compute Engine" if task.is_compute_engine else "legacy"].append(f"{task.role}Type {mt}")
    if kinds["Compute Engine"] and kinds["legacy"]:
        yield Problem(f"{TI}.masterType", "Compute Engine and legacy machine types are mixed ("
                      f"{', '.join(kinds['Compute Engine'] + kinds['legacy'])}); allowed: all task types "
                      "Compute Engine types, or all legacy types")


def rule_accelerators(job: Job, opts: Options) -> Iterator[Problem]:
    """GPU type and count valid for the machine type (seed 001's table); none on legacy types."""
    ti = job.training_input
    if scale_tier(ti) != "CUSTOM":
        return
    for task in tasks(ti):
        acc = task.accelerator
        if acc is None or task.is_tpu:
            continue
        path = f"{task.config_path}.acceleratorConfig"
        mt = task.machine_type
        if task.is_legacy:
            builtin = catalog.LEGACY_GPUS[mt or ""]
            what = f"{builtin[1]} {builtin[0]} built in" if builtin else "no GPUs"
            yield Problem(path, f"is set on legacy machine type {mt} ({what}); allowed only on Compute "
                          "Engine machine types (e.g. n1-standard-8) and the cloud_tpu worker")
            continue
        if not task.is_compute_engine:
            continue
        yield from _accelerator_problems(path, mt or "", acc)


def _accelerator_problems(path: str, mt: str, acc: AcceleratorConfig) -> Iterator[Problem]:
    if acc.type is None:
        yield Problem(f"{path}.type", f"required with acceleratorConfig; allowed on {mt}: "
                      f"{allowed(catalog.GPU_COUNTS.get(mt, {}))}")
        return
    if acc.type not in catalog.ACCELERATOR_TYPES:
        yield Problem(f"{path}.type", f"{acc.type!r} is not an accelerator type; allowed: "
                      f"{allowed(catalog.GPU_TYPES)}")
        return
    if acc.type in catalog.TPU_TYPES:
        yield Problem(f"{path}.type", f"{acc.type} attaches only to a cloud_tpu worker, not to {mt}; "
                      f"allowed on {mt}: {allowed(catalog.GPU_COUNTS.get(mt, {})) }")
        return
    offered = catalog.GPU_COUNTS.get(mt, {})
    if acc.type not in offered:
        yield Problem(f"{path}.type", f"{acc.type} on {mt} is not offered; allowed on {mt}: "
                      f"{allowed(offered)}")
        return
    counts = offered[acc.type]
    if acc.count is None:
        yield Problem(f"{path}.count", f"required with type {acc.type}; allowed on {mt}: {allowed(counts)}")
    elif acc.count not in counts:
        yield Problem(f"{path}.count", f"{acc.count} {acc.type} on {mt}; allowed: {allowed(counts)}")


def rule_gpu_regions(job: Job, opts: Options) -> Iterator[Problem]:
    """Each GPU type offered in the region, and all of them in one zone of it (seed 001)."""
    ti = job.training_input
    region = ti.region
    if region is None or region not in catalog.TRAINING_REGIONS:
        return
    used = gpus_used(ti)
    if not used:
        return
    zones = catalog.REGION_ZONES.get(region, {})
    in_region = set().union(*zones.values()) if zones else set()
    missing = False
    for path, gpu in used:
        if gpu not in in_region:
            missing = True
            where = sorted({z.rsplit("-", 1)[0] for z in catalog.GPU_ZONES[gpu]})
            yield Problem(path, f"{gpu} is not offered in region {region}; allowed regions for {gpu}: "
                          f"{allowed(where)}")
    wanted = {gpu for _, gpu in used}
    if missing or len(wanted) < 2:
        return
    if any(wanted <= offered for offered in zones.values()):
        return
    per_zone = "; ".join(f"{z}: {', '.join(sorted(g & wanted)) or 'none'}" for z, g in zones.items())
    regions = sorted(r for r, zs in catalog.REGION_ZONES.items() if any(wanted <= g for g in zs.values()))
    yield Problem(f"{TI}.region", f"no zone of {region} offers all of {', '.join(sorted(wanted))} "
                  f"({per_zone}); allowed: regions with one zone offering all of them: {allowed(regions)}")


def rule_tpu(job: Job, opts: Options) -> Iterator[Problem]:
    """Seed 000: TPU region, runtime version, one cloud_tpu worker, no parameter servers, 8 cores."""
    ti = job.training_input
    if not uses_tpu(ti):
        return
    if ti.region is not None and ti.region not in catalog.TPU_REGIONS:
        yield Problem(f"{TI}.region", f"{ti.region!r} has no Cloud TPUs; allowed: "
                      f"{allowed(catalog.TPU_REGIONS)}")
    uses_container = bool(ti.master_config and ti.master_config.image_uri)
    missing_ok = opts.partial and ti.runtime_version is None
    if not uses_container and not missing_ok and ti.runtime_version not in catalog.TPU_RUNTIME_VERSIONS:
        shown = "missing" if ti.runtime_version is None else repr(ti.runtime_version)
        yield Problem(f"{TI}.runtimeVersion", f"{shown} for a TPU job; allowed: "
                      f"{allowed(catalog.TPU_RUNTIME_VERSIONS)}")
    if scale_tier(ti) != "CUSTOM":
        return
    if ti.worker_count != 1:
        yield Problem(f"{TI}.workerCount", f"{ti.worker_count} with workerType cloud_tpu; allowed: 1")
    if (ti.parameter_server_count or 0) > 0 or ti.parameter_server_type is not None:
        yield Problem(f"{TI}.parameterServerCount", "parameter servers are not allowed with a Cloud TPU "
                      "worker; allowed: 0 (leave parameterServerType and parameterServerCount unset)")
    acc = ti.worker_config.accelerator_config if ti.worker_config else None
    path = f"{TI}.workerConfig.acceleratorConfig"
    if acc is None:
        return
    master_ce = ti.master_type in catalog.COMPUTE_ENGINE_TYPES
    if not master_ce:
        yield Problem(path, f"is set but masterType {ti.master_type} is a legacy type; allowed only with a "
                      "Compute Engine master (e.g. n1-highcpu-16)")
        return
    if acc.type not in catalog.TPU_TYPES:
        yield Problem(f"{path}.type", f"{acc.type!r} on cloud_tpu; allowed: {allowed(catalog.TPU_TYPES)}")
    if acc.count != catalog.TPU_CORES:
        yield Problem(f"{path}.count", f"{acc.count} TPU cores on cloud_tpu; allowed: {catalog.TPU_CORES}")


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


def rule_uris_and_names(job: Job, opts: Options) -> Iterator[Problem]:
    """gs:// where URIs are expected; well-formed network, service account, KMS key and durations."""
    ti = job.training_input
    for i, uri in enumerate(ti.package_uris or []):
        if not GCS_URI.fullmatch(uri):
            yield Problem(f"{TI}.packageUris[{i}]", f"{uri!r} is not a Cloud Storage URI; allowed: "
                          "gs://BUCKET/PATH")
    if ti.job_dir is not None and not GCS_URI.fullmatch(ti.job_dir):
        yield Problem(f"{TI}.jobDir", f"{ti.job_dir!r} is not a Cloud Storage URI; allowed: gs://BUCKET/PATH")
    if ti.network is not None and not NETWORK.fullmatch(ti.network):
        yield Problem(f"{TI}.network", f"{ti.network!r}; allowed: projects/PROJECT/global/networks/NAME")
    if ti.service_account is not None and not SERVICE_ACCOUNT.fullmatch(ti.service_account):
        yield Problem(f"{TI}.serviceAccount", f"{ti.service_account!r} is not a service account email")
    kms = ti.encryption_config.kms_key_name if ti.encryption_config else None
    if kms is not None and not KMS_KEY.fullmatch(kms):
        yield Problem(f"{TI}.encryptionConfig.kmsKeyName", f"{kms!r}; allowed: projects/P/locations/L/"
                      "keyRings/R/cryptoKeys/K")
    sched = ti.scheduling
    for field, value in (("maxRunningTime", sched and sched.max_running_time),
                         ("maxWaitTime", sched and sched.max_wait_time)):
        if value and not DURATION.fullmatch(value):
            yield Problem(f"{TI}.scheduling.{field}", f"{value!r} is not a duration; allowed: seconds with "
                          "an s suffix, e.g. 7200s")
    for task in tasks(ti):
        disk = task.config.disk_config if task.config else None
        if disk and disk.boot_disk_size_gb is not None and not 100 <= disk.boot_disk_size_gb <= 64000:
            yield Problem(f"{task.config_path}.diskConfig.bootDiskSizeGb", f"{disk.boot_disk_size_gb}; "
                          "allowed: 100 to 64000")
        if disk and disk.boot_disk_type not in (None, "pd-ssd", "pd-standard"):
            yield Problem(f"{task.config_path}.diskConfig.bootDiskType", f"{disk.boot_disk_type!r}; "
                          "allowed: pd-ssd, pd-standard")


RULES: tuple[Rule, ...] = (
    rule_job_id,
    rule_labels,
    rule_scale_tier,
    rule_region,
    rule_cluster_shape,
    rule_machine_types,
    rule_accelerators,
    rule_gpu_regions,
    rule_tpu,
    rule_uris_and_names,
    rule_code,
)


def check_job(job: Job, opts: Options | None = None) -> list[Problem]:
    """Every problem of a parsed job, in a stable order, without duplicates."""
    opts = opts or Options()
    problems: list[Problem] = []
    for rule in RULES:
        problems.extend(rule(job, opts))
    return list(dict.fromkeys(problems))
