"""Vertex AI custom-training price catalog (pure data, standard library only).

Read date: 2026-11-22.

IMPORTANT - coverage is deliberately thin.  The full "Custom-trained models" /
training section of Google's pricing page (https://cloud.google.com/vertex-ai/pricing,
which since the 2026 rename redirects to
https://cloud.google.com/products/gemini-enterprise-agent-platform/pricing) was NOT
available in any searchable corpus: every stored copy is either cut off after the
AutoML section or holds only the page's first screen.  Only the figures below, each
traceable to a quotation of that page, are recorded.  Everything else is absent on
purpose (see SOURCE_PRICING.note).  Nothing here is derived or estimated.

A second search on 2026-11-22 (pages, docs and code corpora: the pricing page and its translated copies,
"NVIDIA_TESLA_T4"/"NVIDIA_L4"/"a3-highgpu-8g" with prices, "Training/Pipelines on" SKU names) found no
other page copy: only undated or rounded third-party figures (e.g. a script comment "NVidia Tesla T4
costs $0.4025 / hr", europe-west4, no date; an operator's Frankfurt itemization quoted in chat) and
the SKU article below.  None was added.  components.jobspec.cost reports every missing price as
"unknown" by name.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from types import MappingProxyType
from typing import Final

from components.jobspec.catalog.source import Source


@dataclass(frozen=True)
class HourlyPrice:
    """One machine type's or one accelerator's price per hour, with the page it was read from."""

    on_demand: float | None  # USD per hour; None when the page gives none
    spot: float | None  # USD per hour on Spot; None when not given
    source: Source  # the page (and the date it was read)
    note: str = ""  # what the source leaves open about this figure


@dataclass(frozen=True)
class SkuPrice:
    """One Cloud Billing SKU unit price, as quoted by a third party."""

    description: str  # SKU description, verbatim
    sku_id: str
    usd: float  # unit price in USD
    unit: str  # the SKU's unit, verbatim ("per 1 hour", "per 1 gigabyte hour")


_READ: Final = date(2026, 11, 22)

SOURCE_PRICING: Final = Source(
    title=(
        "Vertex AI pricing (renamed 2026: Gemini Enterprise Agent Platform pricing), "
        "section 'Custom-trained models' / training"
    ),
    url="https://cloud.google.com/products/gemini-enterprise-agent-platform/pricing",
    read=_READ,
    via=(
        "Primary page not readable in the corpus. Figures come from a verbatim "
        "transcription of the page: repo api-evangelist/google-vertex-ai, file "
        "plans/google-vertex-ai-plans-pricing.yml @ commit "
        "342263c39279d72204c9e1bb3058dceba0d215e1 (generated 2026-10-07; header says "
        "'every price_text was found verbatim in the fetched page text'; sources: "
        "cloud.google.com/products/gemini-enterprise-agent-platform/pricing and "
        "cloud.google.com/vertex-ai/pricing). The n1-standard-4 figure is corroborated "
        "by two independent notes (code-index file ids 70871146332/71501623026: "
        "'lists n1-standard-4 in Iowa (us-central1) at $0.21849885/hour without a "
        "savings-plan discount, checked September 6, 2026'; id 70399520167: "
        "'n1-standard-4, us-central1, tabela Default, 2026-09-08', 0.21849885). "
        "Page wording on billing granularity taken from a partial page copy "
        "(code-index file id 60039568394, 'Service: Vertex AI', last updated 2026-06-15)."
    ),
    note=(
        "NOT FOUND in any corpus: the page's full machine-type table (e2, n1 other than "
        "n1-standard-4, n2, c2, a2, a3, g2, ...), all other accelerator rows "
        "(NVIDIA_TESLA_T4/P4/P100/V100/A100, NVIDIA_A100_80GB, NVIDIA_L4, "
        "NVIDIA_H100_MEGA_80GB, NVIDIA_H200_141GB, NVIDIA_B200, TPU_V2/V3/V5_LITEPOD), "
        "every region other than us-central1, any Spot price, any per-vCPU/per-GB "
        "rate from the page, and any page statement on whether a2/a3/g2 prices "
        "include their GPUs. The NVIDIA_H100_80GB figure's region is NOT stated by the "
        "transcription, so it is NOT in ACCELERATOR_PRICES (filing it under a region would "
        "be a guess). Also: 9.79655057 equals "
        "the Aug-2025 Vertex training SKU for H100 in Iowa (11.2660332, see "
        "TRAINING_SKU_PRICES_US_CENTRAL1_2025_08) divided by 1.15, so it may come from "
        "a different column or reflect a 2026 repricing. "
        "Secondary paraphrase (Zenn article, code-index id 13115385303, footnote 6): "
        "the page states that Spot VMs and reservations used with Vertex AI are billed "
        "as Compute Engine SKUs plus a Vertex AI management-fee SKU - no Spot figures "
        "were found. Compute Engine VM/GPU price tables were not substituted."
    ),
)

SOURCE_SPOT_DOC: Final = Source(
    title="Use Spot VMs with training (Gemini Enterprise Agent Platform serverless training)",
    url=(
        "https://docs.cloud.google.com/gemini-enterprise-agent-platform/"
        "machine-learning/training/use-spot-vms"
    ),
    read=_READ,
    via=(
        "apstndb/gemini-enterprise-agent-platform-docs-mirror, "
        "docs/docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/"
        "training/use-spot-vms.md (mirror commit a185026, auto-update 2026-08-22)"
    ),
    note=(
        "Billing wording only, no prices: 'When you use Spot VMs, you're billed by job "
        "duration and machine type. You don't pay for the time that the job is in a "
        "queue or preempted.'"
    ),
)

SOURCE_SKU_ARTICLE: Final = Source(
    title=(
        "ハイエンド GPU が最大約半額に！DWS の新料金プランで GPU コストを大幅削減 "
        "(Zenn draft, google_cloud_jp, screenshots dated 2025-08-15/16)"
    ),
    url="https://cloud.google.com/skus/sku-groups/vertex-training",
    read=_READ,
    via="code-index file id 13115385303 (repository not named by the index)",
    note=(
        "NOT the pricing page: Cloud Billing SKU unit prices for Vertex AI Training in "
        "Iowa (us-central1) as of August 2025, copied from the author's billing report. "
        "Kept in its own table; older than SOURCE_PRICING and possibly superseded."
    ),
)

# Regions the main tables cover.  Only us-central1 (Iowa) could be sourced.
PRICE_REGIONS: Final = ("us-central1",)

# Units: the page lists training prices per machine per hour, e.g. the transcription's
# price_text "$0.21849885 / 1 hour" for "Custom training n1-standard-4".  The page also
# says: "No minimum usage duration for Training and Prediction. Instead, usage is
# charged in 30 second increments."
# The n1-standard-4 price is the bare VM (4 vCPU, 15 GB); the training docs say
# "In some cases, you can additionally use GPUs to accelerate training. GPUs incur
# additional costs."  No page price was found for machine types with fixed GPUs
# (a2-*, a3-* such as a3-highgpu-8g, g2-*), so whether the page's price for them
# includes the GPUs is unknown.
MACHINE_PRICES: Final = MappingProxyType(
    {
        "us-central1": MappingProxyType(
            {
                "n1-standard-4": HourlyPrice(0.21849885, None, SOURCE_PRICING),
            }
        ),
    }
)

# Units: per accelerator (one GPU) per hour. No accelerator price could be placed in a region: the one row
# the copy holds ("Accelerator NVIDIA_H100_80GB (training)", "$9.79655057 / 1 hour") states no region, and
# its figure equals another region's SKU price / 1.15 (see SOURCE_PRICING.note). Filing it under us-central1
# would be a guess, so it is left out: every accelerator is "unknown" in estimates.
ACCELERATOR_PRICES: Final[Mapping[str, Mapping[str, HourlyPrice]]] = MappingProxyType({})

# The page text available says nothing on whether any machine-type price already
# includes its GPUs, so this is empty.
MACHINE_PRICE_INCLUDES_ACCELERATORS: Final[frozenset[str]] = frozenset()

# --- Separate, non-page source: Vertex AI Training SKUs, Iowa, August 2025 -------------
# Units are the SKU's own: GPU and "Instance Core" SKUs are "per 1 hour" per unit (one
# GPU, one vCPU); RAM SKUs are "per 1 gigabyte hour".  The PD SKU is billed per
# gibibyte month; the article divided it by 730 to show a per-hour figure, so that row
# is the article's conversion, kept verbatim.  On-demand jobs are billed on the
# "Training/Pipelines on ..." SKUs; DWS Flex-Start jobs are billed on Compute Engine
# SKUs (not recorded here) plus the "management fee" SKUs below.
TRAINING_SKU_PRICES_US_CENTRAL1_2025_08: Final = MappingProxyType(
    {
        "3F95-001E-B747": SkuPrice(
            "Vertex AI: Training/Pipelines on NVIDIA H100 80GB in Iowa",
            "3F95-001E-B747",
            11.2660332,
            "per 1 hour",
        ),
        "2E83-99F1-391A": SkuPrice(
            "Vertex AI: Training/Pipelines on A3 Instance Core in Iowa",
            "2E83-99F1-391A",
            0.0293227,
            "per 1 hour",
        ),
        "B045-9255-8314": SkuPrice(
            "Vertex AI: Training/Pipelines on A3 Instance RAM in Iowa",
            "B045-9255-8314",
            0.0025534,
            "per 1 gigabyte hour",
        ),
        "A005-98FE-36CC": SkuPrice(
            "Vertex AI: Training/Pipelines on SSD backed PD Capacity",
            "A005-98FE-36CC",
            0.0002678,
            "per 1 gigabyte hour (article's monthly price / 730)",
        ),
        "5853-505F-A5C4": SkuPrice(
            "Vertex AI: Training/Pipelines management fee on NVIDIA H100 80GB in Iowa",
            "5853-505F-A5C4",
            1.4694826,
            "per 1 hour",
        ),
        "9AC1-7D9B-C47E": SkuPrice(
            "Vertex AI: Training/Pipelines management fee on A3 Instance Core in Iowa",
            "9AC1-7D9B-C47E",
            0.0038247,
            "per 1 hour",
        ),
        "D30D-69C9-F057": SkuPrice(
            "Vertex AI: Training/Pipelines management fee on A3 Instance RAM in Iowa",
            "D30D-69C9-F057",
            0.0003331,
            "per 1 gigabyte hour",
        ),
    }
)
