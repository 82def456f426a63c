"""One pager (backends.transport.pages) for every list read of Google's APIs, against the loopback emulator over real
HTTP: a page token that repeats (a server that hands out the same token forever, `inject_page_token`) or is not
text, and more pages than the bound, end the read with a PagingError naming the endpoint, the method and the page,
never a silent cut; each reader says it in its own error (billing, quotas, the job lookups, persistent resources,
reservations, log lines), and the lookup before a create that cannot read the list creates nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest

from gcp_training_jobs.backends import billing, persistent_resources, quotas, reservations, transport
from gcp_training_jobs.backends.base import Target
from gcp_training_jobs.backends.cloud_logging import LoggingError, Reader
from gcp_training_jobs.backends.lifecycle import Jobs, LookupFailed
from gcp_training_jobs.backends.ml_v1 import MlV1Backend
from gcp_training_jobs.backends.transport import PagingError, RetryPolicy, TooManyPages
from gcp_training_jobs.backends.vertex import VertexBackend
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.emulator import billing as billing_emulator
from tests.helpers import FakeClock, control

PROJECT = "my-proj"
#: A page fault's count: the emulator would hand out its token this many times more; the pager stops at the second.
FOREVER = 50


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GCP_TRAINING_JOBS_RETRY_BASE_SECONDS", "0.001")


def skus_of(emulator: Emulator, size: int) -> Any:
    """`make_request(page_token)` of services.skus.list of Compute Engine at the emulator, `size` SKUs a page."""
    def request(token: str | None) -> Any:
        return transport.service("cloudbilling", "v1", emulator.url).services().skus().list(
            parent=f"services/{billing.COMPUTE_ENGINE}", pageSize=size, pageToken=token)
    return request


def asked(emulator: Emulator, method: str) -> list[str | None]:
    """The page token of each request of `method` the emulator served, in order."""
    return [r["query"].get("pageToken") for r in emulator.state.requests(method)]


# -- the pager -------------------------------------------------------------------------------------------------------

def test_a_token_that_comes_back_ends_the_read_at_once_naming_endpoint_method_and_page(emulator: Emulator) -> None:
    emulator.state.inject_page_token("services.skus.list", "again", FOREVER)
    with pytest.raises(PagingError) as caught:
        list(transport.pages(skus_of(emulator, 2), emulator.url, "services.skus.list"))
    assert str(caught.value) == (f"services.skus.list at {emulator.url}: page 2: nextPageToken 'again' repeats or is "
                                 "not text; the answer is partial")
    assert (caught.value.endpoint, caught.value.method, caught.value.page) == (emulator.url, "services.skus.list", 2)
    assert asked(emulator, "services.skus.list") == [None, "again"]  # followed once, never again
    assert emulator.state.pending_faults()[0]["count"] == FOREVER - 2
    assert not transport.retryable(caught.value)


@pytest.mark.parametrize("token", [7, {"page": 2}, ["a"]])
def test_a_token_that_is_not_text_is_never_sent_back(emulator: Emulator, token: Any) -> None:
    emulator.state.inject_page_token("services.skus.list", token)
    with pytest.raises(PagingError, match=re.escape(f"page 1: nextPageToken {token!r} repeats or is not text; the "
                                                    "answer is partial")):
        list(transport.pages(skus_of(emulator, 2), emulator.url, "services.skus.list"))
    assert asked(emulator, "services.skus.list") == [None]


def test_more_pages_than_the_bound_are_refused_and_as_many_are_read_whole(emulator: Emulator) -> None:
    three = billing_emulator.default_catalog()[billing_emulator.COMPUTE_ENGINE][:3]
    billing_emulator.serve_skus(emulator.state, billing_emulator.COMPUTE_ENGINE, three)
    pages = list(transport.pages(skus_of(emulator, 1), emulator.url, "services.skus.list", max_pages=3))
    assert [[s["skuId"] for s in page["skus"]] for page in pages] == [[s["skuId"]] for s in three]
    assert "nextPageToken" not in pages[-1] or not pages[-1]["nextPageToken"]
    with pytest.raises(TooManyPages) as caught:
        list(transport.pages(skus_of(emulator, 1), emulator.url, "services.skus.list", max_pages=2))
    assert str(caught.value) == (f"services.skus.list at {emulator.url}: page 2: more than 2 pages; the answer is "
                                 "partial")
    assert len(asked(emulator, "services.skus.list")) == 3 + 2
    assert transport.MAX_PAGES == 1000  # the bound every list read has, unless it names its own (log lines)


def test_the_fault_is_a_control_request_and_serves_the_first_page_for_its_token(emulator: Emulator) -> None:
    status, faults = control(emulator, "faults", {"method": "services.skus.list", "nextPageToken": "again",
                                                  "count": 2})
    assert status == 200 and faults[0]["kind"] == "page" and faults[0]["nextPageToken"] == "again"
    first, again = (skus_of(emulator, 2)(token).execute() for token in (None, "again"))
    assert first == again and first["nextPageToken"] == "again"
    assert control(emulator, "faults", {"nextPageToken": "again"})[0] == 400  # a page fault names its list method


# -- each reader says it in its own words -----------------------------------------------------------------------------

def test_billing_says_the_price_list_is_partial(emulator: Emulator) -> None:
    emulator.state.inject_page_token("services.skus.list", "again", FOREVER)
    with pytest.raises(billing.BillingAnswerError) as caught:
        billing.fetch_rates(emulator.url)
    assert str(caught.value).startswith(f"services/{billing.COMPUTE_ENGINE}/skus: services.skus.list at "
                                        f"{emulator.url}: page 2: nextPageToken 'again' repeats")


def test_quotas_say_the_limits_cannot_be_read_from_either_api(emulator: Emulator) -> None:
    emulator.state.inject_page_token("quotaInfos.list", "again", FOREVER)
    with pytest.raises(quotas.QuotaUnreadable) as caught:
        quotas.read_limits(PROJECT, emulator.url, warn=pytest.fail)  # not a reason to ask Service Usage
    assert str(caught.value).startswith(f"cannot read the quota limits of project {PROJECT} (Cloud Quotas): "
                                        "quotaInfos.list at ")
    assert "page 2: nextPageToken 'again' repeats or is not text; the answer is partial" in str(caught.value)
    assert not emulator.state.requests("consumerQuotaMetrics.list") and not caught.value.offline

    emulator.state.reset()
    emulator.state.inject_faults(403, 1, "quotaInfos.list")
    emulator.state.inject_page_token("consumerQuotaMetrics.list", 3)
    warned: list[str] = []
    with pytest.raises(quotas.QuotaUnreadable, match=rf"^cannot read the quota limits of project {PROJECT}: "
                                                     r"consumerQuotaMetrics.list at .*: page 1: nextPageToken 3 "):
        quotas.read_limits(PROJECT, emulator.url, warn=warned.append)
    assert len(warned) == 1


@pytest.mark.parametrize(("backend", "method"), [(VertexBackend(), "customJobs.list"), (MlV1Backend(), "jobs.list")])
def test_the_lookup_before_a_create_that_cannot_read_the_list_creates_nothing(
        emulator: Emulator, backend: Any, method: str) -> None:
    jobs = Jobs(backend, Target(PROJECT, "us-central1", emulator.url), policy=RetryPolicy(base_seconds=0),
                sleep=FakeClock().sleep, patience=0)
    emulator.state.inject_page_token(method, "again", FOREVER)
    with pytest.raises(PagingError, match=r"^list at .*: page 2: nextPageToken 'again' repeats"):
        jobs.find_all({"pulumi-stack": "dev"})
    with pytest.raises(LookupFailed, match="nothing was created"):
        jobs.create("paged_1", {"labels": {}}, {"pulumi-resource": "r", "pulumi-spec": "s"})
    assert asked(emulator, method) == [None, "again"] * 2
    assert emulator.state.jobs() == [] and not [r for r in emulator.state.requests() if r["method"].endswith("create")]


def test_what_live_jobs_hold_cannot_be_read_and_says_so(emulator: Emulator) -> None:
    emulator.state.inject_page_token("customJobs.list", "again", FOREVER)
    with pytest.raises(quotas.QuotaUnreadable, match=f"^cannot read the jobs of project {PROJECT} in us-central1: "
                                                     r"list at .*: page 2: nextPageToken 'again' repeats"):
        quotas.held(PROJECT, "us-central1", emulator.url)


def test_persistent_resources_and_reservations_lists_end_the_same_way(emulator: Emulator) -> None:
    emulator.state.inject_page_token("persistentResources.list", "again", FOREVER)
    with pytest.raises(PagingError, match=r"^persistentResources.list at .*: page 2: nextPageToken 'again' repeats"):
        persistent_resources.list_resources(PROJECT, "us-central1", emulator.url)
    emulator.state.inject_page_token("reservations.aggregatedList", "again", FOREVER)
    with pytest.raises(PagingError) as caught:
        reservations.aggregated(PROJECT, emulator.url)
    assert str(caught.value).startswith(f"reservations.aggregatedList at {emulator.url}compute/v1/: page 2: ")
    assert asked(emulator, "reservations.aggregatedList") == [None, "again"]


def test_log_lines_end_the_same_way(emulator: Emulator) -> None:
    emulator.state.inject_page_token("entries.list", "again", FOREVER)
    with pytest.raises(LoggingError, match=r"^Cloud Logging \(logging.googleapis.com\) entries.list at .*: page 2: "
                                           "nextPageToken 'again' repeats or is not text; the answer is partial$"):
        Reader(PROJECT, emulator.url, sleep=lambda _: None).lines("gpu_1")
    assert len(emulator.state.requests("entries.list")) == 2  # the token (in the POST body) followed once
