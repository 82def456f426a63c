"""Rules on a CustomJobSpec's own fields (the Vertex vocabulary only): scheduling, the names and URIs it
refers to, and each pool's code (Python package or container), environment and mounts.

Sources: aiplatform.v1.json's field descriptions (Scheduling, CustomJobSpec, PythonPackageSpec,
ContainerSpec, EnvVar, NfsMount, LustreMount), catalog.vertex_jobspec.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.names import (
    DURATION_ALLOWED,
    ENV_VAR_NAME,
    EXPERIMENT,
    NETWORK,
    PERSISTENT_RESOURCE_ID,
    SERVICE_ACCOUNT,
    TENSORBOARD,
    VERTEX,
    gcs_uri_problem,
    is_duration,
)
from gcp_training_jobs.jobspec.core.problems import Problem, allowed, suggestion
from gcp_training_jobs.jobspec.io.vocabulary import pool_path
from gcp_training_jobs.jobspec.rules.regions import region_problem
from gcp_training_jobs.jobspec.rules.tasks import Options
from gcp_training_jobs.jobspec.vocab.jobs import VertexJob

if TYPE_CHECKING:
    from gcp_training_jobs.jobspec.vocab.custom_job import EnvVar

#: Limits the field descriptions state: "The maximum number of package URIs is 100."; env: "Maximum limit
#: is 100."
MAX_PACKAGE_URIS = 100
MAX_ENV = 100


def _duration_seconds(text: str) -> float:
    """A protobuf Duration as the API writes it ("3600s") in seconds."""
    return float(text[:-1])


def rule_scheduling(job: VertexJob, opts: Options) -> Iterator[Problem]:
    """strategy from the enum (deprecated values named with their replacement); timeout and maxWaitDuration as
    protobuf Durations; FLEX_START jobs at most 7 days long."""
    sched = job.spec.scheduling
    if sched is None:
        return
    strategy = sched.strategy
    if strategy is not None:
        if strategy in catalog.DEPRECATED_STRATEGIES:
            yield Problem("scheduling.strategy", f"{strategy} is deprecated (aiplatform.v1.json); allowed: "
                          f"{catalog.DEPRECATED_STRATEGIES[strategy]} (its current name), or "
                          f"{allowed(catalog.CURRENT_STRATEGIES)}")
        elif strategy not in catalog.SCHEDULING_STRATEGIES:
            yield Problem("scheduling.strategy", f"{strategy!r} is not a scheduling strategy"
                          f"{suggestion(strategy, catalog.CURRENT_STRATEGIES)}; allowed: "
                          f"{allowed(catalog.CURRENT_STRATEGIES)}")
    for name, value in (("timeout", sched.timeout), ("maxWaitDuration", sched.max_wait_duration)):
        if value is None:
            continue
        if not is_duration(value):
            yield Problem(f"scheduling.{name}", f"{value[:60]!r} is not a duration; allowed: "
                          f"{DURATION_ALLOWED}")
        elif name == "timeout" and _duration_seconds(value) <= 0:
            yield Problem("scheduling.timeout", f"{value}; allowed: more than 0s (unset: "
                          f"{catalog.DEFAULT_TIMEOUT_SECONDS}s, 7 days)")
        elif name == "timeout" and strategy == "FLEX_START" and \
                _duration_seconds(value) > catalog.FLEX_START_MAX_TIMEOUT_SECONDS:
            yield Problem("scheduling.timeout", f"{value} with FLEX_START; allowed: at most "
                          f"{catalog.FLEX_START_MAX_TIMEOUT_SECONDS}s (7 days) ({catalog.SOURCE_DWS.url})")


def _format(path: str, value: str | None, pattern: re.Pattern[str], form: str) -> Iterator[Problem]:
    if value is not None and not pattern.fullmatch(value):
        yield Problem(path, f"{value!r}; allowed: {form}")


def rule_spec_names(job: VertexJob, opts: Options) -> Iterator[Problem]:
    """The names and URIs the spec refers to, in their documented forms (and, where they name a location, the
    job's region)."""
    spec, region = job.spec, job.region
    yield from _format("serviceAccount", spec.service_account, SERVICE_ACCOUNT, "a service account email")
    yield from _format("network", spec.network, NETWORK, "projects/PROJECT_NUMBER/global/networks/NAME")
    if spec.reserved_ip_ranges and not spec.network:
        yield Problem("reservedIpRanges", "is set without network; allowed: reserved ranges of the job's VPC "
                      "network, named in network")
    out = spec.base_output_directory
    if out is not None:
        if out.output_uri_prefix is None:
            yield Problem("baseOutputDirectory.outputUriPrefix", "required; allowed: gs://BUCKET/PATH")
        if out.output_uri_prefix is not None and (problem := gcs_uri_problem(out.output_uri_prefix)) is not None:
            yield Problem("baseOutputDirectory.outputUriPrefix", problem)
    yield from _format("persistentResourceId", spec.persistent_resource_id, PERSISTENT_RESOURCE_ID,
                       "the persistent resource's id: 1 to 63 lowercase letters, digits and -, starting with a "
                       "letter (not its full name)")
    for path, value, pattern, form in (
        ("tensorboard", spec.tensorboard, TENSORBOARD, "projects/P/locations/L/tensorboards/T"),
        ("experiment", spec.experiment, EXPERIMENT, "projects/P/locations/L/metadataStores/S/contexts/EXPERIMENT"),
        ("experimentRun", spec.experiment_run, EXPERIMENT,
         "projects/P/locations/L/metadataStores/S/contexts/EXPERIMENT-RUN"),
    ):
        if value is None:
            continue
        match = pattern.fullmatch(value)
        if match is None:
            yield Problem(path, f"{value!r}; allowed: {form}")
        elif region is not None and match.group("location") != region:
            yield Problem(path, f"is in {match.group('location')}, not in the job's region {region}; allowed: "
                          f"a resource in {region}")
    if spec.experiment_run is not None and spec.experiment is None:
        yield Problem("experimentRun", "is set without experiment; allowed: experiment too")
    location = spec.protected_artifact_location_id
    if location is not None and (refused := region_problem(location, "protectedArtifactLocationId", VERTEX)):
        yield refused


def rule_pool_code(job: VertexJob, opts: Options) -> Iterator[Problem]:
    """Each pool's code complete (a Python package names its executor image, package URIs and module; a
    container its image), its environment variables named as C identifiers, its mounts complete."""
    for index, wp in enumerate(job.spec.worker_pool_specs or []):
        base = pool_path(index, job.single_pool)
        py, box = wp.python_package_spec, wp.container_spec
        if py is not None:
            at = f"{base}.pythonPackageSpec"
            supplied = 1 if opts.package_supplied else 0  # the stack's trainer, put first in packageUris
            for name, value in (("executorImageUri", py.executor_image_uri),
                                ("packageUris", py.package_uris or supplied), ("pythonModule", py.python_module)):
                if not value:
                    yield Problem(f"{at}.{name}", "required with pythonPackageSpec")
            uris = py.package_uris or []
            if len(uris) + supplied > MAX_PACKAGE_URIS:
                yield Problem(f"{at}.packageUris", f"{len(uris) + supplied} URIs; allowed: at most "
                              f"{MAX_PACKAGE_URIS}")
            for i, uri in enumerate(uris):  # at its index as written
                if (problem := gcs_uri_problem(uri, needs_object=True)) is not None:
                    yield Problem(f"{at}.packageUris[{i}]", problem)
            yield from _env(f"{at}.env", py.env)
        if box is not None:
            at = f"{base}.containerSpec"
            if not box.image_uri:
                yield Problem(f"{at}.imageUri", "required with containerSpec; allowed: a container image URI")
            yield from _env(f"{at}.env", box.env)
        for i, nfs in enumerate(wp.nfs_mounts or []):
            at = f"{base}.nfsMounts[{i}]"
            for name, value in (("server", nfs.server), ("path", nfs.path), ("mountPoint", nfs.mount_point)):
                if not value:
                    yield Problem(f"{at}.{name}", "required")
            if nfs.path and not nfs.path.startswith("/"):
                yield Problem(f"{at}.path", f"{nfs.path!r}; allowed: an exported path starting with /")
        for i, lustre in enumerate(wp.lustre_mounts or []):
            at = f"{base}.lustreMounts[{i}]"
            for name, value in (("instanceIp", lustre.instance_ip), ("volumeHandle", lustre.volume_handle),
                                ("filesystem", lustre.filesystem), ("mountPoint", lustre.mount_point)):
                if not value:
                    yield Problem(f"{at}.{name}", "required")


def _env(at: str, env: list[EnvVar] | None) -> Iterator[Problem]:
    if not env:
        return
    if len(env) > MAX_ENV:
        yield Problem(at, f"{len(env)} variables; allowed: at most {MAX_ENV}")
    for i, var in enumerate(env):
        if not var.name:
            yield Problem(f"{at}[{i}].name", "required")
        elif not ENV_VAR_NAME.fullmatch(var.name):
            yield Problem(f"{at}[{i}].name", f"{var.name!r} is not a C identifier; allowed: letters, digits and _, "
                          "not starting with a digit")
        if var.value is None:
            yield Problem(f"{at}[{i}].value", "required")
