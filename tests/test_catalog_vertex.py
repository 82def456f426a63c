"""The Vertex AI catalog held against Google's own discovery document and against itself.

- Every accelerator name the catalog uses is a value of aiplatform.v1.json's MachineSpec.acceleratorType
  enum, and every value of that enum is in the catalog or listed as deliberately not offered, with why.
- The other enums the rules read (scheduling strategies, reservation affinity types) are the document's.
- The tables agree with each other: a region's accelerators are its row of the locations table, a TPU
  slice's chips are its topology's product and its VMs the chips over the host's chips, fixed machine types
  carry the count in their names, every table names its source.
- The CustomJobSpec models have the document's fields, no more and no fewer.
"""

from __future__ import annotations

from datetime import date
from math import prod
from typing import Any

import pytest
from pydantic import BaseModel

from gcp_training_jobs.emulator.discovery import get_schema, output_only_fields
from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.catalog import vertex_containers, vertex_jobspec, vertex_machines, vertex_regions
from gcp_training_jobs.jobspec.catalog.source import Source
from gcp_training_jobs.jobspec.vocab import custom_job as vertex_models


def enum(schema: str, field: str) -> list[str]:
    values: list[str] = get_schema("aiplatform", schema)["properties"][field]["enum"]
    return values


ACCELERATOR_ENUM = enum("GoogleCloudAiplatformV1MachineSpec", "acceleratorType")


def catalog_accelerator_names() -> set[str]:
    """Every accelerator name written anywhere in the Vertex tables."""
    names = {m.accelerator for m in catalog.FIXED_ACCELERATOR_MACHINES.values()}
    names |= {gpu for row in catalog.N1_GPU_COUNTS.values() for gpu in row}
    names |= set(catalog.CLOUD_TPU_ACCELERATOR_COUNTS)
    names |= {h.accelerator for h in catalog.TPU_HOSTS.values() if h.accelerator}
    names |= set(catalog.GPU_END_OF_SUPPORT) | set(catalog.GPU_RESERVATION_REQUIRED)
    names |= set(vertex_machines.GPU_RESERVATION_RECOMMENDED) | set(catalog.FLEX_START_GPUS)
    names |= {acc for offered in catalog.REGION_ACCELERATORS.values() for acc in offered}
    names |= {acc for offered in catalog.NOT_FOR_TRAINING.values() for acc in offered}
    names |= set(vertex_regions.ACCELERATOR_LABELS.values())
    return names


def test_every_accelerator_name_of_the_catalog_is_in_the_discovery_enum() -> None:
    unknown = catalog_accelerator_names() - set(ACCELERATOR_ENUM)
    assert not unknown, f"not MachineSpec.acceleratorType values: {sorted(unknown)}"


def test_every_enum_value_is_offered_or_deliberately_not_with_why() -> None:
    offered = set(catalog.VERTEX_ACCELERATOR_TYPES)
    not_offered = dict(catalog.NOT_OFFERED_ACCELERATORS)
    assert not offered & set(not_offered)
    missing = set(ACCELERATOR_ENUM) - offered - set(not_offered)
    assert not missing, f"enum values neither in the catalog nor listed as not offered: {sorted(missing)}"
    assert all(len(why) > 40 for why in not_offered.values())
    assert set(not_offered) <= set(ACCELERATOR_ENUM)


def test_the_issue_s_accelerators_are_all_there() -> None:
    for name in ("NVIDIA_A100_80GB", "NVIDIA_L4", "NVIDIA_H100_80GB", "NVIDIA_H100_MEGA_80GB", "NVIDIA_H200_141GB",
                 "NVIDIA_B200", "NVIDIA_GB200", "NVIDIA_RTX_PRO_6000", "TPU_V2", "TPU_V3", "TPU_V5_LITEPOD"):
        assert name in catalog.VERTEX_ACCELERATOR_TYPES
    assert "TPU_V4_POD" in catalog.NOT_OFFERED_ACCELERATORS


def test_scheduling_and_reservation_enums_are_the_documents() -> None:
    assert list(catalog.SCHEDULING_STRATEGIES) == enum("GoogleCloudAiplatformV1Scheduling", "strategy")
    spec = get_schema("aiplatform", "GoogleCloudAiplatformV1Scheduling")["properties"]["strategy"]
    deprecated = {v for v, d in zip(spec["enum"], spec["enumDeprecated"], strict=True) if d}
    assert deprecated == set(catalog.DEPRECATED_STRATEGIES)
    assert set(catalog.DEPRECATED_STRATEGIES.values()) <= set(catalog.CURRENT_STRATEGIES)
    assert list(catalog.RESERVATION_AFFINITY_TYPES) == enum("GoogleCloudAiplatformV1ReservationAffinity",
                                                            "reservationAffinityType")


def test_region_accelerators_are_the_locations_table_rows() -> None:
    for region in catalog.VERTEX_TRAINING_REGIONS:
        expected: set[str] = set()
        for entry in vertex_regions.ACCELERATOR_TABLE.get(region, ()):
            label = entry.rstrip(" *+†")
            if "†" in entry or label in vertex_regions.UNMAPPED_LABELS or label in vertex_regions.POD_LABELS:
                continue
            expected.add(vertex_regions.ACCELERATOR_LABELS[label])
        assert catalog.REGION_ACCELERATORS[region] == expected, region
    assert set(catalog.REGION_ACCELERATORS) == set(catalog.VERTEX_TRAINING_REGIONS)


def test_tpu_pods_are_the_locations_table_s_pod_entries_in_fewer_regions_than_their_tpus() -> None:
    """"TPU v2 Pod" and "TPU v3 Pod" are the TPU_V2 / TPU_V3 Pods (cloud-tpu past one device's cores), where the
    table lists them for training; each region with a Pod runs its single TPU too, and some run the TPU alone."""
    assert set(vertex_regions.POD_LABELS.values()) == set(catalog.CLOUD_TPU_ACCELERATOR_COUNTS)
    for region in catalog.VERTEX_TRAINING_REGIONS:
        pods = {vertex_regions.POD_LABELS[entry.rstrip(" *+†")] for entry in vertex_regions.ACCELERATOR_TABLE.get(
            region, ()) if entry.rstrip(" *+†") in vertex_regions.POD_LABELS and "†" not in entry}
        assert catalog.REGION_TPU_PODS.get(region, frozenset()) == pods, region
        assert pods <= catalog.REGION_ACCELERATORS[region], region
    assert set(catalog.REGION_TPU_PODS) <= set(catalog.VERTEX_TRAINING_REGIONS)
    for kind in catalog.CLOUD_TPU_ACCELERATOR_COUNTS:  # the issue's point: fewer regions than the TPU's
        with_pod = {r for r, kinds in catalog.REGION_TPU_PODS.items() if kind in kinds}
        with_tpu = {r for r, kinds in catalog.REGION_ACCELERATORS.items() if kind in kinds}
        assert with_pod < with_tpu, kind


@pytest.mark.parametrize(("machine", "topology"), sorted(catalog.TPU_SLICES))
def test_tpu_slices_agree_with_their_hosts(machine: str, topology: str) -> None:
    chips, vms = catalog.TPU_SLICES[(machine, topology)]
    host = catalog.TPU_HOSTS[machine]
    assert chips == prod(int(d) for d in topology.split("x"))
    assert vms * host.chips_per_host == chips
    assert topology in host.topologies


def test_every_documented_topology_has_its_slice_and_googles_example_is_there() -> None:
    for machine, host in catalog.TPU_HOSTS.items():
        for topology in host.topologies:
            assert (machine, topology) in catalog.TPU_SLICES
    assert catalog.TPU_SLICES[("ct5lp-hightpu-4t", "4x4")] == (16, 4)
    assert catalog.TPU_REPLICA_COUNT == 1


def test_fixed_machines_carry_their_count_in_their_names() -> None:
    for machine, fixed in catalog.FIXED_ACCELERATOR_MACHINES.items():
        assert machine.startswith(fixed.family + "-")
        suffix = machine.rsplit("-", 1)[1]
        if suffix.endswith("g"):  # a2/a3/a4: -8g is 8 GPUs (g2/g4 are named by vCPUs)
            assert int(suffix[:-1]) == fixed.count, machine
    assert catalog.FIXED_ACCELERATOR_MACHINES["a3-highgpu-8g"].accelerator == "NVIDIA_H100_80GB"


def test_machine_tables_do_not_overlap_and_n1_gpus_attach_to_listed_types() -> None:
    fixed, cpu, tpu = set(catalog.FIXED_ACCELERATOR_MACHINES), set(catalog.CPU_MACHINE_TYPES), set(catalog.TPU_HOSTS)
    assert not fixed & cpu and not fixed & tpu and not cpu & tpu
    assert set(catalog.N1_GPU_COUNTS) <= cpu
    listed = set(vertex_machines.ACCELERATOR_MACHINE_TYPES_LISTED)
    assert listed - {catalog.CLOUD_TPU_MACHINE} <= fixed | tpu


def test_prebuilt_images_are_unique_with_ordered_dates() -> None:
    images = [c.image for c in catalog.PREBUILT_CONTAINERS]
    assert len(images) == len(set(images))
    for c in catalog.PREBUILT_CONTAINERS:
        assert c.image.startswith("vertex-ai/training/") and c.image.endswith(":latest")
        assert c.end_of_patch is not None and c.end_of_availability is not None
        assert c.end_of_patch <= c.end_of_availability
        assert c.processor in ("cpu", "gpu", "tpu")


def test_every_prebuilt_image_is_past_its_date_on_the_day_the_page_was_read() -> None:
    """What the brief records: on 2026-11-22 no prebuilt image is available any more."""
    read = vertex_containers.SOURCE_PREBUILT.read
    assert read == date(2026, 11, 22)
    assert all(c.end_of_availability is not None and c.end_of_availability < read
               for c in catalog.PREBUILT_CONTAINERS)


@pytest.mark.parametrize("module", [vertex_machines, vertex_regions, vertex_containers, vertex_jobspec],
                         ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_every_vertex_table_module_names_its_sources(module: Any) -> None:
    sources = [v for k, v in vars(module).items() if k.startswith("SOURCE") and isinstance(v, Source)]
    assert sources
    for source in sources:
        assert source.url.startswith("https://") and date(2026, 11, 22) <= source.read <= date.today()


# --- The models are the discovery document's schemas ----------------------------------------------------

MODELS: dict[type[BaseModel], str] = {
    vertex_models.CustomJobSpec: "GoogleCloudAiplatformV1CustomJobSpec",
    vertex_models.WorkerPoolSpec: "GoogleCloudAiplatformV1WorkerPoolSpec",
    vertex_models.MachineSpec: "GoogleCloudAiplatformV1MachineSpec",
    vertex_models.ReservationAffinity: "GoogleCloudAiplatformV1ReservationAffinity",
    vertex_models.DiskSpec: "GoogleCloudAiplatformV1DiskSpec",
    vertex_models.ContainerSpec: "GoogleCloudAiplatformV1ContainerSpec",
    vertex_models.PythonPackageSpec: "GoogleCloudAiplatformV1PythonPackageSpec",
    vertex_models.EnvVar: "GoogleCloudAiplatformV1EnvVar",
    vertex_models.NfsMount: "GoogleCloudAiplatformV1NfsMount",
    vertex_models.LustreMount: "GoogleCloudAiplatformV1LustreMount",
    vertex_models.Scheduling: "GoogleCloudAiplatformV1Scheduling",
    vertex_models.GcsDestination: "GoogleCloudAiplatformV1GcsDestination",
    vertex_models.PscInterfaceConfig: "GoogleCloudAiplatformV1PscInterfaceConfig",
    vertex_models.DnsPeeringConfig: "GoogleCloudAiplatformV1DnsPeeringConfig",
}


@pytest.mark.parametrize("model", list(MODELS), ids=lambda m: m.__name__)
def test_models_have_exactly_the_schema_s_writable_fields(model: type[BaseModel]) -> None:
    schema = MODELS[model]
    writable = set(get_schema("aiplatform", schema)["properties"]) - output_only_fields("aiplatform", schema)
    assert {info.alias for info in model.model_fields.values()} == writable
