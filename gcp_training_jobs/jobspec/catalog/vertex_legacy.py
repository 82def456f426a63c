"""How AI Platform Training's jobs (the ml v1 vocabulary) map onto Vertex AI: retired accelerators, the TPU pool
machine and the prebuilt TensorFlow containers for AI Platform runtime versions. Data only.

Sources: vertex_machines' and vertex_containers' pages, named per table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from gcp_training_jobs.jobspec.catalog.accelerators import K80
from gcp_training_jobs.jobspec.catalog.vertex_containers import SOURCE_PREBUILT
from gcp_training_jobs.jobspec.catalog.vertex_machines import SOURCE_DISCOVERY_MACHINESPEC, SOURCE_K80_EOL

# --- Vertex AI custom training ----------------------------------------------------------------------

#: Accelerators Vertex AI no longer offers, with why. Source: aiplatform.v1.json, MachineSpec.
#: acceleratorType: "Deprecated: Nvidia Tesla K80 GPU has reached end of support, see
#: https://cloud.google.com/compute/docs/eol/k80-eol" (end of support 2024-05-01).
VERTEX_RETIRED_ACCELERATORS: Final[Mapping[str, str]] = MappingProxyType({
    K80: "NVIDIA Tesla K80 reached end of support on 2024-05-01 (cloud.google.com/compute/docs/eol/k80-eol)",
})
VERTEX_RETIRED_ACCELERATORS_SOURCES: Final = (SOURCE_DISCOVERY_MACHINESPEC, SOURCE_K80_EOL)

#: Prebuilt TensorFlow training containers for an AI Platform runtime version on Python 3.7. Source:
#: Vertex AI "Prebuilt containers for custom training" (cloud.google.com/vertex-ai/docs/training/
#: pre-built-containers): tf-cpu.N-M and tf-gpu.N-M (Python 3.7) exist for 1.15, 2.1 to 2.9 and 2.11;
#: there is no 2.10 image and none for runtimes before 1.15. Vertex offers no prebuilt TPU image for these
#: versions (its tf-tpu images start at 2.12), so TPU jobs on Vertex need a custom container.
VERTEX_TF_CONTAINERS: Final[Mapping[str, str]] = MappingProxyType({
    "1.15": "1-15",
    **{f"2.{minor}": f"2-{minor}" for minor in (1, 2, 3, 4, 5, 6, 7, 8, 9, 11)},
})
VERTEX_TF_CONTAINERS_SOURCES: Final = (SOURCE_PREBUILT,)
VERTEX_CONTAINER_PYTHON: Final = "3.7"
#: A job that names no runtimeVersion (gcloud's config.yaml may leave it to a flag) gets the newest
#: runtime with a prebuilt container, and a TPU pool Vertex's first TPU image, tf-tpu.2-12 (same source).
VERTEX_DEFAULT_RUNTIME: Final = "2.11"
VERTEX_DEFAULT_TPU_IMAGE: Final = "tf-tpu.2-12"

#: Artifact Registry host of the prebuilt containers per continent of the job's region (same source).
VERTEX_CONTAINER_HOSTS: Final[Mapping[str, str]] = MappingProxyType({
    "us": "us-docker.pkg.dev",
    "northamerica": "us-docker.pkg.dev",
    "southamerica": "us-docker.pkg.dev",
    "europe": "europe-docker.pkg.dev",
    "asia": "asia-docker.pkg.dev",
    "australia": "asia-docker.pkg.dev",
})
VERTEX_CONTAINER_HOSTS_SOURCES: Final = (SOURCE_PREBUILT,)
