"""The Cloud Quotas surface (cloudquotas v1): projects.locations.services.quotaInfos list and get, serving the custom
training quota limits a test set (`POST /_emulator/quotas`), the same limits Service Usage serves (`serviceusage`),
so google-cloud-quotas and `gcloud quotas info list` read them as from Google.

Shape (Cloud Quotas v1 reference, QuotaInfo and ListQuotaInfosResponse: https://cloud.google.com/docs/quotas/
reference/rest/v1/projects.locations.services.quotaInfos, read 2026-11-25): {name "projects/P/locations/global/
services/SERVICE/quotaInfos/QUOTA_ID", quotaId, metric, service, isPrecise, containerType PROJECT, dimensions
["region"], metricDisplayName, quotaDisplayName, metricUnit, quotaIncreaseEligibility {isEligible}, isFixed,
isConcurrent, dimensionsInfos [{dimensions {region}, details {value (int64 as text; -1: unlimited)},
applicableLocations [region]}]}. The location must be `global` (the API's only one: 400 otherwise). A quota id is
the emulator's own, made from the metric in Google's pattern (custom_model_training_nvidia_l4_gpus ->
CustomModelTrainingNvidiaL4GpusPerProjectPerRegion): a client finds a quota by its `metric`. Metrics without a
limit set are not listed and their get is a 404 (the emulator has none); other services answer an empty list.
Paging: `pageSize` quotas a page (default 100), an opaque `nextPageToken`.
"""

from __future__ import annotations

import re
from typing import Any

from gcp_training_jobs.emulator import capacity
from gcp_training_jobs.emulator.errors import ApiError, invalid
from gcp_training_jobs.emulator.jobs import project_number
from gcp_training_jobs.emulator.listing import offset_page
from gcp_training_jobs.emulator.routing import Request, Route
from gcp_training_jobs.emulator.state import EmulatorState

METHOD = "quotaInfos.list"
DEFAULT_PAGE = 100
MAX_PAGE = 1000


def quota_id(metric: str) -> str:
    """The emulator's quota id of a metric: its words capitalised, then PerProjectPerRegion."""
    short = metric.rsplit("/", 1)[-1]
    return "".join(word.capitalize() for word in short.split("_")) + "PerProjectPerRegion"


def _info(project: str, metric: str, limits: list[tuple[str, int]]) -> dict[str, Any]:
    qid = quota_id(metric)
    number = project if project.isdigit() else project_number(project)  # names carry the project's number
    words = metric.rsplit("/", 1)[-1].replace("_", " ")
    return {
        "name": f"projects/{number}/locations/global/services/{capacity.SERVICE}/quotaInfos/{qid}",
        "quotaId": qid,
        "metric": metric,
        "service": capacity.SERVICE,
        "isPrecise": True,
        "containerType": "PROJECT",
        "dimensions": ["region"],
        "metricDisplayName": words.capitalize(),
        "quotaDisplayName": f"{words.capitalize()} per region",
        "metricUnit": "1",
        "quotaIncreaseEligibility": {"isEligible": True},
        "isFixed": False,
        "isConcurrent": False,
        "dimensionsInfos": [{"dimensions": {"region": region}, "details": {"value": str(limit)},
                             "applicableLocations": [region]} for region, limit in limits],
    }


def _served(state: EmulatorState, r: Request) -> list[dict[str, Any]]:
    if r.location != "global":
        raise invalid(f"Invalid location {r.location!r}: Cloud Quotas serves locations/global only.", "parent")
    if r.params["s"] != capacity.SERVICE:
        return []
    return [_info(r.project, metric, limits) for metric, limits in state.quota_table().items()]


def list_infos(state: EmulatorState, r: Request) -> dict[str, Any]:
    """GET /v1/projects/{p}/locations/global/services/{service}/quotaInfos."""
    infos = _served(state, r)
    size = r.page_size()
    if size is not None and size < 0:
        raise invalid("page_size must not be negative.", "page_size")
    page, token = offset_page(infos, min(size or DEFAULT_PAGE, MAX_PAGE), str(r.query.get("pageToken") or ""),
                              "quotainfos")
    answer: dict[str, Any] = {"quotaInfos": page} if page else {}
    if token:
        answer["nextPageToken"] = token
    return answer


def get_info(state: EmulatorState, r: Request) -> dict[str, Any]:
    """GET /v1/projects/{p}/locations/global/services/{service}/quotaInfos/{quota id}."""
    for info in _served(state, r):
        if info["quotaId"] == r.params["q"]:
            return info
    raise ApiError(404, f"QuotaInfo projects/{r.project}/locations/{r.location}/services/{r.params['s']}/quotaInfos/"
                   f"{r.params['q']} not found.", "NOT_FOUND")


_PARENT = r"^/v1/projects/(?P<p>[^/:]+)/locations/(?P<l>[^/:]+)/services/(?P<s>[^/:]+)/quotaInfos"
ROUTES: list[Route] = [
    Route("GET", re.compile(_PARENT + "$"), METHOD, list_infos),
    Route("GET", re.compile(_PARENT + r"/(?P<q>[^/:]+)$"), "quotaInfos.get", get_info),
]
