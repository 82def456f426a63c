"""The Service Usage surface (serviceusage v1beta1): services.consumerQuotaMetrics.list, serving the custom training
quota limits a test set (`POST /_emulator/quotas`), so the client reads them with Google's discovery client.

Shape (serviceusage.v1beta1.json: ListConsumerQuotaMetricsResponse, ConsumerQuotaMetric, ConsumerQuotaLimit,
QuotaBucket): each metric {name, displayName, metric "aiplatform.googleapis.com/<metric>", unit,
consumerQuotaLimits [{name, metric, unit, isPrecise, allowsAdminOverrides, quotaBuckets [{effectiveLimit,
defaultLimit (int64 as text), dimensions {region}}]}]}, one bucket per region with a limit; the per-region buckets
`gcloud alpha services quota list` shows (quotaBuckets[].dimensions.region, effectiveLimit: the Vertex samples'
common_util.get_quota reads exactly these). Metrics without a limit set are not listed (the emulator has none).
Other services answer an empty list. Paging: `pageSize` metrics a page, an opaque `nextPageToken`.
"""

from __future__ import annotations

import base64
import re
from typing import Any
from urllib.parse import quote

from components.emulator import capacity
from components.emulator.errors import invalid
from components.emulator.jobs import project_number
from components.emulator.routing import Request, Route
from components.emulator.state import EmulatorState

METHOD = "consumerQuotaMetrics.list"
UNIT = "1/{project}/{region}"
DEFAULT_PAGE = 100


def _metric(project: str, metric: str, buckets: list[tuple[str, int]]) -> dict[str, Any]:
    parent = f"projects/{project_number(project)}/services/{capacity.SERVICE}/consumerQuotaMetrics/{quote(metric, '')}"
    short = metric.rsplit("/", 1)[-1]
    return {
        "name": parent,
        "displayName": short.replace("_", " ").capitalize() + " per region",
        "metric": metric,
        "unit": UNIT,
        "consumerQuotaLimits": [{
            "name": f"{parent}/limits/{quote('/project/region', '')}",
            "metric": metric,
            "unit": UNIT,
            "isPrecise": True,
            "allowsAdminOverrides": True,
            "quotaBuckets": [{"effectiveLimit": str(limit), "defaultLimit": str(limit), "dimensions": {"region": r}}
                             for r, limit in buckets],
        }],
    }


def list_metrics(state: EmulatorState, r: Request) -> dict[str, Any]:
    """GET /v1beta1/projects/{p}/services/{service}/consumerQuotaMetrics."""
    if r.params["s"] != capacity.SERVICE:
        return {}
    with state.lock:
        limits = sorted(state.quota_limits.items())
    by_metric: dict[str, list[tuple[str, int]]] = {}
    for (metric, region), limit in limits:
        by_metric.setdefault(metric, []).append((region, limit))
    metrics = [_metric(r.project, m, buckets) for m, buckets in by_metric.items()]
    size = r.page_size() or DEFAULT_PAGE
    start = _offset(str(r.query.get("pageToken") or ""))
    answer: dict[str, Any] = {"metrics": metrics[start:start + size]} if metrics[start:start + size] else {}
    if start + size < len(metrics):
        answer["nextPageToken"] = base64.urlsafe_b64encode(f"quota:{start + size}".encode()).decode("ascii")
    return answer


def _offset(token: str) -> int:
    if not token:
        return 0
    try:
        prefix, _, number = base64.urlsafe_b64decode(token.encode("ascii")).decode("ascii").partition(":")
        if prefix != "quota":
            raise ValueError(prefix)
        return int(number)
    except (ValueError, UnicodeError):
        raise invalid("Invalid page token.", "page_token") from None


ROUTES: list[Route] = [
    Route("GET", re.compile(r"^/v1beta1/projects/(?P<p>[^/:]+)/services/(?P<s>[^/:]+)/consumerQuotaMetrics$"),
          METHOD, list_metrics),
]
