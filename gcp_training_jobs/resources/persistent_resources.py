"""The stack's Vertex AI persistent resources (`gcp-training-jobs:persistentResources`), each a pulumi-gcp
`vertex.AiPersistentResource` (the project's real dependency, like the buckets), after the APIs, with the stack's
labels under its own, from the resource as judged (settings.persistent: `StackSettings.resources`). Before the
stack's first pulumi-gcp resource, a warning says what to install when pulumi-gcp's resource plugin is not where the
engine looks, naming every resource that needs it (`plugins`, `warn_missing_plugin`): said first, in the project's
words, where the engine's own error would follow (under `plan`, its review says it instead:
cli.plan.review.plugins_missing)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pulumi
import pulumi_gcp as gcp

from gcp_training_jobs.jobspec.translate.persistent import ResourceFacts
from gcp_training_jobs.jobspec.vocab.persistent import ResourcePool
from gcp_training_jobs.resources.plugins import gcp_plugin, gcp_resources_of
from gcp_training_jobs.resources.settings import StackSettings
from gcp_training_jobs.resources.settings.pulumi_config import given_by_caller


def _pool(pool: ResourcePool) -> gcp.vertex.AiPersistentResourceResourcePoolArgs:
    ms, disk, scaling = pool.machine_spec, pool.disk_spec, pool.autoscaling_spec
    replicas = pool.replica_count if pool.replica_count is not None else (
        scaling.min_replica_count if scaling else 1)
    return gcp.vertex.AiPersistentResourceResourcePoolArgs(
        machine_spec=gcp.vertex.AiPersistentResourceResourcePoolMachineSpecArgs(
            machine_type=ms.machine_type, accelerator_type=ms.accelerator_type,
            accelerator_count=ms.accelerator_count),
        replica_count=str(replicas),  # int64 travels as text
        autoscaling_spec=gcp.vertex.AiPersistentResourceResourcePoolAutoscalingSpecArgs(
            min_replica_count=str(scaling.min_replica_count), max_replica_count=str(scaling.max_replica_count))
        if scaling else None,
        disk_spec=gcp.vertex.AiPersistentResourceResourcePoolDiskSpecArgs(
            boot_disk_type=disk.boot_disk_type, boot_disk_size_gb=disk.boot_disk_size_gb) if disk else None,
    )


def _under(own: dict[str, str]) -> Callable[[Mapping[str, str]], dict[str, str]]:
    """The stack's labels with a resource's own over them."""
    return lambda given: {**given, **own}


def warn_missing_plugin(settings: StackSettings) -> None:
    """Before the stack's first pulumi-gcp resource, what to install when pulumi-gcp's resource plugin is not where
    the engine looks, naming every resource of the stack that needs it (plugins.gcp_resources_of; under `plan`, its
    review says it instead)."""
    if given_by_caller() or (needing := gcp_resources_of(settings)) is None:
        return
    if (plugin := gcp_plugin()).found is None:
        pulumi.log.warn(plugin.needed(needing))


def persistent_resources(resources: Mapping[str, ResourceFacts], *, project: pulumi.Input[str],
                         labels: pulumi.Input[Mapping[str, str]], after: Sequence[pulumi.Resource]
                         ) -> dict[str, gcp.vertex.AiPersistentResource]:
    """One AiPersistentResource per declared resource (its id as its name, in its region), each after `after`."""
    made: dict[str, gcp.vertex.AiPersistentResource] = {}
    for name, facts in sorted(resources.items()):
        spec = facts.spec
        assert spec is not None  # a declared resource is held with its spec
        merged = pulumi.Output.from_input(labels).apply(_under(dict(spec.labels or {})))
        made[name] = gcp.vertex.AiPersistentResource(
            name, name=name, project=project, location=facts.region, display_name=spec.display_name,
            labels=merged, resource_pools=[_pool(pool) for pool in spec.resource_pools],
            opts=pulumi.ResourceOptions(depends_on=list(after)))
    return made
