"""AI Platform Training runtime versions and their Python versions. Data only."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

# --- Runtime versions -----------------------------------------------------------------------------

#: AI Platform runtime versions available to Cloud TPU jobs. Source: seed 000 names 1.11 and 1.12; the
#: AI Platform Training runtime version list (cloud.google.com/ai-platform/training/docs/runtime-version-
#: list) later offered Cloud TPU on the releases after them, 1.13 to 1.15 and 2.1 to 2.11 (public job
#: configs run BASIC_TPU on 1.13 and tpuTfVersion 1.15).
TPU_RUNTIME_VERSIONS: Final = (
    "1.11", "1.12", "1.13", "1.14", "1.15",
    "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11",
)

#: Runtime versions and the Python versions each offers. Source: AI Platform Training runtime version
#: list: 1.x runtimes ran Python 2.7 and 3.5 (3.7 from 1.15), 2.x runtimes Python 3.7.
RUNTIME_PYTHON_VERSIONS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    **{f"1.{minor}": ("2.7", "3.5") for minor in range(0, 15)},
    "1.15": ("2.7", "3.7"),
    **{f"2.{minor}": ("3.7",) for minor in range(1, 12)},
})
RUNTIME_VERSIONS: Final = tuple(RUNTIME_PYTHON_VERSIONS)
