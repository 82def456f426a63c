"""The one region rule: where each backend trains (catalog.BACKEND_REGIONS) and the words for a region it refuses.

Every place a region is written asks `region_problem`: the job rules (a trainingInput's region on AI Platform, a
Vertex job's or translation's region on Vertex AI), the stack's region, a job's and a fallback's region keys, and a
persistent resource's region (resources.settings). So the same bad region is refused in the same words wherever
it is written, naming the key it was written at. As SkyPilot's catalog asks one `validate_region_zone_impl` for
every cloud.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.names import AI_PLATFORM, VERTEX
from gcp_training_jobs.jobspec.core.problems import Problem, allowed, allowed_some, suggestion

#: How a refusal names each backend's regions.
REGIONS_OF: Final[Mapping[str, str]] = MappingProxyType({
    AI_PLATFORM: "an AI Platform Training region", VERTEX: "a Vertex AI training region"})


def training_regions(backend: str | None) -> tuple[str, ...]:
    """Where `backend` trains (None or any name but vertex: AI Platform Training, the vocabulary's own)."""
    return catalog.BACKEND_REGIONS[VERTEX if backend == VERTEX else AI_PLATFORM]


def region_choices(region: str, backend: str | None) -> str:
    """The training regions relevant to `region`: those of its geography (us-, europe-, ...), else all of them
    cut short (never a list of 38 on one line)."""
    regions = training_regions(backend)
    near = [r for r in regions if r.split("-", 1)[0] == region.split("-", 1)[0]]
    return allowed(near) if near else allowed_some(sorted(regions))


def region_problem(region: str, at: str, backend: str | None) -> Problem | None:
    """`region`, written at `at`, refused where `backend` does not train (None: it trains there)."""
    regions = training_regions(backend)
    if region in regions:
        return None
    return Problem(at, f"{region!r} is not {REGIONS_OF[VERTEX if backend == VERTEX else AI_PLATFORM]}"
                   f"{suggestion(region, regions)}; allowed: {region_choices(region, backend)}")
