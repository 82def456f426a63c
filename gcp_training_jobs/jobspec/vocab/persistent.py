"""A Vertex AI PersistentResource as a stack declares it (`gcp-training-jobs:persistentResources.NAME`): the fields
of aiplatform.v1's PersistentResource that pulumi-gcp's `vertex.AiPersistentResource` carries, camelCase only,
unknown keys refused. Shape and types only: the pools are judged by the same pool rules as a job's
(rules.persistent), once translated into the one Pool form (translate.persistent).

A resource pool's machineSpec has machineType, acceleratorType and acceleratorCount: pulumi-gcp's
AiPersistentResourceResourcePoolMachineSpec has no tpuTopology or reservation, so neither is taken here.
"""

from __future__ import annotations

from pydantic import Field

from gcp_training_jobs.jobspec.vocab.custom_job import CamelModel, DiskSpec
from gcp_training_jobs.jobspec.vocab.training_input import Int32, Int64


class ResourceMachineSpec(CamelModel):
    """ResourcePool.machineSpec: the machine of every replica of the pool."""

    machine_type: str
    accelerator_type: str | None = None
    accelerator_count: Int32 | None = Field(default=None, ge=0)


class AutoscalingSpec(CamelModel):
    """ResourcePool.autoscalingSpec: the pool's replicas grow and shrink between these (a PersistentResource's
    minReplicaCount is at least 1)."""

    min_replica_count: Int64 = Field(ge=1)
    max_replica_count: Int64 = Field(ge=1)


class ResourcePool(CamelModel):
    """One pool of a persistent resource: its machine, replicas (fixed, or autoscaling) and boot disk."""

    machine_spec: ResourceMachineSpec
    replica_count: Int64 | None = Field(default=None, ge=1)
    autoscaling_spec: AutoscalingSpec | None = None
    disk_spec: DiskSpec | None = None


class PersistentResourceSpec(CamelModel):
    """`gcp-training-jobs:persistentResources.NAME`: where it lives (default: the stack's region), its labels (the
    stack's are added under them), a display name, and its pools (at least one)."""

    region: str | None = None
    labels: dict[str, str] | None = None
    display_name: str | None = Field(default=None, max_length=128)
    resource_pools: list[ResourcePool] = Field(min_length=1)
