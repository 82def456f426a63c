"""Will Google run it: Vertex AI's custom training quota limits and what the project's live jobs already hold (the
jobs listed through the backends), held against what new jobs need (gcp_training_jobs.jobspec.review.quotas).

The limits are read once per review from Cloud Quotas (cloudquotas v1 projects.locations.services.quotaInfos.list,
Google's maintained API for quota limits, https://cloud.google.com/docs/quotas/reference/rest/v1/
projects.locations.services.quotaInfos/list, read 2026-11-25; needs `cloudquotas.quotas.get`, the API enabled).
When Cloud Quotas refuses (403: not enabled in the project, or the permission missing) or is not served (404), they
are read from Service Usage instead (serviceusage v1beta1 services.consumerQuotaMetrics.list, view FULL; needs
`serviceusage.quotas.get`), with a warning saying why: the second request is made only when the first failed.

Through the shared transport: one client build per API and process, Application Default Credentials over TLS only,
anonymous on loopback. Quotas that cannot be read (no credentials, permission denied on both, no answer) raise
QuotaUnreadable: the callers warn and go on, they never fail a preview for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from gcp_training_jobs.backends import transport
from gcp_training_jobs.backends.base import Target
from gcp_training_jobs.backends.lifecycle import Jobs
from gcp_training_jobs.backends.transport import ApiError, TransportError
from gcp_training_jobs.jobspec.catalog import quotas as table
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.core.names import ACTIVE_STATES, RESOURCE_LABEL, STACK_LABEL, TRAINING, TUNING, VERTEX
from gcp_training_jobs.jobspec.review.quotas import needs_of
from gcp_training_jobs.jobspec.translate.facts import facts_of_body

ENDPOINT = "https://serviceusage.googleapis.com/"
CLOUD_QUOTAS_ENDPOINT = "https://cloudquotas.googleapis.com/"
METHOD = "consumerQuotaMetrics.list"
CLOUD_QUOTAS_METHOD = "quotaInfos.list"
#: The IAM permission Cloud Quotas asks to read quota limits (its REST reference's "IAM Permissions"), which the
#: warning names; Service Usage's, `serviceusage.quotas.get`, no message names.
CLOUD_QUOTAS_PERMISSION = "cloudquotas.quotas.get"
#: Cloud Quotas' answers that send the read to Service Usage: not enabled / not permitted, or not served.
FALL_BACK_ON = frozenset({403, 404})
CLOUD_QUOTAS_PAGE = 1000
#: Google's effective limit of an unlimited quota.
UNLIMITED = -1
#: The region key of a bucket without dimensions: the limit of every region without a bucket of its own.
ANY_REGION = "*"


class QuotaUnreadable(TrainingJobsError):
    """The quota limits or the live jobs could not be read (no credentials, permission denied, no answer);
    `offline`: for want of credentials (a preview without any is skipped with a note, not a warning)."""

    def __init__(self, message: str, *, offline: bool = False):
        super().__init__(message)
        self.offline = offline


Limits = dict[tuple[str, str], int]


def read_limits(project: str, endpoint: str | None = None, *, call: Callable[..., Any] | None = None,
                warn: Callable[[str], None] | None = None) -> Limits:
    """(metric short name, region or ANY_REGION) -> effective limit of every custom training metric of the project,
    from Cloud Quotas, else (403, 404) from Service Usage with a warning through `warn`. -1 is unlimited (kept, so
    that a region's own -1 is not taken for the limit of every region); two limits of one metric in one region: the
    lower binds."""
    send = call or transport.call
    try:
        return _cloud_quotas(project, endpoint or CLOUD_QUOTAS_ENDPOINT, send)
    except ApiError as error:
        if error.status not in FALL_BACK_ON:
            raise _unreadable(error, f"the quota limits of project {project} (Cloud Quotas)") from None
        (warn or (lambda _: None))(
            f"quota limits read from Service Usage (serviceusage v1beta1): Cloud Quotas answered HTTP {error.status} "
            f"{error.reason}: {error.message}; enable cloudquotas.googleapis.com in project {project} (the stack's "
            f"enableApis does) and grant {CLOUD_QUOTAS_PERMISSION} (roles/cloudquotas.viewer)")
    return _service_usage(project, endpoint or ENDPOINT, send)


def _cloud_quotas(project: str, root: str, send: Callable[..., Any]) -> Limits:
    """quotaInfos.list of aiplatform.googleapis.com: every page (ApiError as it came, for the fallback)."""
    path = f"v1/projects/{project}/locations/global/services/{table.SERVICE}/quotaInfos"

    def request(token: str | None) -> Any:
        return transport.rest_get(root, path, {"pageSize": CLOUD_QUOTAS_PAGE, "pageToken": token})

    return _limits(project, request, root, CLOUD_QUOTAS_METHOD, send, "quotaInfos", _add_info, keep=(ApiError,))


def _service_usage(project: str, root: str, send: Callable[..., Any]) -> Limits:
    """consumerQuotaMetrics.list (view FULL: a bucket per region) of aiplatform.googleapis.com: every page."""
    def request(token: str | None) -> Any:
        metrics = transport.collection(transport.service("serviceusage", "v1beta1", root), "services",
                                       "consumerQuotaMetrics")  # built once (every check reads the limits)
        return metrics.list(parent=f"projects/{project}/services/{table.SERVICE}", view="FULL", pageToken=token)

    return _limits(project, request, root, METHOD, send, "metrics", _add_metric)


def _limits(project: str, request: Callable[[str | None], Any], root: str, method: str, send: Callable[..., Any],
            listed: str, add: Callable[[Limits, Any], None], *, keep: tuple[type[Exception], ...] = ()) -> Limits:
    """Every page of a list of limits (the shared pager, transport.pages: a page token that repeats or is not text,
    or too many pages, is QuotaUnreadable, or raised as it came when ApiError is kept), each item of `listed` added."""
    answers = _read(lambda: list(transport.pages(request, root, method, send=send)),
                    f"the quota limits of project {project}", keep=keep)
    limits: Limits = {}
    for answer in answers:
        for item in answer.get(listed) or []:
            add(limits, item)
    return limits


def _put(limits: Limits, name: str, dimensions: Any, value: Any) -> None:
    """One region's (or every region's) limit; other dimensions (a zone) are not a region's limit."""
    if not isinstance(dimensions, dict) or set(dimensions) - {"region"}:
        return
    try:
        number = int(value)
    except (TypeError, ValueError):
        return
    key = (name, str(dimensions.get("region") or ANY_REGION))
    if number < 0:
        limits.setdefault(key, UNLIMITED)
    elif key not in limits or limits[key] == UNLIMITED or number < limits[key]:
        limits[key] = number


def _add_info(limits: Limits, info: Any) -> None:
    name = table.short_name(str(info.get("metric") or "")) if isinstance(info, dict) else ""
    if not name.startswith(table.METRIC_PREFIX):
        return
    for dimension in info.get("dimensionsInfos") or []:
        if isinstance(dimension, dict):
            _put(limits, name, dimension.get("dimensions") or {}, (dimension.get("details") or {}).get("value"))


def _add_metric(limits: Limits, metric: Any) -> None:
    name = table.short_name(str(metric.get("metric") or "")) if isinstance(metric, dict) else ""
    if not name.startswith(table.METRIC_PREFIX):
        return
    for limit in metric.get("consumerQuotaLimits") or []:
        for bucket in (limit.get("quotaBuckets") or []) if isinstance(limit, dict) else []:
            if isinstance(bucket, dict):
                _put(limits, name, bucket.get("dimensions") or {}, bucket.get("effectiveLimit"))


def limit_of(limits: Mapping[tuple[str, str], int], metric: str, region: str) -> int | None:
    """A metric's limit in a region: its own bucket, else the bucket of every region; None when unknown or
    unlimited (nothing to hold a need against)."""
    found = limits.get((metric, region))
    found = found if found is not None else limits.get((metric, ANY_REGION))
    return None if found is None or found == UNLIMITED else found


def unlimited(limits: Mapping[tuple[str, str], int], metric: str, region: str) -> bool:
    found = limits.get((metric, region))
    return (found if found is not None else limits.get((metric, ANY_REGION))) == UNLIMITED


def _read(send: Callable[[], Any], what: str, *, keep: tuple[type[Exception], ...] = ()) -> Any:
    """`send()`, its failures as QuotaUnreadable (but those of the `keep` types, raised as they came)."""
    from google.auth import exceptions as auth

    try:
        return send()
    except keep:
        raise
    except ApiError as error:
        raise _unreadable(error, what) from None
    except (transport.CredentialsError, auth.DefaultCredentialsError) as error:
        raise QuotaUnreadable(f"cannot read {what}: no credentials ({error})", offline=True) from None
    except TransportError as error:
        raise QuotaUnreadable(f"cannot read {what}: {error}") from None


def _unreadable(error: ApiError, what: str) -> QuotaUnreadable:
    if isinstance(error, transport.PagingError):  # an answer, but not the whole list
        return QuotaUnreadable(f"cannot read {what}: {error}")
    why = "permission denied" if error.status == 403 else f"HTTP {error.status} {error.reason}"
    return QuotaUnreadable(f"cannot read {what} ({why}: {error.message})")


@dataclass
class Held:
    """What a region's live jobs hold, which resources have ever had a job there and which have a live one (their
    RESOURCE_LABEL); and, by STACK_LABEL, what the live jobs of each stack hold."""

    usage: dict[str, int] = field(default_factory=dict)
    resources: set[str] = field(default_factory=set)
    by_stack: dict[str, dict[str, int]] = field(default_factory=dict)
    live: set[str] = field(default_factory=set)

    def count(self, resource: str | None, stack: str | None, units: Mapping[str, int]) -> None:
        """Count a live job: its RESOURCE_LABEL and STACK_LABEL (None: the job has none) and what it holds."""
        if resource:
            self.resources.add(resource)
            self.live.add(resource)
        for metric, unit in units.items():
            self.usage[metric] = self.usage.get(metric, 0) + unit
            if stack:
                held_by = self.by_stack.setdefault(stack, {})
                held_by[metric] = held_by.get(metric, 0) + unit

    def adding(self, made: Iterable[Made]) -> Held:
        """These, with the jobs `made` that they do not hold live (by RESOURCE_LABEL) counted as live: a read made
        before a run's creates, with them (of a resource's jobs, the last made says: one that ended holds nothing).
        Itself when none is added (it is never written: a run shares it)."""
        last = {m.resource: m for m in made}
        new = [m for m in last.values() if m.live and m.resource not in self.live]
        if not new:
            return self
        found = replace(self, usage=dict(self.usage), resources=set(self.resources), live=set(self.live),
                        by_stack={stack: dict(units) for stack, units in self.by_stack.items()})
        for m in new:
            found.count(m.resource, m.stack, m.units)
        return found


@dataclass(frozen=True)
class Made:
    """A job a run made, as Held counts it: its RESOURCE_LABEL, its STACK_LABEL (None: none), what it holds per metric
    (review.quotas.needs_of of the job as judged), and whether it is live (False: the run saw it end)."""

    resource: str
    stack: str | None
    units: Mapping[str, int]
    live: bool = True


def held(project: str, region: str, endpoint: str | None = None, *, log: Callable[[str], None] | None = None) -> Held:
    """The custom and tuning jobs of the project in `region`: what the live ones hold, per metric."""
    from gcp_training_jobs.backends import get_backend

    found = Held()
    for kind in (TRAINING, TUNING):
        jobs = Jobs(get_backend(VERTEX, kind), Target(project, region, endpoint), log=log or (lambda _: None))
        listed: list[dict[str, Any]] = _read(partial(jobs.find_all, {}), f"the jobs of project {project} in {region}")
        for job in listed:
            labels = job.get("labels") or {}
            resource = str(labels[RESOURCE_LABEL]) if labels.get(RESOURCE_LABEL) else None
            if resource:
                found.resources.add(resource)
            if jobs.backend.state(job) in ACTIVE_STATES:
                found.count(resource, str(labels[STACK_LABEL]) if labels.get(STACK_LABEL) else None,
                            needs_of(facts_of_body(job, region=region)).units)
    return found

