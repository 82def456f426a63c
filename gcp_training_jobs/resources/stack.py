"""build_stack: everything one stack makes, from its validated settings, and the stack's outputs.

Order of dependence (each waits for the ones before it): the APIs; the buckets; the Cloud TPU service
account's grant; the persistent resources (after the APIs); one trainer package per trainer folder; the training
jobs. Jobs depend explicitly on
all of them: a job must not start before its package is uploaded, its job dir exists and (on TPUs)
Cloud TPU may act for the training service, none of which its inputs alone would order.

Secrets stay secret: a value built from a secret config key (a secret anywhere inside it makes the key
secret) is a secret input of every resource it reaches, and outputs that echo it are secret too. A job's encrypted
values are secret where they stand in its `job` input (`_job_input`), the rest of it readable; the outputs that echo
the input are secret as a whole (additional_secret_outputs).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pulumi

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.names import JOB_SPEC, NAMESPACE, TUNING_JOB
from gcp_training_jobs.resources.budget import budget_input, stack_budget
from gcp_training_jobs.resources.job_model.declared import CONSOLE_URL, JOB_ID, STATE
from gcp_training_jobs.resources.job_model.inputs import wire_of
from gcp_training_jobs.resources.package.resource import PackageTrainingJob, StackProvider
from gcp_training_jobs.resources.persistent_resources import persistent_resources, warn_missing_plugin
from gcp_training_jobs.resources.services import ProjectServices, ProjectServicesArgs, required_apis
from gcp_training_jobs.resources.settings import JOB_DIR_PLACEHOLDER, JobSettings, StackSettings
from gcp_training_jobs.resources.settings.placement import CHEAPEST
from gcp_training_jobs.resources.settings.placement import wire as placement_wire
from gcp_training_jobs.resources.settings.placements import ranked
from gcp_training_jobs.resources.storage import TrainingBuckets, TrainingBucketsArgs
from gcp_training_jobs.resources.tpu_access import TpuServiceAgent, TpuServiceAgentArgs
from gcp_training_jobs.resources.trainer_package import TrainerPackage, TrainerPackageArgs, default_build_dir
from gcp_training_jobs.resources.training_job import TrainingJob

#: `jobResource: package`: the stack's jobs are the provider package's resource.
PACKAGE = "package"
#: Labels every created bucket carries, besides the stack's own.
MANAGED_BY = "pulumi"
#: The settings keys each value is built from (a secret one makes the value secret).
JOB_SOURCES = ("jobs", "labels", "buckets", "region")
#: Bucket outputs that echo its labels (pulumi-gcp adds the provider's default labels to them).
BUCKET_LABEL_OUTPUTS = ["labels", "effectiveLabels", "pulumiLabels", "terraformLabels"]
#: TrainingJob outputs that carry its project (and job) in them.
JOB_PROJECT_OUTPUTS = ["project", "resourceName", "consoleUrl"]


class _Secrets:
    """Which settings keys are secret, and the values built from them made secret."""

    def __init__(self, settings: StackSettings):
        self.keys = settings.secret_keys

    def any(self, *keys: str) -> bool:
        return bool(self.keys.intersection(keys))

    def wrap(self, value: Any, *keys: str) -> Any:
        return pulumi.Output.secret(value) if self.any(*keys) else value


def build_stack(settings: StackSettings, stack: str | None = None,
                build_dir: Path | None = None) -> dict[str, Any]:
    """Register the stack's resources and export its outputs (also returned, for tests and callers)."""
    stack = stack or pulumi.get_stack()
    secret = _Secrets(settings)
    project = secret.wrap(settings.project, "project")
    apis: list[pulumi.Resource] = []
    if settings.enable_apis:
        services = required_apis(settings.backend, grants_role=settings.grants_tpu_access,
                                 looks_up_tpu_account=settings.grants_tpu_access
                                 and settings.tpu_access.service_account is None)
        apis.append(ProjectServices("apis", ProjectServicesArgs(project, tuple(services))))

    labels = {"managed-by": MANAGED_BY, "stack": _label_value(stack), **settings.labels}
    buckets = TrainingBuckets(stack, TrainingBucketsArgs(
        project=project,
        location=secret.wrap(settings.bucket_location, "region", "buckets"),
        labels=secret.wrap(labels, "labels"),
        staging_bucket=settings.buckets.staging,
        job_dir_bucket=settings.buckets.job_dir,
        staging_retention_days=settings.buckets.staging_retention_days,
        noncurrent_retention_days=settings.buckets.noncurrent_retention_days,
        force_destroy=settings.buckets.force_destroy,
    ), opts=pulumi.ResourceOptions(depends_on=apis,
                                   transformations=[_secret_labels] if secret.any("labels") else None))
    after: list[pulumi.Resource] = [*apis, buckets]  # what every job waits for

    outputs: dict[str, Any] = {
        "backend": settings.backend,
        "stagingBucket": secret.wrap(buckets.staging_bucket, "buckets"),
        "jobDirBucket": secret.wrap(buckets.job_dir_bucket, "buckets"),
    }

    if settings.grants_tpu_access:
        grant = TpuServiceAgent("tpu-service-agent", TpuServiceAgentArgs(
            project=project, service_account=settings.tpu_access.service_account,
        ), opts=pulumi.ResourceOptions(depends_on=apis))
        outputs["tpuServiceAccount"] = grant.service_account
        after.append(grant)

    warn_missing_plugin(settings)  # before the stack's pulumi-gcp resources the plugin runs
    resources = persistent_resources(settings.resources, project=project, labels=secret.wrap(labels, "labels"),
                                     after=apis)
    packages = _packages(settings, buckets, build_dir or default_build_dir(settings.root), [*apis, buckets])
    stack_budget(settings, project, buckets.staging_bucket, secret.wrap(labels, "labels"), [*apis, buckets],
                 secret=secret.any("budget"))

    jobs: dict[str, TrainingJob | PackageTrainingJob] = {}
    hidden = (["job"] if secret.any(*JOB_SOURCES) else []) + (JOB_PROJECT_OUTPUTS if secret.any("project") else [])
    guardrails = secret.wrap(settings.guardrails.model_dump(by_alias=True, exclude_none=True, mode="json"),
                             "guardrails")
    budget = secret.wrap(budget_input(settings), "budget")
    resource: type[TrainingJob] | type[PackageTrainingJob] = TrainingJob
    provider: StackProvider | None = None
    if settings.job_resource == PACKAGE and settings.jobs:  # the package's, configured once with the stack's config
        resource, provider = PackageTrainingJob, StackProvider("stack")
    for name, job in settings.jobs.items():
        package = packages.get(job.trainer.path) if job.trainer else None
        wire = _job_input(name, _wire_job(name, job, package, buckets), settings, secret)
        jobs[name] = resource(
            name,
            project=project,
            job=wire,
            backend=settings.backend,
            wait_for_completion=job.wait_for_completion,
            wait_timeout_seconds=job.wait_timeout_seconds,
            guardrails=guardrails,
            protect=job.protect,
            fallbacks=_placements(settings, name) or ([f.wire() for f in job.fallbacks] if job.fallbacks else None),
            cheapest_first=True if job.placement == CHEAPEST else None,  # unset when off: no diff
            retries=job.retries,
            rerun=job.rerun,
            delete_record_on_delete=job.delete_record_on_delete or None,  # unset when off: no diff
            budget=budget,
            persistent_resource_declared=True if _on(job, resources) else None,  # unset when off: no diff
            opts=pulumi.ResourceOptions(depends_on=[*after, *([package] if package else []), *_on(job, resources)],
                                        additional_secret_outputs=hidden or None,
                                        retain_on_delete=job.retain_on_delete or None,
                                        provider=provider),
        )
    outputs["jobs"] = {name: {JOB_ID: job.jobId, STATE: job.state, CONSOLE_URL: job.consoleUrl}
                       for name, job in jobs.items()}

    for key, value in outputs.items():
        if key == "jobs":  # one value, known once every job's is: the first `up`'s preview says it is to come (a map
            if value:      # of values not known yet read as `jobs: {}`), the update the jobs; a stack of none, none
                pulumi.export(key, pulumi.Output.from_input(value))
            continue
        pulumi.export(key, value)
    return outputs


def _job_input(name: str, body: dict[str, Any], settings: StackSettings,
               secret: _Secrets) -> pulumi.Input[dict[str, Any]]:
    """The `job` input: each of the job's encrypted values (`jobs.NAME.PATH` in the stack file) a secret where it
    stands, the rest readable; wholly secret when a secret reaches it from elsewhere (the labels, the
    buckets, the region) or a secret path is not in the body (it is then not told apart)."""
    if not secret.any(*JOB_SOURCES):
        return body
    prefix = f"jobs.{name}."
    paths = [path[len(prefix):] for path in settings.secret_paths if path.startswith(prefix)]
    if secret.any(*(key for key in JOB_SOURCES if key != "jobs")) or not settings.secret_paths:
        return pulumi.Output.secret(body)
    held: Any = body
    for path in paths:
        held = _secret_at(held, _steps(path))
        if held is None:
            return pulumi.Output.secret(body)
    return held


def _steps(path: str) -> list[str | int]:
    """`a.b[0].c` as its keys and indexes."""
    return [int(part[1:-1]) if part.startswith("[") else part
            for part in re.findall(r"\[\d+\]|[^.\[\]]+", path)]


def _secret_at(value: Any, steps: list[str | int]) -> Any:
    """A copy of `value` with the leaf at `steps` made a Pulumi secret (None: no such leaf)."""
    if not steps:
        return pulumi.Output.secret(value)
    step, rest = steps[0], steps[1:]
    if isinstance(step, int) and isinstance(value, list) and step < len(value):
        inner = _secret_at(value[step], rest)
        return None if inner is None else [*value[:step], inner, *value[step + 1:]]
    if isinstance(step, str) and isinstance(value, dict) and step in value:
        inner = _secret_at(value[step], rest)
        return None if inner is None else {**value, step: inner}
    return None


def _on(job: JobSettings, resources: Mapping[str, pulumi.Resource]) -> list[pulumi.Resource]:
    """The declared persistent resource a job runs on (`persistentResourceId`), which it waits for."""
    named = resources.get(str(job.facts.runs_on.persistent_resource_id))
    return [named] if named is not None else []


def _placements(settings: StackSettings, name: str) -> list[dict[str, Any]] | None:
    """A `placement: cheapest` job's ranked candidates as its placements (settings.placement.wire, in the order
    settings.placements gives them), cheapest first."""
    return placement_wire(settings.jobs[name], ranked(settings, name)) or None


def _secret_labels(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult | None:
    """A created bucket's label outputs are secret when the stack's labels are (they echo them)."""
    if args.type_ != "gcp:storage/bucket:Bucket":
        return None
    hidden = [*(args.opts.additional_secret_outputs or []), *BUCKET_LABEL_OUTPUTS]
    return pulumi.ResourceTransformationResult(args.props, pulumi.ResourceOptions.merge(
        args.opts, pulumi.ResourceOptions(additional_secret_outputs=hidden)))


def _packages(settings: StackSettings, buckets: TrainingBuckets, build_dir: Path,
              after: list[pulumi.Resource]) -> dict[str, TrainerPackage]:
    """One TrainerPackage per distinct trainer folder, named after the folder."""
    packages: dict[str, TrainerPackage] = {}
    used: set[str] = set()
    for path, folder in sorted(settings.trainer_folders().items()):
        name = _resource_name(f"trainer-{folder.name}")
        if name in used:
            name = _resource_name(f"trainer-{path}")
        used.add(name)
        users = sorted(n for n, j in settings.jobs.items() if j.trainer and j.trainer.path == path)
        packages[path] = TrainerPackage(name, TrainerPackageArgs(
            source=folder,
            bucket=buckets.staging_bucket,
            build_dir=build_dir,
            config_key=f"{NAMESPACE}:jobs.{users[0]}.trainer.path" if users else "trainer.path",
        ), opts=pulumi.ResourceOptions(depends_on=list(after)))
    return packages


def _wire_job(name: str, job: JobSettings, package: TrainerPackage | None,
              buckets: TrainingBuckets) -> dict[str, Any]:
    """The job as TrainingJob takes it (job_model.inputs: API names, int64 as text), with the package's URI and the
    job dir filled in as Outputs. Only those leaves are Outputs: at preview, when a created bucket's name is
    not known yet, the provider still sees (and judges) the rest of the job."""
    body = wire_of(job.job)
    if JOB_SPEC in body:
        return _wire_custom_job(name, body, package, buckets)
    if TUNING_JOB in body:  # its trials' CustomJobSpec, as a jobSpec's
        tuning: dict[str, Any] = dict(body[TUNING_JOB])
        trial = _wire_custom_job(name, {JOB_SPEC: tuning.get("trialJobSpec") or {}}, package, buckets)
        return {**body, TUNING_JOB: {**tuning, "trialJobSpec": trial[JOB_SPEC]}}
    ti: dict[str, Any] = dict(body["trainingInput"])
    job_dir: pulumi.Input[str] = ti.get("jobDir") or buckets.job_dir_uri(name)
    ti["jobDir"] = job_dir
    if package is not None:
        ti["packageUris"] = [package.uri, *ti.get("packageUris", [])]
    if "args" in ti:
        ti["args"] = _with_job_dirs(ti["args"], job_dir)
    for role in catalog.ROLES:
        config = ti.get(f"{role}Config")
        if isinstance(config, dict) and "containerArgs" in config:
            ti[f"{role}Config"] = {**config, "containerArgs": _with_job_dirs(config["containerArgs"], job_dir)}
    body["trainingInput"] = ti
    return body


def _wire_custom_job(name: str, body: dict[str, Any], package: TrainerPackage | None,
                     buckets: TrainingBuckets) -> dict[str, Any]:
    """A CustomJobSpec: baseOutputDirectory defaults to the job's folder (its job dir, as ${jobDir} in args),
    and the trainer package goes first into every pythonPackageSpec's packageUris."""
    spec: dict[str, Any] = dict(body[JOB_SPEC])
    given = (spec.get("baseOutputDirectory") or {}).get("outputUriPrefix")
    job_dir: pulumi.Input[str] = given or buckets.job_dir_uri(name)
    spec["baseOutputDirectory"] = {**(spec.get("baseOutputDirectory") or {}), "outputUriPrefix": job_dir}
    pools = []
    for pool in spec.get("workerPoolSpecs") or []:
        pool = dict(pool)
        for kind in ("containerSpec", "pythonPackageSpec"):
            code = pool.get(kind)
            if not isinstance(code, dict):
                continue
            code = dict(code)
            if "args" in code:
                code["args"] = _with_job_dirs(code["args"], job_dir)
            if kind == "pythonPackageSpec" and package is not None:
                code["packageUris"] = [package.uri, *code.get("packageUris", [])]
            pool[kind] = code
        pools.append(pool)
    spec["workerPoolSpecs"] = pools
    return {**body, JOB_SPEC: spec}


def _with_job_dirs(args: list[str], job_dir: pulumi.Input[str]) -> list[pulumi.Input[str]]:
    return [_with_job_dir(arg, job_dir) for arg in args]


def _with_job_dir(arg: str, job_dir: pulumi.Input[str]) -> pulumi.Input[str]:
    """An argument naming ${jobDir} (the TPU guide's --model_dir=$OUTPUT_PATH), with the job dir put in."""
    if JOB_DIR_PLACEHOLDER not in arg:
        return arg
    known = job_dir if isinstance(job_dir, str) else None  # a given bucket or job dir: the same text, no apply
    if known is not None:
        return arg.replace(JOB_DIR_PLACEHOLDER, known)
    return pulumi.Output.from_input(job_dir).apply(lambda uri: arg.replace(JOB_DIR_PLACEHOLDER, uri))


def _resource_name(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")


def _label_value(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower())[:63]
