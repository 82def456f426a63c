"""Typed models of a Vertex AI job in its own vocabulary: the CustomJobSpec of aiplatform.v1.json.

A file for `gcloud ai custom-jobs create --config FILE --region R` is a CustomJobSpec ("This file should be a
YAML document containing a CustomJobSpec ... Note that keys with underscore are invalid."), so the models here
take camelCase keys only (no snake_case aliases, unlike the ml v1 models), and `workerPoolSpecs` may be one
mapping instead of a list, as gcloud's own --config example writes it. Field for field they follow the
discovery document's schemas (tests/test_catalog_vertex.py holds them to it); like the ml v1 models
(vocab.training_input) they check shape and types only, and gcp_training_jobs.jobspec.rules judges the values.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, ValidationError
from pydantic.alias_generators import to_camel

from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import JOB_SPEC
from gcp_training_jobs.jobspec.core.problems import Problem, from_validation_error
from gcp_training_jobs.jobspec.io.vocabulary import as_written
from gcp_training_jobs.jobspec.vocab.training_input import Int32, Int64


class CamelModel(BaseModel):
    """Base of the Vertex models: camelCase keys only (as gcloud and the JSON API read them), unknown keys
    refused (a snake_case key is named with its camelCase form), values immutable. Their validators are built at
    first use (`defer_build`), so reading a trainingInput file never pays for the Vertex vocabularies."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=False, frozen=True,
                              defer_build=True)


class ReservationAffinity(CamelModel):
    """MachineSpec.reservationAffinity: which Compute Engine reservation the pool's VMs consume."""

    reservation_affinity_type: str | None = None
    key: str | None = None
    values: list[str] | None = None


class MachineSpec(CamelModel):
    """WorkerPoolSpec.machineSpec: the machine of every replica of a pool."""

    machine_type: str | None = None
    accelerator_type: str | None = None
    accelerator_count: Int32 | None = None
    tpu_topology: str | None = None
    reservation_affinity: ReservationAffinity | None = None
    gpu_partition_size: str | None = None


class DiskSpec(CamelModel):
    """WorkerPoolSpec.diskSpec: the boot disk of each replica."""

    boot_disk_type: str | None = None
    boot_disk_size_gb: Int32 | None = None


class EnvVar(CamelModel):
    """An environment variable of a container or a Python package task."""

    name: str | None = None
    value: str | None = None


class ContainerSpec(CamelModel):
    """WorkerPoolSpec.containerSpec: a custom container."""

    image_uri: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None


class PythonPackageSpec(CamelModel):
    """WorkerPoolSpec.pythonPackageSpec: a Python package run in a prebuilt container."""

    executor_image_uri: str | None = None
    package_uris: list[str] | None = None
    python_module: str | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None


class NfsMount(CamelModel):
    """An NFS share mounted under /mnt/nfs/."""

    server: str | None = None
    path: str | None = None
    mount_point: str | None = None


class LustreMount(CamelModel):
    """A Lustre file system mounted under /mnt/lustre/."""

    instance_ip: str | None = None
    volume_handle: str | None = None
    filesystem: str | None = None
    mount_point: str | None = None


class WorkerPoolSpec(CamelModel):
    """One worker pool; `{}` is a placeholder that keeps the numbering of the pools after it."""

    machine_spec: MachineSpec | None = None
    replica_count: Int64 | None = None
    container_spec: ContainerSpec | None = None
    python_package_spec: PythonPackageSpec | None = None
    disk_spec: DiskSpec | None = None
    nfs_mounts: list[NfsMount] | None = None
    lustre_mounts: list[LustreMount] | None = None

    @property
    def is_placeholder(self) -> bool:
        """`{}` (or only nulls): a pool Vertex skips."""
        return not self.model_dump(exclude_none=True)


class Scheduling(CamelModel):
    """CustomJobSpec.scheduling: strategy (STANDARD, SPOT, FLEX_START), limits and restarts."""

    timeout: str | None = None
    restart_job_on_worker_restart: StrictBool | None = None
    strategy: str | None = None
    disable_retries: StrictBool | None = None
    max_wait_duration: str | None = None


class GcsDestination(CamelModel):
    """CustomJobSpec.baseOutputDirectory."""

    output_uri_prefix: str | None = None


class DnsPeeringConfig(CamelModel):
    """One DNS peering of pscInterfaceConfig."""

    domain: str | None = None
    target_project: str | None = None
    target_network: str | None = None


class PscInterfaceConfig(CamelModel):
    """CustomJobSpec.pscInterfaceConfig: Private Service Connect interface."""

    network_attachment: str | None = None
    dns_peering_configs: list[DnsPeeringConfig] | None = None


class CustomJobSpec(CamelModel):
    """aiplatform v1 CustomJobSpec: what `gcloud ai custom-jobs create --config` reads."""

    worker_pool_specs: list[WorkerPoolSpec] | None = None
    scheduling: Scheduling | None = None
    service_account: str | None = None
    network: str | None = None
    reserved_ip_ranges: list[str] | None = None
    psc_interface_config: PscInterfaceConfig | None = None
    base_output_directory: GcsDestination | None = None
    protected_artifact_location_id: str | None = None
    tensorboard: str | None = None
    enable_web_access: StrictBool | None = None
    enable_dashboard_access: StrictBool | None = None
    experiment: str | None = None
    experiment_run: str | None = None
    models: list[str] | None = None
    persistent_resource_id: str | None = None


def parse_custom_job_spec(data: Any) -> tuple[CustomJobSpec, bool]:
    """Parse a CustomJobSpec mapping: the model, and whether `workerPoolSpecs` was a single mapping.
    SpecError carries every shape problem, with the paths as the user wrote them."""
    if not isinstance(data, dict):
        raise SpecError([Problem("", f"expected a mapping with workerPoolSpecs, got {type(data).__name__}")])
    if JOB_SPEC in data:
        keys = ", ".join(sorted(k for k in data if k != JOB_SPEC)) or "none"
        raise SpecError([Problem(JOB_SPEC, "is a CustomJob request body (other keys: " + keys + "); allowed: a "
                                 "CustomJobSpec, as `gcloud ai custom-jobs create --config` reads it: workerPoolSpecs, "
                                 "scheduling, ... at the top level (the name comes from --display-name or the file "
                                 "name, labels from --labels or the stack)")])
    pools = data.get("workerPoolSpecs")
    single = isinstance(pools, dict)
    if single:
        data = {**data, "workerPoolSpecs": [pools]}
    try:
        return CustomJobSpec.model_validate(data), single
    except ValidationError as error:
        problems = from_validation_error(error, CustomJobSpec)
        if single:
            problems = [Problem(as_written(p.path, single), p.message, p.file) for p in problems]
        raise SpecError(problems) from None


def spec_body(spec: CustomJobSpec) -> dict[str, Any]:
    """The CustomJobSpec as the JSON API takes it: the user's fields as given (camelCase, int64 as decimal
    strings), a placeholder pool as `{}`, nothing added."""
    body: dict[str, Any] = spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    return body
