"""AI Platform Training runtime versions and their Python versions. Data only.

Sources: ai_platform_pages (the AI Platform Training TPU guide, its TensorFlow 2 page, the ml v1 discovery
document), named per table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from gcp_training_jobs.jobspec.catalog.ai_platform_pages import (
    SOURCE_ML_V1_DISCOVERY,
    SOURCE_TENSORFLOW_2,
    SOURCE_USING_TPUS,
)

# --- Runtime versions -----------------------------------------------------------------------------

#: AI Platform runtime versions available to Cloud TPU jobs. Source: the AI Platform Training TPU guide names
#: 1.11 and 1.12 (its current edition runs 2.11); the AI Platform Training runtime version list
#: (https://cloud.google.com/ai-platform/training/docs/runtime-version-list) later offered Cloud TPU on the
#: releases after them, 1.13 to 1.15 and 2.1 to 2.11 (public job configs run BASIC_TPU on 1.13 and tpuTfVersion
#: 1.15); that list was not read again on 2026-11-26 (SOURCE_TENSORFLOW_2's note).
TPU_RUNTIME_VERSIONS: Final = (
    "1.11", "1.12", "1.13", "1.14", "1.15",
    "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11",
)
TPU_RUNTIME_VERSIONS_SOURCES: Final = (SOURCE_USING_TPUS, SOURCE_TENSORFLOW_2)

#: Runtime versions and the Python versions each offers: 1.x runtimes ran Python 2.7 and 3.5 (3.7 from 1.15),
#: 2.x runtimes Python 3.7. Sources: ml.v1.json's TrainingInput.pythonVersion (which has Python 3.5 from 1.4
#: only: 1.0 to 1.3 are more lenient here) and AI Platform Training's TensorFlow 2 page.
RUNTIME_PYTHON_VERSIONS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    **{f"1.{minor}": ("2.7", "3.5") for minor in range(0, 15)},
    "1.15": ("2.7", "3.7"),
    **{f"2.{minor}": ("3.7",) for minor in range(1, 12)},
})
RUNTIME_PYTHON_VERSIONS_SOURCES: Final = (SOURCE_ML_V1_DISCOVERY, SOURCE_TENSORFLOW_2)
RUNTIME_VERSIONS: Final = tuple(RUNTIME_PYTHON_VERSIONS)
RUNTIME_VERSIONS_SOURCES: Final = RUNTIME_PYTHON_VERSIONS_SOURCES
