"""The Service Usage surface (serviceusage v1beta1): services.consumerQuotaMetrics.list and .get, serving the custom
training quota limits a test set (`POST /_emulator/quotas`), so a client reads them with Google's discovery client.

Shape (serviceusage.v1beta1.json: ListConsumerQuotaMetricsResponse, ConsumerQuotaMetric, ConsumerQuotaLimit,
QuotaBucket): each metric {name, displayName, metric "aiplatform.googleapis.com/<metric>", unit,
consumerQuotaLimits [{name, metric, unit, isPrecise, allowsAdminOverrides, quotaBuckets [{effectiveLimit,
defaultLimit (int64 as text), dimensions {region}}]}]}, one bucket per region with a limit (-1: unlimited); the
per-region buckets `gcloud alpha services quota list` shows (quotaBuckets[].dimensions.region, effectiveLimit: the
Vertex samples' common_util.get_quota reads exactly these). Metrics without a limit set are not listed, and their
get is a 404 (the emulator has none). Other services answer an empty list.

`view` (QuotaView, the discovery document's words, read 2026-11-25): BASIC (also when unset) shows "only buckets
with overrides"; FULL "include[s] per-location buckets even if they do not have overrides". A limit set here is
the region's default (no override), so BASIC answers each limit without buckets and FULL with them; another
value is a 400. Paging: `pageSize` metrics a page, an opaque `nextPageToken`.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from gcp_training_jobs.emulator import capacity
from gcp_training_jobs.emulator.errors import ApiError, invalid
from gcp_training_jobs.emulator.jobs import project_number
from gcp_training_jobs.emulator.listing import offset_page
from gcp_training_jobs.emulator.routing import Request, Route
from gcp_training_jobs.emulator.state import EmulatorState

METHOD = "consumerQuotaMetrics.list"
UNIT = "1/{project}/{region}"
DEFAULT_PAGE = 100
VIEWS = ("QUOTA_VIEW_UNSPECIFIED", "BASIC", "FULL")


def _metric(project: str, metric: str, buckets: list[tuple[str, int]], full: bool) -> dict[str, Any]:
    parent = f"projects/{project_number(project)}/services/{capacity.SERVICE}/consumerQuotaMetrics/{quote(metric, '')}"
    short = metric.rsplit("/", 1)[-1]
    limit: dict[str, Any] = {
        "name": f"{parent}/limits/{quote('/project/region', '')}",
        "metric": metric,
        "unit": UNIT,
        "isPrecise": True,
        "allowsAdminOverrides": True,
    }
    if full:
        limit["quotaBuckets"] = [{"effectiveLimit": str(n), "defaultLimit": str(n), "dimensions": {"region": r}}
                                 for r, n in buckets]
    return {"name": parent, "displayName": short.replace("_", " ").capitalize() + " per region", "metric": metric,
            "unit": UNIT, "consumerQuotaLimits": [limit]}


def _full(r: Request) -> bool:
    view = str(r.query.get("view") or "QUOTA_VIEW_UNSPECIFIED")
    if view not in VIEWS:
        raise invalid(f"Invalid value at 'view' (type.googleapis.com/google.api.serviceusage.v1beta1.QuotaView), "
                      f'"{view}"; allowed: {", ".join(VIEWS)}', "view")
    return view == "FULL"


def list_metrics(state: EmulatorState, r: Request) -> dict[str, Any]:
    """GET /v1beta1/projects/{p}/services/{service}/consumerQuotaMetrics."""
    full = _full(r)
    if r.params["s"] != capacity.SERVICE:
        return {}
    metrics = [_metric(r.project, m, buckets, full) for m, buckets in state.quota_table().items()]
    page, token = offset_page(metrics, r.page_size() or DEFAULT_PAGE, str(r.query.get("pageToken") or ""), "quota")
    answer: dict[str, Any] = {"metrics": page} if page else {}
    if token:
        answer["nextPageToken"] = token
    return answer


def get_metric(state: EmulatorState, r: Request) -> dict[str, Any]:
    """GET /v1beta1/projects/{p}/services/{service}/consumerQuotaMetrics/{metric, its / escaped}."""
    full = _full(r)
    metric = r.params["m"]
    buckets = state.quota_table().get(metric) if r.params["s"] == capacity.SERVICE else None
    if buckets is None:
        raise ApiError(404, f"Quota metric projects/{r.project}/services/{r.params['s']}/consumerQuotaMetrics/"
                       f"{quote(metric, '')} not found.", "NOT_FOUND")
    return _metric(r.project, metric, buckets, full)


_PARENT = r"^/v1beta1/projects/(?P<p>[^/:]+)/services/(?P<s>[^/:]+)/consumerQuotaMetrics"
ROUTES: list[Route] = [
    Route("GET", re.compile(_PARENT + "$"), METHOD, list_metrics),
    Route("GET", re.compile(_PARENT + r"/(?P<m>[^:]+)$"), "consumerQuotaMetrics.get", get_metric),
]
