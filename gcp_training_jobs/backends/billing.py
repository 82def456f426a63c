"""Cloud Billing Catalog API (cloudbilling v1, services.skus.list): the list prices of Compute Engine and Vertex
AI, read page by page through the shared pager (transport.pages), and the SKUs a price table is built from.

Every page is checked as it arrives: a page that is not the documented shape, a SKU whose price is not
{units, nanos}, a unit this code does not convert, or a page token that repeats or is not text (or more pages
than transport.MAX_PAGES) makes the whole read fail with BillingAnswerError, so `prices refresh` never writes a
table from a partial or malformed answer.

Which SKU is which part (a family's vCPU or memory, a GPU, local SSD; on demand or Spot) is read from its
description, as Cyclenerd/google-cloud-pricing-cost-calculator's build/mapping.csv @ fd66b26ff84f (the mapping
behind the bundled table's machine prices) matches them: "N1 Predefined Instance Core running in Americas",
"Spot Preemptible A2 Instance Ram running in ...", "Nvidia Tesla T4 GPU attached to Spot Preemptible VMs
running in ...", "SSD backed Local Storage ...". Vertex AI's own training SKUs read as "Vertex AI:
Training/Pipelines on A3 Instance Core in Iowa" and "Vertex AI: Training/Pipelines management fee on NVIDIA H100
80GB in Iowa" (their August 2025 figures are quoted in prices_build.SKU_ARTICLE).

The regions of a SKU and how wide its price reaches are its `geoTaxonomy` (cloudbilling.v1.json, GeoTaxonomy):
REGIONAL (one region's own price), MULTI_REGIONAL (one price for several regions) or GLOBAL (every region, no
region listed); a SKU without one is read from `serviceRegions` (scope unknown). `prices_refresh` prefers a
region's own price to a multi-regional one, and either to a global one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from gcp_training_jobs.jobspec.core.errors import TrainingJobsError

COMPUTE_ENGINE: Final = "6F81-5844-456A"
VERTEX_AI: Final = "C7E2-9256-1C43"
SERVICES: Final = {COMPUTE_ENGINE: "Compute Engine", VERTEX_AI: "Vertex AI"}
ENDPOINT: Final = "https://cloudbilling.googleapis.com/"
#: Google's hours in a month (its pricing calculator's, and Cyclenerd's HOURS_MONTH): GiBy.mo -> GiBy.h.
HOURS_PER_MONTH: Final = 730
#: usageUnit -> hours per unit of it (a SKU in another unit is not a part this code prices).
UNITS: Final = {"h": 1.0, "GiBy.h": 1.0, "GiBy.mo": float(HOURS_PER_MONTH)}
PAGE_SIZE: Final = 5000

#: Machine family (a machine type's first word) -> the SKU description of its vCPU and memory.
FAMILY_SKUS: Final = {
    "e2": "E2 Instance", "n1": "N1 Predefined Instance", "n2": "N2 Instance", "n4": "N4 Instance",
    "a2": "A2 Instance", "a3": "A3 Instance", "g2": "G2 Instance", "g4": "G4 Instance",
    "c2": "Compute optimized", "m1": "Memory-optimized Instance",
}
#: GPU SKU description (Compute Engine) -> the Vertex AI accelerator.
GPU_SKUS: Final = {
    "Nvidia Tesla A100 GPU": "NVIDIA_TESLA_A100", "Nvidia Tesla A100 80GB GPU": "NVIDIA_A100_80GB",
    "Nvidia L4 GPU": "NVIDIA_L4", "RTX 6000 96GB": "NVIDIA_RTX_PRO_6000", "Nvidia Tesla P100 GPU": "NVIDIA_TESLA_P100",
    "Nvidia Tesla P4 GPU": "NVIDIA_TESLA_P4", "Nvidia Tesla T4 GPU": "NVIDIA_TESLA_T4",
    "Nvidia Tesla V100 GPU": "NVIDIA_TESLA_V100", "Nvidia H100 80GB GPU": "NVIDIA_H100_80GB",
    "Nvidia H100 80GB Mega GPU": "NVIDIA_H100_MEGA_80GB",
}
#: GPU names in Vertex AI's training SKUs ("on NVIDIA H100 80GB in Iowa").
VERTEX_GPUS: Final = {"NVIDIA H100 80GB": "NVIDIA_H100_80GB", "NVIDIA H100 Mega 80GB": "NVIDIA_H100_MEGA_80GB",
                      "NVIDIA A100 80GB": "NVIDIA_A100_80GB", "NVIDIA Tesla A100": "NVIDIA_TESLA_A100",
                      "NVIDIA L4": "NVIDIA_L4", "NVIDIA Tesla T4": "NVIDIA_TESLA_T4",
                      "NVIDIA Tesla V100": "NVIDIA_TESLA_V100", "NVIDIA Tesla P4": "NVIDIA_TESLA_P4",
                      "NVIDIA Tesla P100": "NVIDIA_TESLA_P100"}

#: Vertex AI's SKUs name N1 two ways: "on N1 Predefined Instance Core running in", "Management fee on N1 Instance
#: Core in" (both in the Cloud Billing Catalog's Vertex AI SKUs, https://cloud.google.com/skus/sku-groups/
#: vertex-training).
VERTEX_FAMILY_ALIASES: Final = {"N1 Instance": "n1"}
_FAMILY = "|".join(re.escape(v) for v in sorted(FAMILY_SKUS.values(), key=len, reverse=True))
_VFAMILY = "|".join(re.escape(v) for v in sorted([*FAMILY_SKUS.values(), *VERTEX_FAMILY_ALIASES], key=len,
                                                   reverse=True))
_GPU = "|".join(re.escape(v) for v in sorted(GPU_SKUS, key=len, reverse=True))
_VGPU = "|".join(re.escape(v) for v in sorted(VERTEX_GPUS, key=len, reverse=True))
_CE_PART = re.compile(rf"^(?P<spot>Spot Preemptible )?(?P<family>{_FAMILY}) (?P<kind>Core|Ram) running in ")
_CE_GPU = re.compile(rf"^(?P<gpu>{_GPU}) (?:(?P<spot>attached to Spot Preemptible VMs) )?running in ")
_CE_SSD = re.compile(r"^SSD backed Local Storage (?:(?P<spot>attached to Spot Preemptible VMs) )?(?:running )?in ")
_VERTEX = re.compile(rf"^Vertex AI: Training/Pipelines (?P<fee>[Mm]anagement fee )?on (?:(?P<family>{_VFAMILY}) "
                     rf"(?P<kind>Core|Ram|RAM)|(?P<gpu>{_VGPU})(?: GPU)?)(?: running)? in ")
_KIND = {"Core": "cpu", "Ram": "ram", "RAM": "ram"}


class BillingError(TrainingJobsError):
    """The price list could not be read: no answer, an error answer, no credentials, or a bad answer."""


class BillingAnswerError(BillingError):
    """The Cloud Billing Catalog answered something that cannot be a price list (malformed or partial)."""


@dataclass(frozen=True)
class SkuRate:
    """One part's list price in one region: USD per hour per unit (vCPU, GiB of memory, GPU, GiB of SSD)."""

    source: str
    """"ce" (Compute Engine), "vertex" (Vertex AI training) or "fee" (Vertex AI management fee)."""
    part: str
    """"cpu:n1", "ram:a3", "gpu:NVIDIA_TESLA_T4", "ssd:local"."""
    usage: str
    """"on_demand" or "spot"."""
    region: str
    usd: float
    sku: str
    scope: str = ""
    """geoTaxonomy's type: "REGIONAL", "MULTI_REGIONAL", "GLOBAL" (region "global"), or "" when not given."""


def list_skus(service_id: str, endpoint: str | None = None, *, page_size: int = PAGE_SIZE,
              call: Callable[..., Any] | None = None) -> list[dict[str, Any]]:
    """Every SKU of a service, all pages, prices in USD (services.skus.list through the shared pager,
    transport.pages: a page token that repeats or is not text, or too many pages, is a BillingAnswerError)."""
    from gcp_training_jobs.backends import transport

    root = endpoint or ENDPOINT

    def request(token: str | None) -> Any:
        return transport.service("cloudbilling", "v1", root).services().skus().list(
            parent=f"services/{service_id}", currencyCode="USD", pageSize=page_size, pageToken=token)

    skus: list[dict[str, Any]] = []
    try:
        for number, answer in enumerate(transport.pages(request, root, "services.skus.list", send=call), 1):
            page = answer.get("skus", [])
            if not isinstance(page, list) or not all(isinstance(s, dict) for s in page):
                raise BillingAnswerError(f"services/{service_id}/skus page {number}: `skus` must be a list of SKU "
                                         "objects")
            skus += page
    except transport.PagingError as error:
        raise BillingAnswerError(f"services/{service_id}/skus: {error}") from None
    return skus


def rates(skus: Iterable[Mapping[str, Any]], service_id: str) -> list[SkuRate]:
    """The priced parts of a service's SKUs (one per SKU and region); other SKUs are skipped. A malformed SKU
    raises BillingAnswerError naming it and the field."""
    found: list[SkuRate] = []
    for index, sku in enumerate(skus):
        found += sku_rates(sku, service_id, index)
    return found


def sku_rates(sku: Mapping[str, Any], service_id: str, index: int = 0) -> list[SkuRate]:
    description = sku.get("description")
    name = sku.get("skuId") or f"#{index}"
    if not isinstance(description, str) or not isinstance(sku.get("skuId"), str):
        raise BillingAnswerError(f"SKU {name} of services/{service_id}: `skuId` and `description` must be text")
    part = classify(description, service_id)
    if part is None:
        return []
    source, key, spot = part
    usd = unit_price(sku, f"SKU {name} ({description})")
    scope, regions = _regions(sku, f"SKU {name} ({description})")
    usage = _usage(sku, spot, f"SKU {name} ({description})")
    return [SkuRate(source, key, usage, region, usd, name, scope) for region in regions]


GEO_TYPES: Final = ("REGIONAL", "MULTI_REGIONAL", "GLOBAL")


def _regions(sku: Mapping[str, Any], where: str) -> tuple[str, list[str]]:
    """(geoTaxonomy type or "", the regions the price holds in; ["global"] for a GLOBAL SKU)."""
    geo = sku.get("geoTaxonomy")
    if geo is not None:
        kind = geo.get("type") if isinstance(geo, dict) else None
        listed = geo.get("regions") or [] if isinstance(geo, dict) else None
        if kind not in GEO_TYPES or not isinstance(listed, list) or not all(isinstance(r, str) for r in listed):
            raise BillingAnswerError(f"{where}: `geoTaxonomy` must be {{type: {' | '.join(GEO_TYPES)}, regions}}; "
                                     f"got {geo!r}")
        if kind == "GLOBAL":
            return kind, ["global"]
        if listed:
            return kind, list(listed)
    regions = sku.get("serviceRegions")
    if not isinstance(regions, list) or not regions or not all(isinstance(r, str) for r in regions):
        raise BillingAnswerError(f"{where}: `serviceRegions` must be a non-empty list of regions")
    return (geo or {}).get("type") or "", list(regions)


def classify(description: str, service_id: str) -> tuple[str, str, bool] | None:
    """(source, part, is Spot) of a SKU description, or None when it is not a part of a priced machine."""
    if service_id == VERTEX_AI:
        match = _VERTEX.match(description)
        if match is None:
            return None
        source = "fee" if match["fee"] else "vertex"
        if match["gpu"]:
            return source, f"gpu:{VERTEX_GPUS[match['gpu']]}", False
        return source, f"{_KIND[match['kind']]}:{_family(match['family'])}", False
    if (match := _CE_PART.match(description)) is not None:
        return "ce", f"{_KIND[match['kind']]}:{_family(match['family'])}", bool(match["spot"])
    if (match := _CE_GPU.match(description)) is not None:
        return "ce", f"gpu:{GPU_SKUS[match['gpu']]}", bool(match["spot"])
    if (match := _CE_SSD.match(description)) is not None:
        return "ce", "ssd:local", bool(match["spot"])
    return None


def _family(sku_family: str) -> str:
    return VERTEX_FAMILY_ALIASES.get(sku_family) or next(k for k, v in FAMILY_SKUS.items() if v == sku_family)


def _usage(sku: Mapping[str, Any], spot: bool, where: str) -> str:
    category = sku.get("category")
    if not isinstance(category, dict) or not isinstance(category.get("usageType"), str):
        raise BillingAnswerError(f"{where}: `category.usageType` must be text (OnDemand, Preemptible, ...)")
    if spot and category["usageType"] != "Preemptible":
        raise BillingAnswerError(f"{where}: a Spot SKU with usageType {category['usageType']!r}; expected Preemptible")
    return "spot" if spot or category["usageType"] == "Preemptible" else "on_demand"


def unit_price(sku: Mapping[str, Any], where: str) -> float:
    """USD per hour per unit: the first tier of the newest pricingInfo, {units, nanos}, per usageUnit."""
    infos = sku.get("pricingInfo")
    if not isinstance(infos, list) or not infos or not isinstance(infos[-1], dict):
        raise BillingAnswerError(f"{where}: `pricingInfo` must be a non-empty list")
    expression = infos[-1].get("pricingExpression")
    if not isinstance(expression, dict):
        raise BillingAnswerError(f"{where}: `pricingInfo[].pricingExpression` is missing")
    unit = expression.get("usageUnit")
    if unit not in UNITS:
        raise BillingAnswerError(f"{where}: usageUnit {unit!r}; allowed: {', '.join(UNITS)}")
    tiers = expression.get("tieredRates")
    if not isinstance(tiers, list) or not tiers or not isinstance(tiers[0], dict):
        raise BillingAnswerError(f"{where}: `pricingExpression.tieredRates` must be a non-empty list")
    price = tiers[0].get("unitPrice")
    if not isinstance(price, dict) or price.get("currencyCode", "USD") != "USD":
        raise BillingAnswerError(f"{where}: `tieredRates[0].unitPrice` must be a USD Money {{units, nanos}}")
    try:
        units = int(price.get("units") or 0)
        nanos = int(price.get("nanos") or 0)
    except (TypeError, ValueError):
        raise BillingAnswerError(f"{where}: unitPrice units {price.get('units')!r} / nanos {price.get('nanos')!r} "
                                 "must be whole numbers") from None
    usd = units + nanos / 1e9
    if usd < 0 or not 0 <= abs(nanos) < 10**9:
        raise BillingAnswerError(f"{where}: unitPrice {units} units {nanos} nanos is not a price")
    return usd / UNITS[unit]  # unitPrice is per one usageUnit (displayQuantity only says how to show it)


def fetch_rates(endpoint: str | None = None, call: Callable[..., Any] | None = None) -> list[SkuRate]:
    """The parts of both services (Compute Engine, then Vertex AI), checked. Every failure is a BillingError
    that says what went wrong (the transport's and google-auth's errors included)."""
    from google.auth.exceptions import GoogleAuthError

    from gcp_training_jobs.backends import transport

    found: list[SkuRate] = []
    for service_id in (COMPUTE_ENGINE, VERTEX_AI):
        where = f"services/{service_id}/skus ({SERVICES[service_id]})"
        try:
            skus = list_skus(service_id, endpoint, call=call)
        except (transport.ApiError, transport.TransportError, transport.CredentialsError,
                transport.InsecureEndpointError, GoogleAuthError) as error:
            raise BillingError(f"{where}: {error}") from None
        if not skus:
            raise BillingAnswerError(f"{where}: no SKU at all; the answer is empty, not a price list")
        found += rates(skus, service_id)
    return found
