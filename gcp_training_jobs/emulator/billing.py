"""The Cloud Billing Catalog surface (cloudbilling v1): services.list (Compute Engine, Vertex AI, Cloud TPU) and
services.skus.list over a small catalog of Compute Engine and Vertex AI SKUs, paged, in Google's shapes, so
`prices refresh` runs over real HTTP with Google's client.

Services (cloudbilling.v1.json, schema Service: name, serviceId, displayName, businessEntityName): Compute Engine
6F81-5844-456A and Vertex AI C7E2-9256-1C43 as the bundled price table's sources name them; Cloud TPU E000-3F24-B8AA,
the id skypilot-org/skypilot's sky/catalog/data_fetchers/fetch_gcp.py @ a2f08cfd1e81 reads its TPU v2/v3/v4 SKUs
under ("Service IDs found in https://cloud.google.com/skus", read 2026-11-25), where Google's SKU explorer names the
service "Cloud TPU". The emulator serves no Cloud TPU SKU (an empty list): the project prices TPUs from its table.

Shape (cloudbilling.v1.json, schema Sku, and the SKU Cyclenerd's build/notes/api/v1/skus.json @ fd66b26ff84f
shows): name "services/SERVICE/skus/ID", skuId, description ("N1 Predefined Instance Core running in
Americas"), category {serviceDisplayName, resourceFamily, resourceGroup, usageType "OnDemand" | "Preemptible"},
serviceRegions, geoTaxonomy {type GLOBAL | REGIONAL | MULTI_REGIONAL, regions (empty for GLOBAL)}, pricingInfo
[{summary, pricingExpression {usageUnit, usageUnitDescription, baseUnit,
baseUnitDescription, baseUnitConversionFactor, displayQuantity, tieredRates [{startUsageAmount, unitPrice
{currencyCode, units (int64 as text), nanos}}]}, currencyConversionRate, effectiveTime}], serviceProviderName.

The figures are the emulator's: N1 on demand splits Compute Engine's us-central1 n1-standard-4 (0.189999, the
bundled table's source) into 0.031611 per vCPU and 0.004237 per GiB; Vertex's N1 training SKUs are those x 1.15
and its management fees x 0.15; G2 and E2 reproduce the same source's g2-standard-4/-8 and e2-standard-4.

Paging: Google's largest page is 5000 SKUs; this catalog is small, so pages are cut at PAGE_LIMIT SKUs for
the client to page through (nextPageToken, an opaque token). Only USD is served (Google converts other
currencies: `currencyCode` other than USD is refused here, 400). A test serves a catalog of its own
(serve_skus: a malformed or partial page) in-process; `reset()` brings the default back.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from gcp_training_jobs.emulator.errors import ApiError, invalid
from gcp_training_jobs.emulator.routing import Request, Route
from gcp_training_jobs.emulator.state import EmulatorState

COMPUTE_ENGINE = "6F81-5844-456A"
VERTEX_AI = "C7E2-9256-1C43"
CLOUD_TPU = "E000-3F24-B8AA"
SERVICE_NAMES = {COMPUTE_ENGINE: "Compute Engine", VERTEX_AI: "Vertex AI", CLOUD_TPU: "Cloud TPU"}
#: A SKU's serviceRegions when it is global (a license): geoTaxonomy GLOBAL, no regions.
GLOBAL = ("global",)
PAGE_LIMIT = 4
MAX_PAGE_SIZE = 5000
AMERICAS = ("us-central1", "us-east1", "us-west1")
NETHERLANDS = ("europe-west4",)
_EFFECTIVE = "2026-11-01T00:00:00Z"
_UNITS = {"h": ("hour", "s", "second", 3600), "GiBy.h": ("gibibyte hour", "By.s", "byte-second", 3865470566400),
          "GiBy.mo": ("gibibyte month", "By.s", "byte-second", 2783138807808000)}


def sku(service: str, sku_id: str, description: str, group: str, usage: str, regions: tuple[str, ...],
        usd: float, unit: str = "h", family: str = "Compute") -> dict[str, Any]:
    """One SKU in Google's shape."""
    units, nanos = int(usd), round((usd - int(usd)) * 1e9)
    what, base, base_what, factor = _UNITS[unit]
    return {
        "name": f"services/{service}/skus/{sku_id}", "skuId": sku_id, "description": description,
        "category": {"serviceDisplayName": SERVICE_NAMES[service], "resourceFamily": family,
                     "resourceGroup": group, "usageType": usage},
        "serviceRegions": list(regions),
        "geoTaxonomy": geo_taxonomy(regions),
        "pricingInfo": [{
            "summary": "", "effectiveTime": _EFFECTIVE, "currencyConversionRate": 1,
            "pricingExpression": {
                "usageUnit": unit, "usageUnitDescription": what, "baseUnit": base, "baseUnitDescription": base_what,
                "baseUnitConversionFactor": factor, "displayQuantity": 1,
                "tieredRates": [{"startUsageAmount": 0,
                                 "unitPrice": {"currencyCode": "USD", "units": str(units), "nanos": nanos}}],
            },
        }],
        "serviceProviderName": "Google",
    }


def geo_taxonomy(regions: tuple[str, ...]) -> dict[str, Any]:
    """A SKU's geoTaxonomy, as Google's answers carry it: GLOBAL without regions, REGIONAL with its one region,
    MULTI_REGIONAL with its regions."""
    if regions == GLOBAL:
        return {"type": "GLOBAL"}
    return {"type": "REGIONAL" if len(regions) == 1 else "MULTI_REGIONAL", "regions": list(regions)}


def _ce(sku_id: str, description: str, group: str, usage: str, regions: tuple[str, ...], usd: float,
        unit: str = "h", family: str = "Compute") -> dict[str, Any]:
    return sku(COMPUTE_ENGINE, sku_id, description, group, usage, regions, usd, unit, family)


def _vx(sku_id: str, description: str, regions: tuple[str, ...], usd: float, unit: str = "h") -> dict[str, Any]:
    return sku(VERTEX_AI, sku_id, description, "Training", "OnDemand", regions, usd, unit, "ApplicationServices")


def default_catalog() -> dict[str, list[dict[str, Any]]]:
    """The catalog served unless a test serves its own (a fresh copy each call)."""
    ce = [
        _ce("02EE-77CE-ACCD", "Network Vpn Internet Egress from Americas to Africa", "VPNInternetEgress",
            "OnDemand", AMERICAS, 0.12, "GiBy.h", "Network"),
        _ce("2E27-4F75-95CD", "N1 Predefined Instance Core running in Americas", "N1Standard", "OnDemand",
            AMERICAS, 0.031611),
        _ce("6C71-E2B2-7DE8", "N1 Predefined Instance Ram running in Americas", "N1Standard", "OnDemand",
            AMERICAS, 0.004237, "GiBy.h"),
        _ce("1DA5-8E5E-0EA6", "Spot Preemptible N1 Predefined Instance Core running in Americas", "N1Standard",
            "Preemptible", AMERICAS, 0.00698),
        _ce("BB0D-2A61-3A0E", "Spot Preemptible N1 Predefined Instance Ram running in Americas", "N1Standard",
            "Preemptible", AMERICAS, 0.002606, "GiBy.h"),
        _ce("E1C3-5A27-9F44", "N1 Predefined Instance Core running in Netherlands", "N1Standard", "OnDemand",
            NETHERLANDS, 0.034773),
        _ce("C8D1-5E07-4F0A", "N1 Predefined Instance Ram running in Netherlands", "N1Standard", "OnDemand",
            NETHERLANDS, 0.004661, "GiBy.h"),
        _ce("A1B4-33C5-91E2", "E2 Instance Core running in Americas", "CPU", "OnDemand", AMERICAS, 0.021811),
        _ce("A1B4-33C5-91E3", "E2 Instance Ram running in Americas", "RAM", "OnDemand", AMERICAS, 0.0029236775,
            "GiBy.h"),
        _ce("7C3D-1E4F-0A21", "G2 Instance Core running in Americas", "CPU", "OnDemand", AMERICAS, 0.024988),
        _ce("7C3D-1E4F-0A22", "G2 Instance Ram running in Americas", "RAM", "OnDemand", AMERICAS, 0.002927501,
            "GiBy.h"),
        _ce("9A5B-44E1-7B10", "Nvidia L4 GPU running in Americas", "GPU", "OnDemand", AMERICAS, 0.560040239),
        _ce("9F1C-1B21-3D4E", "Nvidia Tesla T4 GPU running in Americas", "GPU", "OnDemand", AMERICAS, 0.35),
        _ce("9F1C-1B21-3D4F", "Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Americas", "GPU",
            "Preemptible", AMERICAS, 0.175),
        _ce("3C9E-11D7-82B4", "Licensing Fee for Ubuntu Pro on VM with 4 VCPU", "Ubuntu", "OnDemand", GLOBAL, 0.0063,
            family="License"),
        _ce("4E2F-6A8B-51C0", "SSD backed Local Storage in Americas", "LocalSSD", "OnDemand", AMERICAS, 0.08,
            "GiBy.mo", "Storage"),
    ]
    vertex = [
        _vx("1F3B-7C2D-8E41", "Vertex AI: Training/Pipelines on N1 Predefined Instance Core running in Americas",
            AMERICAS, 0.03635265),
        _vx("1F3B-7C2D-8E42", "Vertex AI: Training/Pipelines on N1 Predefined Instance Ram running in Americas",
            AMERICAS, 0.00487255, "GiBy.h"),
        _vx("5D2A-9B1C-3E51", "Vertex AI: Training/Pipelines Management fee on N1 Instance Core in Americas",
            AMERICAS, 0.00474165),
        _vx("5D2A-9B1C-3E52", "Vertex AI: Training/Pipelines Management fee on N1 Instance RAM in Americas",
            AMERICAS, 0.00063555, "GiBy.h"),
        _vx("8E7F-0A1B-2C33", "Vertex AI: Online/Batch Prediction N1 Predefined Instance Core running in Americas",
            AMERICAS, 0.0363527),
    ]
    return {COMPUTE_ENGINE: ce, VERTEX_AI: vertex, CLOUD_TPU: []}


def serve_skus(state: EmulatorState, service: str, skus: list[Any]) -> None:
    """Serve `skus` (any JSON, malformed on purpose if a test wants) for `service` until the state's reset."""
    with state.lock:
        state.billing_skus[service] = list(skus)


def _catalog(state: EmulatorState, service: str) -> list[Any]:
    with state.lock:
        served = state.billing_skus.get(service)
    if served is not None:
        return served
    found = default_catalog().get(service)
    if found is None:
        raise ApiError(404, f"Service services/{service} not found.", "NOT_FOUND")
    return found


def list_services(state: EmulatorState, r: Request) -> dict[str, Any]:
    """GET /v1/services: the public services, paged like the SKUs (pageSize, an opaque pageToken)."""
    services = [{"name": f"services/{sid}", "serviceId": sid, "displayName": name,
                 "businessEntityName": "businessEntities/GCP"} for sid, name in SERVICE_NAMES.items()]
    size = r.page_size()
    if size is not None and size < 0:
        raise invalid("Field: page_size Error: The page size must not be negative.", "page_size")
    token = r.query.get("pageToken") or None
    start = _offset("services", token) if token else 0
    end = start + min(size or MAX_PAGE_SIZE, MAX_PAGE_SIZE)
    return {"services": services[start:end], "nextPageToken": _token("services", end) if end < len(services) else ""}


def _token(service: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{service}:{offset}".encode()).decode("ascii").rstrip("=")


def _offset(service: str, token: str) -> int:
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode("ascii")
        named, _, offset = text.rpartition(":")
        if named != service:
            raise ValueError(text)
        return int(offset)
    except (ValueError, UnicodeError):
        raise invalid("Invalid page token.", "page_token") from None


def list_skus(state: EmulatorState, r: Request) -> dict[str, Any]:
    """GET /v1/services/{service}/skus: one page of the service's SKUs, in USD."""
    service = r.params["s"]
    currency = r.query.get("currencyCode") or "USD"
    if currency != "USD":
        raise invalid(f"The emulator serves prices in USD only, not {currency!r}.", "currency_code")
    size = r.page_size()
    if size is not None and size < 0:
        raise invalid("Field: page_size Error: The page size must not be negative.", "page_size")
    skus = _catalog(state, service)
    token = r.query.get("pageToken") or None
    start = _offset(service, token) if token else 0
    end = start + min(size or MAX_PAGE_SIZE, MAX_PAGE_SIZE, PAGE_LIMIT)
    answer: dict[str, Any] = {"skus": skus[start:end], "nextPageToken": _token(service, end) if end < len(skus)
                              else ""}
    return answer


ROUTES: list[Route] = [
    Route("GET", re.compile(r"^/v1/services$"), "services.list", list_services),
    Route("GET", re.compile(r"^/v1/services/(?P<s>[^/:]+)/skus$"), "services.skus.list", list_skus),
]
