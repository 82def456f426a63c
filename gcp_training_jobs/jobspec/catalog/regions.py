"""Where AI Platform Training offered GPUs and TPUs: regions and the GPU types of each zone; and where each backend
trains (BACKEND_REGIONS, the one home the region rule, rules.regions, reads). Data only.

Sources: ai_platform_pages (the AI Platform Training GPU and TPU guides, Compute Engine's GPU zones), named per
table; Vertex AI's regions are vertex_regions' (its Locations page).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from gcp_training_jobs.jobspec.catalog.accelerators import A100, K80, P4, P100, T4, V100
from gcp_training_jobs.jobspec.catalog.ai_platform_pages import SOURCE_GPU_ZONES, SOURCE_USING_GPUS, SOURCE_USING_TPUS
from gcp_training_jobs.jobspec.catalog.vertex_regions import SOURCE_LOCATIONS
from gcp_training_jobs.jobspec.catalog.vertex_regions import TRAINING_REGIONS as VERTEX_TRAINING_REGIONS
from gcp_training_jobs.jobspec.core.names import AI_PLATFORM, VERTEX

# --- Regions and zones ----------------------------------------------------------------------------

#: Regions where AI Platform Training offers GPUs. Source: the AI Platform Training GPU guide, "Regiões
#: compatíveis com GPUs" (regions that support GPUs).
GPU_REGIONS: Final = (
    "us-west1", "us-west2", "us-central1", "us-east1", "us-east4",
    "northamerica-northeast1", "southamerica-east1",
    "europe-west1", "europe-west2", "europe-west4",
    "asia-south1", "asia-southeast1", "asia-east1", "asia-northeast1", "asia-northeast3",
    "australia-southeast1",
)
GPU_REGIONS_SOURCES: Final = (SOURCE_USING_GPUS,)

#: Regions a training job may name at all: the GPU regions of the GPU guide, and no other; a job without
#: accelerators is held to the same list. AI Platform Training's regions page
#: (https://cloud.google.com/ai-platform/training/docs/regions) was not read: a training region it lists beyond
#: these 16 is refused here.
TRAINING_REGIONS: Final = GPU_REGIONS
TRAINING_REGIONS_SOURCES: Final = GPU_REGIONS_SOURCES

#: Where each backend trains: AI Platform Training's regions (above), Vertex AI's (vertex_regions, the Locations
#: page). The one answer to "the regions a backend trains in": the region rule (rules.regions) reads it, and the
#: settings, persistent resources and job rules ask that rule.
BACKEND_REGIONS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    AI_PLATFORM: TRAINING_REGIONS,
    VERTEX: VERTEX_TRAINING_REGIONS,
})
BACKEND_REGIONS_SOURCES: Final = (*TRAINING_REGIONS_SOURCES, SOURCE_LOCATIONS)

#: Zones offering each GPU type, for the regions above. Source: Compute Engine "GPU regions and zones"
#: (https://cloud.google.com/compute/docs/gpus/gpu-regions-zones), as scraped in 2022 into SkyPilot's public
#: zone table (SOURCE_GPU_ZONES), with one exception taken from the AI Platform Training GPU guide: that table
#: lists T4 in us-central1-c, added after the guide was written; the guide states that no us-central1 zone
#: offered T4, K80 and P100 together, so T4 is us-central1-a, -b and -f here (K80 a, c; P100 c, f).
GPU_ZONES: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    K80: (
        "us-central1-a", "us-central1-c", "us-east1-c", "us-east1-d", "us-west1-b",
        "europe-west1-b", "europe-west1-d", "asia-east1-a", "asia-east1-b",
    ),
    P4: (
        "us-central1-a", "us-central1-c", "us-east4-a", "us-east4-b", "us-east4-c",
        "us-west2-b", "us-west2-c", "northamerica-northeast1-a", "northamerica-northeast1-b",
        "northamerica-northeast1-c", "europe-west4-b", "europe-west4-c", "asia-southeast1-b",
        "asia-southeast1-c", "australia-southeast1-a", "australia-southeast1-b",
    ),
    P100: (
        "us-central1-c", "us-central1-f", "us-east1-b", "us-east1-c", "us-west1-a", "us-west1-b",
        "europe-west1-b", "europe-west1-d", "europe-west4-a", "asia-east1-a", "asia-east1-c",
        "australia-southeast1-c",
    ),
    T4: (
        "us-central1-a", "us-central1-b", "us-central1-f", "us-east1-c", "us-east1-d",
        "us-east4-b", "us-east4-c", "us-west1-a", "us-west1-b", "us-west2-b",
        "us-west2-c", "northamerica-northeast1-c", "southamerica-east1-b", "southamerica-east1-c",
        "europe-west1-b", "europe-west1-c", "europe-west1-d", "europe-west2-a", "europe-west2-b",
        "europe-west4-a", "europe-west4-b", "europe-west4-c", "asia-east1-a", "asia-east1-c",
        "asia-northeast1-a", "asia-northeast1-c",
        "asia-northeast3-b", "asia-northeast3-c", "asia-south1-a", "asia-south1-b",
        "asia-southeast1-a", "asia-southeast1-b", "asia-southeast1-c", "australia-southeast1-a",
        "australia-southeast1-c",
    ),
    V100: (
        "us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f", "us-east1-c",
        "us-west1-a", "us-west1-b", "europe-west4-a", "europe-west4-b", "europe-west4-c",
        "asia-east1-c",
    ),
    A100: (
        "us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f", "us-east1-b",
        "us-west1-b", "europe-west4-a", "europe-west4-b", "asia-northeast1-a", "asia-northeast1-c",
        "asia-northeast3-a", "asia-northeast3-b", "asia-southeast1-b", "asia-southeast1-c",
    ),
})
GPU_ZONES_SOURCES: Final = (SOURCE_GPU_ZONES, SOURCE_USING_GPUS)


def _zones_by_region() -> Mapping[str, Mapping[str, frozenset[str]]]:
    table: dict[str, dict[str, set[str]]] = {}
    for gpu, zones in GPU_ZONES.items():
        for zone in zones:
            region = zone.rsplit("-", 1)[0]
            table.setdefault(region, {}).setdefault(zone, set()).add(gpu)
    return MappingProxyType({
        region: MappingProxyType({zone: frozenset(gpus) for zone, gpus in sorted(zones.items())})
        for region, zones in table.items()
    })


#: region -> zone -> GPU types offered there (derived from GPU_ZONES).
REGION_ZONES: Final = _zones_by_region()
REGION_ZONES_SOURCES: Final = GPU_ZONES_SOURCES

#: Regions with Cloud TPUs for training. Source: the AI Platform Training TPU guide, "Como especificar uma
#: região que oferece TPUs" (specifying a region that offers TPUs).
TPU_REGIONS: Final = ("us-central1",)
TPU_REGIONS_SOURCES: Final = (SOURCE_USING_TPUS,)
