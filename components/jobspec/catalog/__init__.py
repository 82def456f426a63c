"""The catalog: facts about Google Cloud training hardware, regions, runtimes and containers, as data.

No rules live here (they are in components.jobspec.rules). Each table names its source (the page and the
date it was read). One module per kind of fact:

- accelerators: accelerator names and the seeds' GPU/TPU lists
- machines: Compute Engine machine types and attachable GPU counts (AI Platform Training)
- legacy: AI Platform's legacy machine types, scale tiers, task roles
- regions: AI Platform Training regions and per-zone GPU availability
- runtimes: AI Platform runtime versions
- vertex_legacy: how the seeds' vocabulary maps onto Vertex AI (retired accelerators, TF containers)

This package re-exports every table so rules read `catalog.NAME`.
"""

from components.jobspec.catalog.accelerators import *  # noqa: F403
from components.jobspec.catalog.legacy import *  # noqa: F403
from components.jobspec.catalog.legacy import legacy_equivalent  # noqa: F401
from components.jobspec.catalog.machines import *  # noqa: F403
from components.jobspec.catalog.regions import *  # noqa: F403
from components.jobspec.catalog.runtimes import *  # noqa: F403
from components.jobspec.catalog.vertex_legacy import *  # noqa: F403
