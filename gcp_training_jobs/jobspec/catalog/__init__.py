"""Stage 2, catalog: facts about Google Cloud training hardware, regions, runtimes and containers, as data.

No rules live here (they are in gcp_training_jobs.jobspec.rules). Each table names its source (the page and the
date it was read). One module per kind of fact:

- ai_platform_pages: the public pages the AI Platform Training tables below were read from (Google's GPU and
  TPU guides, its machine-types page, the ml v1 discovery document, Compute Engine's GPU zones)
- accelerators: accelerator names and the GPU/TPU lists of AI Platform Training's GPU and TPU guides
- machines: Compute Engine machine types and attachable GPU counts (AI Platform Training)
- legacy: AI Platform's legacy machine types, scale tiers, task roles
- regions: AI Platform Training regions and per-zone GPU availability
- runtimes: AI Platform runtime versions
- vertex_legacy: how the ml v1 vocabulary maps onto Vertex AI (retired accelerators, TF containers)
- vertex_machines, vertex_regions, vertex_containers, vertex_jobspec: Vertex AI custom training as Google
  documents it today (machine types and their accelerators, TPUs, regions, prebuilt containers with their
  dates, scheduling, reservations, disks); prices (sparse, not read by rules)

This package re-exports every table so rules read `catalog.NAME`; the Vertex AI tables whose names would
clash with AI Platform's carry a VERTEX_ prefix here (VERTEX_TRAINING_REGIONS).
"""

from gcp_training_jobs.jobspec.catalog.accelerators import *  # noqa: F403
from gcp_training_jobs.jobspec.catalog.legacy import *  # noqa: F403
from gcp_training_jobs.jobspec.catalog.machines import *  # noqa: F403
from gcp_training_jobs.jobspec.catalog.regions import *  # noqa: F403
from gcp_training_jobs.jobspec.catalog.runtimes import *  # noqa: F403
from gcp_training_jobs.jobspec.catalog.vertex_containers import (  # noqa: F401
    CPU_OR_GPU_IMAGES,
    IMAGE_NAME,
    PREBUILT_CONTAINERS,
    REGISTRY_HOSTS,
    SOURCE_PREBUILT,
    SOURCE_SUPPORT_POLICY,
    PrebuiltContainer,
)
from gcp_training_jobs.jobspec.catalog.vertex_jobspec import (  # noqa: F401
    ACCELERATOR_PAIR_RULE,
    BOOT_DISK_SIZE_GB,
    BOOT_DISK_TYPES,
    CURRENT_STRATEGIES,
    DEFAULT_TIMEOUT_SECONDS,
    DEPRECATED_STRATEGIES,
    FLEX_START_GPUS,
    FLEX_START_MAX_TIMEOUT_SECONDS,
    HYPERDISK_BOOT_DISK_TYPES,
    HYPERDISK_ONLY_MACHINES,
    PREEMPTIBLE_STRATEGIES,
    RESERVATION_AFFINITY_TYPES,
    RESERVATION_AFFINITY_USABLE,
    RESERVATION_CONSUMING,
    RESERVATION_EXCLUDES_PERSISTENT_RESOURCE,
    RESERVATION_EXCLUDES_STRATEGIES,
    RESERVATION_NAME_KEY,
    RESERVATION_VALUE_PATTERN,
    SCHEDULING_STRATEGIES,
    SOURCE_DWS,
    SOURCE_HYPERDISK_ONLY,
    SOURCE_RESERVATIONS,
    SOURCE_SPOT,
    SPOT_EXCLUDES_TPU_PODS,
)
from gcp_training_jobs.jobspec.catalog.vertex_legacy import *  # noqa: F403
from gcp_training_jobs.jobspec.catalog.vertex_machines import (  # noqa: F401
    CLOUD_TPU_ACCELERATOR_COUNTS,
    CLOUD_TPU_MACHINE,
    CLOUD_TPU_POD_COUNT_RULE,
    CLOUD_TPU_SINGLE_COUNT,
    CPU_MACHINE_TYPES,
    FIXED_ACCELERATOR_MACHINES,
    GPU_END_OF_SUPPORT,
    GPU_END_OF_SUPPORT_SOURCES,
    GPU_RESERVATION_REQUIRED,
    N1_GPU_COUNTS,
    NO_ACCELERATOR,
    NOT_OFFERED_ACCELERATORS,
    TPU_HOSTS,
    TPU_NAMED_BY_MACHINE,
    TPU_REPLICA_COUNT,
    TPU_SLICES,
    FixedMachine,
    TpuHost,
)
from gcp_training_jobs.jobspec.catalog.vertex_regions import (  # noqa: F401
    NOT_FOR_TRAINING,
    POD_LABELS,
    REGION_ACCELERATORS,
    REGION_TPU_PODS,
    UNMAPPED_ACCELERATORS,
    UNMAPPED_MACHINE_LABELS,
)
from gcp_training_jobs.jobspec.catalog.vertex_regions import TRAINING_REGIONS as VERTEX_TRAINING_REGIONS  # noqa: F401

#: Every machine type Vertex AI custom training takes (derived: the fixed-accelerator types, the CPU types
#: (n1 among them), the TPU VM hosts and cloud-tpu), in the configure-compute page's families.
VERTEX_MACHINE_TYPES = tuple(dict.fromkeys(
    (*FIXED_ACCELERATOR_MACHINES, *CPU_MACHINE_TYPES, *TPU_HOSTS, CLOUD_TPU_MACHINE)
))
#: Every accelerator name the Vertex AI tables use (derived), in the discovery enum's spelling.
VERTEX_ACCELERATOR_TYPES = tuple(dict.fromkeys((
    *(m.accelerator for m in FIXED_ACCELERATOR_MACHINES.values()),
    *(gpu for row in N1_GPU_COUNTS.values() for gpu in row),
    *CLOUD_TPU_ACCELERATOR_COUNTS,
    *(h.accelerator for h in TPU_HOSTS.values() if h.accelerator),
    *GPU_END_OF_SUPPORT,
)))
