"""Vertex AI's prebuilt containers for custom training, with their support dates. Data only.

Transcribed from the Vertex AI "Prebuilt containers for custom training" page (SOURCE_PREBUILT), which
Google now publishes under the Gemini Enterprise Agent Platform name; the support dates are that page's
columns "End of patch and support date" and "End of availability", whose meaning the framework support
policy page (SOURCE_SUPPORT_POLICY) defines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from types import MappingProxyType
from typing import Final

from gcp_training_jobs.jobspec.catalog.source import Source


@dataclass(frozen=True)
class PrebuiltContainer:
    """One prebuilt training image, as one row of the page's tables gives it."""

    framework: str  # "tensorflow" | "pytorch" | "scikit-learn" | "xgboost"
    version: str  # framework version, "2.15", "2.4", "1.0", ...
    processor: str  # "cpu" | "gpu" | "tpu"
    python: str  # "3.10", as the row's "(Python 3.10)" says
    image: str  # repository + tag after the registry host, "vertex-ai/training/tf-gpu.2-15.py310:latest"
    end_of_patch: date | None  # "End of patch and support date"
    end_of_availability: date | None  # "End of availability"


SOURCE_PREBUILT: Final = Source(
    title="Prebuilt containers for Gemini Enterprise Agent Platform serverless training",
    url="https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/training/pre-built-containers",
    read=date(2026, 11, 22),
    note=(
        "Successor of cloud.google.com/vertex-ai/docs/training/pre-built-containers. Read whole. Cross-checked "
        "against the 'Supported frameworks' page (https://docs.cloud.google.com/gemini-enterprise-agent-platform/"
        "machine-learning/supported-frameworks), which carries the same tables; the rows compared (TF 2.15, "
        "PyTorch 2.1 TPU, PyTorch 2.2 CPU, scikit-learn 0.23) agree. The page shows no 'last updated' date. "
        "Every row gives both dates with a day; none is missing."
    ),
)

SOURCE_SUPPORT_POLICY: Final = Source(
    title="Gemini Enterprise Agent Platform framework support policy",
    url="https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/framework-support-policy",
    read=date(2026, 11, 22),
    note=(
        "Successor of cloud.google.com/vertex-ai/docs/framework-support-policy. Read whole. It defines the two "
        "dates but lists no per-version dates ('For the list of supported framework versions, see the Supported "
        "frameworks list'); every date in PREBUILT_CONTAINERS comes from SOURCE_PREBUILT. 'End-of-patch and "
        "support date: After this date, ... no longer publishes new image versions for that framework "
        "version. Existing resources ... continue to function.' 'End-of-availability date: After this date, "
        "you can no longer use images for this framework version. Services might block the creation of new "
        "resources using these images, and the images are no longer available for download.'"
    ),
)

# --- Registry hosts --------------------------------------------------------------------------------

#: Artifact Registry hosts each image is published under. Source: SOURCE_PREBUILT, "Available container
#: images": "Each of the following container images is available in several Artifact Registry
#: repositories, which store data in various locations. You can use any of the URIs for an image when you
#: perform serverless training; each provides the same container image. When using Google Cloud console to
#: perform serverless training, the Google Cloud console selects the URI that best matches the location
#: where you're using Agent Platform." Every row lists exactly these three hosts. The page does not say
#: which host matches which region (no region-to-host rule is documented), so none is recorded here.
#: It also says: "Using image names without the latest tag isn't supported. You must use an image with the
#: latest tag."
REGISTRY_HOSTS: Final[Mapping[str, str]] = MappingProxyType({
    "us": "us-docker.pkg.dev",
    "europe": "europe-docker.pkg.dev",
    "asia": "asia-docker.pkg.dev",
})

# --- Images ----------------------------------------------------------------------------------------

#: Every image of the page's TensorFlow, PyTorch, scikit-learn and XGBoost tables, in the page's order,
#: past end of availability included (the page still lists them, with dates). Source: SOURCE_PREBUILT:
#: "This document lists the prebuilt containers for training"; columns "ML framework version | Supported
#: accelerators (and CUDA version, if applicable) | End of patch and support date | End of availability |
#: Supported images". processor: "CPU only" -> cpu, "GPU (CUDA 1x.x)" / "GPU only (CUDA 12.x)" -> gpu,
#: "TPU only" -> tpu. The page's fifth table, Ray on Vertex AI (ray-cpu.*/ray-gpu.* 2.9, 2.33, 2.42,
#: 2.47), is not a training framework of this catalog and is left out.
#: Note: on the read date (2026-11-22) every end-of-availability date below has passed (the latest is
#: PyTorch 2.2 CPU, 2026-10-23); the page lists no newer framework version (no TF 2.18+, PyTorch
#: 2.5+, scikit-learn 1.7+, XGBoost 3.x). Rows Google adds after the read date are not here.
PREBUILT_CONTAINERS: Final = (
    # TensorFlow: 42 images. Python 3.7 images have no .pyNNN tag; there is no 2.10 image.
    PrebuiltContainer("tensorflow", "2.17", "cpu", "3.10", "vertex-ai/training/tf-cpu.2-17.py310:latest",
                      date(2025, 7, 11), date(2026, 7, 11)),
    PrebuiltContainer("tensorflow", "2.17", "gpu", "3.10", "vertex-ai/training/tf-gpu.2-17.py310:latest",
                      date(2025, 7, 11), date(2026, 7, 11)),
    PrebuiltContainer("tensorflow", "2.16", "cpu", "3.10", "vertex-ai/training/tf-cpu.2-16.py310:latest",
                      date(2025, 6, 28), date(2026, 6, 28)),
    PrebuiltContainer("tensorflow", "2.16", "gpu", "3.10", "vertex-ai/training/tf-gpu.2-16.py310:latest",
                      date(2025, 6, 28), date(2026, 6, 28)),
    PrebuiltContainer("tensorflow", "2.15", "cpu", "3.10", "vertex-ai/training/tf-cpu.2-15.py310:latest",
                      date(2024, 11, 14), date(2025, 11, 14)),
    PrebuiltContainer("tensorflow", "2.15", "gpu", "3.10", "vertex-ai/training/tf-gpu.2-15.py310:latest",
                      date(2024, 11, 14), date(2025, 11, 14)),
    # TPU images are tagged cp310 (2.15) or carry no Python tag (2.12, "Python 3.8").
    PrebuiltContainer("tensorflow", "2.15", "tpu", "3.10", "vertex-ai/training/tf-tpu.2-15.cp310:latest",
                      date(2024, 10, 23), date(2025, 10, 23)),
    PrebuiltContainer("tensorflow", "2.14", "cpu", "3.10", "vertex-ai/training/tf-cpu.2-14.py310:latest",
                      date(2024, 9, 26), date(2025, 9, 26)),
    PrebuiltContainer("tensorflow", "2.14", "gpu", "3.10", "vertex-ai/training/tf-gpu.2-14.py310:latest",
                      date(2024, 9, 26), date(2025, 9, 26)),
    PrebuiltContainer("tensorflow", "2.13", "cpu", "3.10", "vertex-ai/training/tf-cpu.2-13.py310:latest",
                      date(2024, 7, 5), date(2025, 7, 5)),
    PrebuiltContainer("tensorflow", "2.13", "gpu", "3.10", "vertex-ai/training/tf-gpu.2-13.py310:latest",
                      date(2024, 7, 5), date(2025, 7, 5)),
    PrebuiltContainer("tensorflow", "2.12", "cpu", "3.10", "vertex-ai/training/tf-cpu.2-12.py310:latest",
                      date(2024, 6, 30), date(2025, 6, 30)),
    PrebuiltContainer("tensorflow", "2.12", "gpu", "3.10", "vertex-ai/training/tf-gpu.2-12.py310:latest",
                      date(2024, 6, 30), date(2025, 6, 30)),
    PrebuiltContainer("tensorflow", "2.12", "tpu", "3.8", "vertex-ai/training/tf-tpu.2-12:latest",
                      date(2024, 6, 30), date(2025, 6, 30)),
    PrebuiltContainer("tensorflow", "2.11", "cpu", "3.10", "vertex-ai/training/tf-cpu.2-11.py310:latest",
                      date(2023, 11, 15), date(2024, 11, 15)),
    PrebuiltContainer("tensorflow", "2.11", "gpu", "3.10", "vertex-ai/training/tf-gpu.2-11.py310:latest",
                      date(2023, 11, 15), date(2024, 11, 15)),
    PrebuiltContainer("tensorflow", "2.11", "cpu", "3.7", "vertex-ai/training/tf-cpu.2-11:latest",
                      date(2023, 11, 15), date(2024, 11, 15)),
    PrebuiltContainer("tensorflow", "2.11", "gpu", "3.7", "vertex-ai/training/tf-gpu.2-11:latest",
                      date(2023, 11, 15), date(2024, 11, 15)),
    PrebuiltContainer("tensorflow", "2.9", "cpu", "3.10", "vertex-ai/training/tf-cpu.2-9.py310:latest",
                      date(2023, 11, 15), date(2024, 11, 15)),
    PrebuiltContainer("tensorflow", "2.9", "gpu", "3.10", "vertex-ai/training/tf-gpu.2-9.py310:latest",
                      date(2023, 11, 15), date(2024, 11, 15)),
    PrebuiltContainer("tensorflow", "2.9", "cpu", "3.7", "vertex-ai/training/tf-cpu.2-9:latest",
                      date(2023, 11, 15), date(2024, 11, 15)),
    PrebuiltContainer("tensorflow", "2.9", "gpu", "3.7", "vertex-ai/training/tf-gpu.2-9:latest",
                      date(2023, 11, 15), date(2024, 11, 15)),
    PrebuiltContainer("tensorflow", "2.8", "cpu", "3.10", "vertex-ai/training/tf-cpu.2-8.py310:latest",
                      date(2023, 11, 15), date(2024, 11, 15)),
    PrebuiltContainer("tensorflow", "2.8", "gpu", "3.10", "vertex-ai/training/tf-gpu.2-8.py310:latest",
                      date(2023, 11, 15), date(2024, 11, 15)),
    PrebuiltContainer("tensorflow", "2.8", "cpu", "3.7", "vertex-ai/training/tf-cpu.2-8:latest",
                      date(2023, 11, 15), date(2024, 11, 15)),
    PrebuiltContainer("tensorflow", "2.8", "gpu", "3.7", "vertex-ai/training/tf-gpu.2-8:latest",
                      date(2023, 11, 15), date(2024, 11, 15)),
    PrebuiltContainer("tensorflow", "2.7", "cpu", "3.7", "vertex-ai/training/tf-cpu.2-7:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "2.7", "gpu", "3.7", "vertex-ai/training/tf-gpu.2-7:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "2.6", "cpu", "3.7", "vertex-ai/training/tf-cpu.2-6:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "2.6", "gpu", "3.7", "vertex-ai/training/tf-gpu.2-6:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "2.5", "cpu", "3.7", "vertex-ai/training/tf-cpu.2-5:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "2.5", "gpu", "3.7", "vertex-ai/training/tf-gpu.2-5:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "2.4", "cpu", "3.7", "vertex-ai/training/tf-cpu.2-4:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "2.4", "gpu", "3.7", "vertex-ai/training/tf-gpu.2-4:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "2.3", "cpu", "3.7", "vertex-ai/training/tf-cpu.2-3:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "2.3", "gpu", "3.7", "vertex-ai/training/tf-gpu.2-3:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "2.2", "cpu", "3.7", "vertex-ai/training/tf-cpu.2-2:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "2.2", "gpu", "3.7", "vertex-ai/training/tf-gpu.2-2:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "2.1", "cpu", "3.7", "vertex-ai/training/tf-cpu.2-1:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "2.1", "gpu", "3.7", "vertex-ai/training/tf-gpu.2-1:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "1.15", "cpu", "3.7", "vertex-ai/training/tf-cpu.1-15:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("tensorflow", "1.15", "gpu", "3.7", "vertex-ai/training/tf-gpu.1-15:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    # PyTorch: 29 images. The "CPU only" images are named pytorch-xla.* (pytorch-cpu.* only for 1.4).
    PrebuiltContainer("pytorch", "2.4", "cpu", "3.10", "vertex-ai/training/pytorch-xla.2-4.py310:latest",
                      date(2025, 7, 24), date(2026, 7, 24)),
    PrebuiltContainer("pytorch", "2.4", "gpu", "3.10", "vertex-ai/training/pytorch-gpu.2-4.py310:latest",
                      date(2025, 7, 24), date(2026, 7, 24)),
    PrebuiltContainer("pytorch", "2.3", "cpu", "3.10", "vertex-ai/training/pytorch-xla.2-3.py310:latest",
                      date(2025, 4, 24), date(2026, 4, 24)),
    PrebuiltContainer("pytorch", "2.3", "gpu", "3.10", "vertex-ai/training/pytorch-gpu.2-3.py310:latest",
                      date(2025, 4, 24), date(2026, 4, 24)),
    # Page: "2.2 (Python 3.10) | CPU only | Jan 30, 2025 | Oct 23, 2026" -- end of availability as printed
    # (the Supported frameworks page agrees), though the GPU image of the same version ends on Jan 30, 2026.
    PrebuiltContainer("pytorch", "2.2", "cpu", "3.10", "vertex-ai/training/pytorch-xla.2-2.py310:latest",
                      date(2025, 1, 30), date(2026, 10, 23)),
    PrebuiltContainer("pytorch", "2.2", "gpu", "3.10", "vertex-ai/training/pytorch-gpu.2-2.py310:latest",
                      date(2025, 1, 30), date(2026, 1, 30)),
    PrebuiltContainer("pytorch", "2.2", "tpu", "3.10", "vertex-ai/training/pytorch-tpu.2-2.cp310:latest",
                      date(2024, 11, 6), date(2025, 11, 6)),
    PrebuiltContainer("pytorch", "2.1", "cpu", "3.10", "vertex-ai/training/pytorch-xla.2-1.py310:latest",
                      date(2024, 10, 4), date(2025, 10, 4)),
    PrebuiltContainer("pytorch", "2.1", "gpu", "3.10", "vertex-ai/training/pytorch-gpu.2-1.py310:latest",
                      date(2024, 10, 4), date(2025, 10, 4)),
    # Page: "2.1 (Python 3.8) | TPU only"; recorded as printed, although the image tag says cp310 and the
    # row's dependency list names "PyTorch 2.3.x (latest patch)".
    PrebuiltContainer("pytorch", "2.1", "tpu", "3.8", "vertex-ai/training/pytorch-tpu.2-1.cp310:latest",
                      date(2024, 10, 23), date(2025, 10, 23)),
    PrebuiltContainer("pytorch", "2.0", "cpu", "3.10", "vertex-ai/training/pytorch-xla.2-0.py310:latest",
                      date(2024, 3, 15), date(2025, 3, 15)),
    PrebuiltContainer("pytorch", "2.0", "gpu", "3.10", "vertex-ai/training/pytorch-gpu.2-0.py310:latest",
                      date(2024, 3, 15), date(2025, 3, 15)),
    PrebuiltContainer("pytorch", "2.0", "tpu", "3.8", "vertex-ai/training/pytorch-tpu.2-0:latest",
                      date(2024, 5, 15), date(2025, 5, 15)),
    # The four pytorch-gpu 1.12/1.13 rows say "CPU or GPU (CUDA 11.x)": one image for both processors, recorded
    # as "gpu" (its name); see CPU_OR_GPU_IMAGES.
    PrebuiltContainer("pytorch", "1.13", "gpu", "3.10", "vertex-ai/training/pytorch-gpu.1-13.py310:latest",
                      date(2024, 5, 15), date(2025, 5, 15)),
    PrebuiltContainer("pytorch", "1.13", "gpu", "3.7", "vertex-ai/training/pytorch-gpu.1-13:latest",
                      date(2023, 12, 8), date(2024, 12, 8)),
    PrebuiltContainer("pytorch", "1.12", "gpu", "3.10", "vertex-ai/training/pytorch-gpu.1-12.py310:latest",
                      date(2024, 5, 15), date(2025, 5, 15)),
    PrebuiltContainer("pytorch", "1.12", "gpu", "3.7", "vertex-ai/training/pytorch-gpu.1-12:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("pytorch", "1.11", "cpu", "3.7", "vertex-ai/training/pytorch-xla.1-11:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("pytorch", "1.11", "gpu", "3.7", "vertex-ai/training/pytorch-gpu.1-11:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("pytorch", "1.10", "cpu", "3.7", "vertex-ai/training/pytorch-xla.1-10:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("pytorch", "1.10", "gpu", "3.7", "vertex-ai/training/pytorch-gpu.1-10:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("pytorch", "1.9", "cpu", "3.7", "vertex-ai/training/pytorch-xla.1-9:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("pytorch", "1.9", "gpu", "3.7", "vertex-ai/training/pytorch-gpu.1-9:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("pytorch", "1.7", "cpu", "3.7", "vertex-ai/training/pytorch-xla.1-7:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("pytorch", "1.7", "gpu", "3.7", "vertex-ai/training/pytorch-gpu.1-7:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("pytorch", "1.6", "cpu", "3.7", "vertex-ai/training/pytorch-xla.1-6:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("pytorch", "1.6", "gpu", "3.7", "vertex-ai/training/pytorch-gpu.1-6:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("pytorch", "1.4", "cpu", "3.7", "vertex-ai/training/pytorch-cpu.1-4:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    PrebuiltContainer("pytorch", "1.4", "gpu", "3.7", "vertex-ai/training/pytorch-gpu.1-4:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    # scikit-learn: 5 images.
    PrebuiltContainer("scikit-learn", "1.6", "cpu", "3.10", "vertex-ai/training/sklearn-cpu.1-6:latest",
                      date(2025, 7, 11), date(2026, 7, 11)),
    PrebuiltContainer("scikit-learn", "1.6", "gpu", "3.10", "vertex-ai/training/sklearn-gpu.1-6:latest",
                      date(2025, 7, 11), date(2026, 7, 11)),
    # Dates printed "June 30, 2024" / "June 30, 2025" (full month name) here and for XGBoost 1.6.
    PrebuiltContainer("scikit-learn", "1.0", "cpu", "3.10", "vertex-ai/training/sklearn-cpu.1-0:latest",
                      date(2024, 6, 30), date(2025, 6, 30)),
    PrebuiltContainer("scikit-learn", "1.0", "gpu", "3.10", "vertex-ai/training/sklearn-gpu.1-0:latest",
                      date(2024, 6, 30), date(2025, 6, 30)),
    # Image repository is scikit-learn-cpu.* for 0.23 but sklearn-cpu.* / sklearn-gpu.* from 1.0.
    PrebuiltContainer("scikit-learn", "0.23", "cpu", "3.7", "vertex-ai/training/scikit-learn-cpu.0-23:latest",
                      date(2023, 9, 1), date(2024, 9, 1)),
    # XGBoost: 5 images.
    PrebuiltContainer("xgboost", "2.1", "cpu", "3.10", "vertex-ai/training/xgboost-cpu.2-1:latest",
                      date(2025, 7, 11), date(2026, 7, 11)),
    PrebuiltContainer("xgboost", "2.1", "gpu", "3.10", "vertex-ai/training/xgboost-gpu.2-1:latest",
                      date(2025, 7, 11), date(2026, 7, 11)),
    PrebuiltContainer("xgboost", "1.6", "cpu", "3.10", "vertex-ai/training/xgboost-cpu.1-6:latest",
                      date(2024, 6, 30), date(2025, 6, 30)),
    PrebuiltContainer("xgboost", "1.6", "gpu", "3.10", "vertex-ai/training/xgboost-gpu.1-6:latest",
                      date(2024, 6, 30), date(2025, 6, 30)),
    PrebuiltContainer("xgboost", "1.1", "cpu", "3.7", "vertex-ai/training/xgboost-cpu.1-1:latest",
                      date(2023, 11, 15), date(2024, 11, 15)),
)

#: Images whose row says "CPU or GPU (CUDA 11.x)" rather than one processor (PyTorch 1.12 and 1.13); in
#: PREBUILT_CONTAINERS they are recorded with processor "gpu", their name. Source: SOURCE_PREBUILT.
CPU_OR_GPU_IMAGES: Final = frozenset({
    "vertex-ai/training/pytorch-gpu.1-13.py310:latest",
    "vertex-ai/training/pytorch-gpu.1-13:latest",
    "vertex-ai/training/pytorch-gpu.1-12.py310:latest",
    "vertex-ai/training/pytorch-gpu.1-12:latest",
})

#: A prebuilt image's name, as every row of the page spells it: the repository (its framework and processor), the
#: framework version with a dash, and an optional Python tag (.py310, .cp310; none on the oldest and the
#: scikit-learn / XGBoost images). Google adds a row for each new framework version after any read of the page: an
#: image of a known repository at a version newer than every one the catalog lists for its framework and processor
#: is one the catalog cannot know (rules.containers: a warning naming SOURCE_PREBUILT.read, not a refusal).
IMAGE_NAME: Final = re.compile(r"vertex-ai/training/(?P<repository>[a-z]+(?:-[a-z]+)*)\.(?P<major>[0-9]+)-"
                               r"(?P<minor>[0-9]+)(?P<python>\.(?:py|cp)3(?:[7-9]|1[0-9]))?")
