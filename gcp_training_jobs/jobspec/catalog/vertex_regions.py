"""Where Vertex AI custom training runs, and which accelerators each region offers it. Data only.

Every table below is transcribed from one page, the Vertex AI "Locations" page, which Google now publishes
under the Gemini Enterprise Agent Platform name (SOURCE_LOCATIONS). Accelerator names are the enum values
of aiplatform.v1.json's MachineSpec.acceleratorType.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from types import MappingProxyType
from typing import Final

from gcp_training_jobs.jobspec.catalog.source import Source

SOURCE_LOCATIONS: Final = Source(
    title="Locations for machine learning services",
    url="https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/general/locations",
    read=date(2026, 11, 22),
    note=(
        "Successor of cloud.google.com/vertex-ai/docs/general/locations; the other pages still link the old "
        "address. Read whole; the page shows no 'last updated' date."
    ),
)

# --- Regions ---------------------------------------------------------------------------------------

#: Regions offering custom training. Source: SOURCE_LOCATIONS, "Feature availability": "Some Agent
#: Platform features aren't available in all regions. The following table lists the features that are
#: available in each region." Every region with the feature "Custom model training" is listed here (in the
#: table's order); all 38 rows of that table have it.
#:
#: The page's list "Agent Platform machine learning services are available in the following regions" has
#: one region more, Delhi, India (asia-south2), which has no row in the feature table, so it is not listed
#: here (see ACCELERATOR_TABLE_ONLY_REGIONS).
TRAINING_REGIONS: Final = (
    "asia-east1", "africa-south1", "asia-east2", "asia-northeast1", "asia-northeast2", "asia-northeast3",
    "asia-south1", "asia-southeast1", "asia-southeast2", "australia-southeast1", "australia-southeast2",
    "europe-central2", "europe-north1", "europe-southwest1", "europe-west1", "europe-west2", "europe-west3",
    "europe-west4", "europe-west6", "europe-west8", "europe-west9", "europe-west12",
    "me-central1", "me-central2", "me-west1",
    "northamerica-northeast1", "northamerica-northeast2", "southamerica-east1", "southamerica-west1",
    "us-central1", "us-east1", "us-east4", "us-east5", "us-south1", "us-west1", "us-west2", "us-west3",
    "us-west4",
)

# --- Accelerator names -----------------------------------------------------------------------------

#: How the page's accelerator labels map onto MachineSpec.acceleratorType. The page names accelerators by
#: short labels (filter buttons "A100 40GB A100 80GB B200 GB200 RTX PRO 6000 H100 H100 Mega H200 L4 P4 P100
#: T4 TPU v2 TPU v2 Pod TPU v3 TPU v3 Pod TPU v5e TPU v6e TPU7x V100"). The enum descriptions
#: (aiplatform.v1.json revision 20261106) are "Nvidia Tesla A100 GPU", "Nvidia A100 80GB GPU",
#: "Nvidia H100 80Gb GPU", "Nvidia H100 Mega 80Gb GPU", "Nvidia H200 141Gb GPU", "Nvidia RTX Pro 6000 GPU",
#: "TPU v5." and so on. "TPU v5e" is mapped to TPU_V5_LITEPOD (Cloud TPU calls v5e "v5litepod"; the enum
#: description says only "TPU v5.").
ACCELERATOR_LABELS: Final[Mapping[str, str]] = MappingProxyType({
    "A100 40GB": "NVIDIA_TESLA_A100",
    "A100 80GB": "NVIDIA_A100_80GB",
    "B200": "NVIDIA_B200",
    "GB200": "NVIDIA_GB200",
    "RTX PRO 6000": "NVIDIA_RTX_PRO_6000",
    "H100": "NVIDIA_H100_80GB",
    "H100 Mega": "NVIDIA_H100_MEGA_80GB",
    "H200": "NVIDIA_H200_141GB",
    "L4": "NVIDIA_L4",
    "P4": "NVIDIA_TESLA_P4",
    "P100": "NVIDIA_TESLA_P100",
    "T4": "NVIDIA_TESLA_T4",
    "V100": "NVIDIA_TESLA_V100",
    "TPU v2": "TPU_V2",
    "TPU v3": "TPU_V3",
    "TPU v5e": "TPU_V5_LITEPOD",
})

#: The page's TPU Pod labels, and the accelerator type each Pod is a slice of. The enum has no value for a Pod
#: of its own: on Vertex AI a TPU v2 or v3 Pod is the same TPU_V2 / TPU_V3 on machine type cloud-tpu, with more
#: cores than one device's (vertex_machines.CLOUD_TPU_POD_COUNT_RULE: "8 for single TPU or 32 or multiple of 32
#: for TPU Pods", "32+" for TPU_V3; cloud-tpu takes no tpuTopology). Every region listing a Pod also lists the
#: plain TPU; not every region listing the plain TPU lists its Pod. Their regions are REGION_TPU_PODS.
POD_LABELS: Final[Mapping[str, str]] = MappingProxyType({"TPU v2 Pod": "TPU_V2", "TPU v3 Pod": "TPU_V3"})

#: Labels on the page with no MachineSpec.acceleratorType value at all: "TPU v6e" and "TPU7x" (none in
#: aiplatform.v1.json revision 20261106; their machine types name them, UNMAPPED_MACHINE_LABELS). They are left
#: out of REGION_ACCELERATORS and kept in UNMAPPED_ACCELERATORS.
UNMAPPED_LABELS: Final = ("TPU v6e", "TPU7x")

# --- Accelerators per region -----------------------------------------------------------------------

#: The page's accelerator table, row by row, as printed (markers kept). Source: SOURCE_LOCATIONS, "Using
#: accelerators": "Accelerators are available on a region basis. The following table lists all the
#: available accelerators for each region." Footnotes: "* The specified accelerator isn't available for
#: serving batch or online inferences." "+ The specified accelerator is available on an allowlist-only
#: basis for serving batch or online inferences." "† The specified accelerator isn't available for
#: training." Regions without a row are absent. (The page gives southamerica-west1's location as "Osasco,
#: São Paulo, Brazil", evidently copied from the row above; its region list says Santiago, Chile.)
ACCELERATOR_TABLE: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    "asia-east1": ("L4 †", "P100", "T4", "TPU v2 *", "V100", "H100 Mega *"),
    "asia-east2": ("T4",),
    "asia-northeast1": ("A100 40GB †", "H100", "H100 Mega", "B200 *", "L4 †", "T4", "TPU v6e"),
    "asia-northeast3": ("A100 40GB", "H100", "L4", "T4"),
    "asia-south1": ("H100", "L4", "T4", "H200"),
    "asia-south2": ("H200", "RTX PRO 6000"),
    "asia-southeast1": (
        "A100 40GB", "A100 80GB", "B200", "H100", "H100 Mega", "L4", "P4", "T4", "RTX PRO 6000",
    ),
    "asia-southeast2": ("T4",),
    "australia-southeast1": ("H100 Mega", "P4", "T4"),
    "europe-central2": ("T4",),
    "europe-north1": ("H100 Mega *",),
    "europe-west1": ("H100", "H100 Mega", "H200", "L4 †", "P100", "T4"),
    "europe-west2": ("H100", "L4", "T4"),
    "europe-west3": ("H100", "H100 Mega *", "L4 †", "T4"),
    "europe-west4": (
        "A100 40GB", "A100 80GB", "H100", "H100 Mega", "H200", "B200 *", "L4", "P4", "T4", "V100", "P100 *",
        "RTX PRO 6000", "TPU v2 *", "TPU v2 Pod *", "TPU v3 *", "TPU v3 Pod *", "TPU v5e †", "TPU v6e",
    ),
    "europe-west6": ("L4 †",),
    "me-central2": ("L4",),
    "me-west1": ("A100 40GB", "A100 80GB †", "T4 †"),
    "northamerica-northeast1": ("P4", "T4"),
    "northamerica-northeast2": ("H100", "L4"),
    "southamerica-east1": ("T4",),
    "southamerica-west1": ("T4 †", "TPU v6e *"),
    "us-central1": (
        "A100 40GB", "A100 80GB", "B200", "H100", "H100 Mega", "GB200", "H200", "L4", "P4", "P100", "T4",
        "RTX PRO 6000", "TPU v2 *", "TPU v2 Pod *", "TPU v3 *", "TPU v5e *", "TPU v6e", "TPU7x", "V100",
    ),
    "us-east1": (
        "A100 40GB *", "B200 *", "L4", "P100", "T4", "RTX PRO 6000", "TPU v5e *", "TPU v6e +", "V100",
    ),
    "us-east4": (
        "A100 80GB", "H100", "H100 Mega", "H200", "B200 *", "GB200 *", "L4", "P4", "T4", "RTX PRO 6000",
    ),
    "us-east5": ("A100 80GB", "H100", "H100 Mega", "H200 *", "TPU v6e"),
    "us-south1": ("TPU v5e †", "TPU v6e *", "B200 *", "H200"),
    "us-west1": ("H100 Mega", "H200", "L4", "P100", "T4", "H100", "TPU v5e", "V100"),
    "us-west2": ("P4", "T4", "B200"),
    "us-west3": ("A100 40GB", "B200 *"),
    "us-west4": ("A100 40GB *", "H100", "H100 Mega", "L4 †", "T4", "TPU v5e"),
})

#: Accelerators custom training may attach in each training region: ACCELERATOR_TABLE's row without the
#: "†" entries ("isn't available for training"), the Pods (POD_LABELS: REGION_TPU_PODS) and UNMAPPED_LABELS, as
#: enum values (a TPU_V2 / TPU_V3 here is its single device, 8 cores). "*" and "+"
#: only restrict serving, so those entries stay. Training regions with no row in the table, or whose every
#: entry is "†" or unmapped, offer none (frozenset()). Keys are exactly TRAINING_REGIONS.
REGION_ACCELERATORS: Final[Mapping[str, frozenset[str]]] = MappingProxyType({
    "asia-east1": frozenset({
        "NVIDIA_TESLA_P100", "NVIDIA_TESLA_T4", "TPU_V2", "NVIDIA_TESLA_V100", "NVIDIA_H100_MEGA_80GB",
    }),
    "africa-south1": frozenset(),
    "asia-east2": frozenset({"NVIDIA_TESLA_T4"}),
    "asia-northeast1": frozenset({
        "NVIDIA_H100_80GB", "NVIDIA_H100_MEGA_80GB", "NVIDIA_B200", "NVIDIA_TESLA_T4",
    }),
    "asia-northeast2": frozenset(),
    "asia-northeast3": frozenset({"NVIDIA_TESLA_A100", "NVIDIA_H100_80GB", "NVIDIA_L4", "NVIDIA_TESLA_T4"}),
    "asia-south1": frozenset({"NVIDIA_H100_80GB", "NVIDIA_L4", "NVIDIA_TESLA_T4", "NVIDIA_H200_141GB"}),
    "asia-southeast1": frozenset({
        "NVIDIA_TESLA_A100", "NVIDIA_A100_80GB", "NVIDIA_B200", "NVIDIA_H100_80GB", "NVIDIA_H100_MEGA_80GB",
        "NVIDIA_L4", "NVIDIA_TESLA_P4", "NVIDIA_TESLA_T4", "NVIDIA_RTX_PRO_6000",
    }),
    "asia-southeast2": frozenset({"NVIDIA_TESLA_T4"}),
    "australia-southeast1": frozenset({"NVIDIA_H100_MEGA_80GB", "NVIDIA_TESLA_P4", "NVIDIA_TESLA_T4"}),
    "australia-southeast2": frozenset(),
    "europe-central2": frozenset({"NVIDIA_TESLA_T4"}),
    "europe-north1": frozenset({"NVIDIA_H100_MEGA_80GB"}),
    "europe-southwest1": frozenset(),
    "europe-west1": frozenset({
        "NVIDIA_H100_80GB", "NVIDIA_H100_MEGA_80GB", "NVIDIA_H200_141GB", "NVIDIA_TESLA_P100",
        "NVIDIA_TESLA_T4",
    }),
    "europe-west2": frozenset({"NVIDIA_H100_80GB", "NVIDIA_L4", "NVIDIA_TESLA_T4"}),
    "europe-west3": frozenset({"NVIDIA_H100_80GB", "NVIDIA_H100_MEGA_80GB", "NVIDIA_TESLA_T4"}),
    "europe-west4": frozenset({
        "NVIDIA_TESLA_A100", "NVIDIA_A100_80GB", "NVIDIA_H100_80GB", "NVIDIA_H100_MEGA_80GB",
        "NVIDIA_H200_141GB", "NVIDIA_B200", "NVIDIA_L4", "NVIDIA_TESLA_P4", "NVIDIA_TESLA_T4",
        "NVIDIA_TESLA_V100", "NVIDIA_TESLA_P100", "NVIDIA_RTX_PRO_6000", "TPU_V2", "TPU_V3",
    }),
    "europe-west6": frozenset(),
    "europe-west8": frozenset(),
    "europe-west9": frozenset(),
    "europe-west12": frozenset(),
    "me-central1": frozenset(),
    "me-central2": frozenset({"NVIDIA_L4"}),
    "me-west1": frozenset({"NVIDIA_TESLA_A100"}),
    "northamerica-northeast1": frozenset({"NVIDIA_TESLA_P4", "NVIDIA_TESLA_T4"}),
    "northamerica-northeast2": frozenset({"NVIDIA_H100_80GB", "NVIDIA_L4"}),
    "southamerica-east1": frozenset({"NVIDIA_TESLA_T4"}),
    "southamerica-west1": frozenset(),
    "us-central1": frozenset({
        "NVIDIA_TESLA_A100", "NVIDIA_A100_80GB", "NVIDIA_B200", "NVIDIA_H100_80GB", "NVIDIA_H100_MEGA_80GB",
        "NVIDIA_GB200", "NVIDIA_H200_141GB", "NVIDIA_L4", "NVIDIA_TESLA_P4", "NVIDIA_TESLA_P100",
        "NVIDIA_TESLA_T4", "NVIDIA_RTX_PRO_6000", "TPU_V2", "TPU_V3", "TPU_V5_LITEPOD", "NVIDIA_TESLA_V100",
    }),
    "us-east1": frozenset({
        "NVIDIA_TESLA_A100", "NVIDIA_B200", "NVIDIA_L4", "NVIDIA_TESLA_P100", "NVIDIA_TESLA_T4",
        "NVIDIA_RTX_PRO_6000", "TPU_V5_LITEPOD", "NVIDIA_TESLA_V100",
    }),
    "us-east4": frozenset({
        "NVIDIA_A100_80GB", "NVIDIA_H100_80GB", "NVIDIA_H100_MEGA_80GB", "NVIDIA_H200_141GB", "NVIDIA_B200",
        "NVIDIA_GB200", "NVIDIA_L4", "NVIDIA_TESLA_P4", "NVIDIA_TESLA_T4", "NVIDIA_RTX_PRO_6000",
    }),
    "us-east5": frozenset({
        "NVIDIA_A100_80GB", "NVIDIA_H100_80GB", "NVIDIA_H100_MEGA_80GB", "NVIDIA_H200_141GB",
    }),
    "us-south1": frozenset({"NVIDIA_B200", "NVIDIA_H200_141GB"}),
    "us-west1": frozenset({
        "NVIDIA_H100_MEGA_80GB", "NVIDIA_H200_141GB", "NVIDIA_L4", "NVIDIA_TESLA_P100", "NVIDIA_TESLA_T4",
        "NVIDIA_H100_80GB", "TPU_V5_LITEPOD", "NVIDIA_TESLA_V100",
    }),
    "us-west2": frozenset({"NVIDIA_TESLA_P4", "NVIDIA_TESLA_T4", "NVIDIA_B200"}),
    "us-west3": frozenset({"NVIDIA_TESLA_A100", "NVIDIA_B200"}),
    "us-west4": frozenset({
        "NVIDIA_TESLA_A100", "NVIDIA_H100_80GB", "NVIDIA_H100_MEGA_80GB", "NVIDIA_TESLA_T4", "TPU_V5_LITEPOD",
    }),
})

#: Accelerators the table lists for a region but marks "†" ("isn't available for training"), as enum
#: values. They are not in REGION_ACCELERATORS. Source: SOURCE_LOCATIONS, accelerator table.
NOT_FOR_TRAINING: Final[Mapping[str, frozenset[str]]] = MappingProxyType({
    "asia-east1": frozenset({"NVIDIA_L4"}),
    "asia-northeast1": frozenset({"NVIDIA_TESLA_A100", "NVIDIA_L4"}),
    "europe-west1": frozenset({"NVIDIA_L4"}),
    "europe-west3": frozenset({"NVIDIA_L4"}),
    "europe-west4": frozenset({"TPU_V5_LITEPOD"}),
    "europe-west6": frozenset({"NVIDIA_L4"}),
    "me-west1": frozenset({"NVIDIA_A100_80GB", "NVIDIA_TESLA_T4"}),
    "southamerica-west1": frozenset({"NVIDIA_TESLA_T4"}),
    "us-south1": frozenset({"TPU_V5_LITEPOD"}),
    "us-west4": frozenset({"NVIDIA_L4"}),
})

#: The TPU types whose Pods custom training runs in a region (cloud-tpu with more cores than one device's, the
#: enum values POD_LABELS maps the page's "TPU v2 Pod" and "TPU v3 Pod" to), as ACCELERATOR_TABLE lists them (no
#: "†" on either). A region without an entry runs no TPU Pod, though it may run the single device: asia-east1
#: runs a TPU v2 and us-central1 a TPU v3, but neither region's Pod. Source: SOURCE_LOCATIONS (Vertex AI's
#: locations page, https://cloud.google.com/vertex-ai/docs/general/locations, now published at SOURCE_LOCATIONS.url;
#: read 2026-11-22), accelerator table (its rows above; the filter buttons "TPU v2 Pod" and "TPU v3 Pod"). Cloud
#: TPU's "TPU regions and zones" (https://cloud.google.com/tpu/docs/regions-zones, read 2026-12-02) agrees: v2-32
#: to v2-512 in us-central1-a and europe-west4-a, v3-32 to v3-2048 in europe-west4-a only, v2-8 in asia-east1-c.
REGION_TPU_PODS: Final[Mapping[str, frozenset[str]]] = MappingProxyType({
    "europe-west4": frozenset({"TPU_V2", "TPU_V3"}),
    "us-central1": frozenset({"TPU_V2"}),
})

#: Accelerators the table lists (not "†") that have no MachineSpec.acceleratorType value, by page label.
#: Not in REGION_ACCELERATORS. Source: SOURCE_LOCATIONS, accelerator table.
UNMAPPED_ACCELERATORS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    "asia-northeast1": ("TPU v6e",),
    "europe-west4": ("TPU v6e",),
    "southamerica-west1": ("TPU v6e",),
    "us-central1": ("TPU v6e", "TPU7x"),
    "us-east1": ("TPU v6e",),
    "us-east5": ("TPU v6e",),
    "us-south1": ("TPU v6e",),
})

#: Regions that have a row in the accelerator table but none in the feature-availability table, so the
#: page does not say custom training runs there: Delhi, India (asia-south2), listed under "available
#: locations" and with accelerators "H200, RTX PRO 6000" (no "†"). Kept apart from REGION_ACCELERATORS.
ACCELERATOR_TABLE_ONLY_REGIONS: Final[Mapping[str, frozenset[str]]] = MappingProxyType({
    "asia-south2": frozenset({"NVIDIA_H200_141GB", "NVIDIA_RTX_PRO_6000"}),
})

#: The page's label of the TPU generations whose machine types have no MachineSpec.acceleratorType value
#: (vertex_machines.TPU_HOSTS carries "" for them), by machine-type prefix, so that their regions are read
#: from UNMAPPED_ACCELERATORS. Source: the configure-compute page's sections "TPU v6e" (ct6e-standard-1t,
#: -4t, -8t) and "TPU 7x" (tpu7x-standard-4t), and this page's labels "TPU v6e" and "TPU7x".
UNMAPPED_MACHINE_LABELS: Final[Mapping[str, str]] = MappingProxyType({"ct6e-": "TPU v6e", "tpu7x-": "TPU7x"})

# The page also warns: "If your job uses multiple types of GPUs, they must all be available in a single
# zone in your region. For example, you can't run a job in australia-southeast1 using NVIDIA Tesla P4
# GPUs, NVIDIA Tesla T4 GPUs, and NVIDIA Tesla P100 GPUs." (It lists no P100 for australia-southeast1 in
# its own table.) Zones are not given on this page (it points to Compute Engine "GPU locations"), so no rule
# holds a job to it.
