"""Google's own typed clients for Cloud Logging (google-cloud-logging), the Cloud Billing Catalog
(google-cloud-billing) and Cloud Quotas (google-cloud-quotas), over REST, anonymous, pointed at the emulator
unchanged, as a user's code builds them.

A client package that is not installed skips its tests on a developer's machine, and fails them under CI=true:
CI never passes a probe it did not run.
"""

from __future__ import annotations

import importlib
import json
import os
import urllib.error
import urllib.request
from types import ModuleType
from typing import Any

import pytest
from google.auth.credentials import AnonymousCredentials

from gcp_training_jobs.emulator import Emulator
from tests.helpers import container_pool, custom_job_spec

PROJECT, REGION = "my-proj", "us-central1"


def google_client(module: str, package: str) -> ModuleType:
    """`module` imported; its absence skips the test, or fails it under CI=true."""
    try:
        return importlib.import_module(module)
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{package} is not installed: CI runs every Google client probe (pip install '{package}')")
        pytest.skip(f"{package} is not installed")


def control(emulator: Emulator, path: str, body: dict[str, Any]) -> Any:
    """POST a control endpoint of the emulator over HTTP, as a test outside its process would."""
    request = urllib.request.Request(f"{emulator.url}_emulator/{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


# ------------------------------------------------------------------------------------------------ Cloud Logging


@pytest.fixture
def logging_client(emulator: Emulator) -> Any:
    logging = google_client("google.cloud.logging", "google-cloud-logging>=3.17,<4")
    return logging.Client(project=PROJECT, credentials=AnonymousCredentials(), _use_grpc=False,
                          client_options={"api_endpoint": emulator.url.rstrip("/")})


def ran_a_job(emulator: Emulator, vertex_client: Any, *, labels: dict[str, str] | None = None) -> str:
    """A custom job that has run 25 s of emulated time on two pools of one replica; its numeric id."""
    body: dict[str, Any] = {"displayName": "resnet", "jobSpec": custom_job_spec(
        container_pool({"machineType": "n1-standard-4"}), container_pool({"machineType": "n1-standard-4"}))}
    if labels:
        body["labels"] = labels
    job = vertex_client.projects().locations().customJobs().create(
        parent=f"projects/{PROJECT}/locations/{REGION}", body=body).execute()
    emulator.state.set_phase_seconds(10.0)
    emulator.state.advance(20)  # queued 10 s, pending 10 s: running
    emulator.state.set_phase_seconds(1e9)  # and running from then on
    emulator.state.advance(25)
    return str(job["name"]).rsplit("/", 1)[-1]


def payloads(entries: Any) -> list[str]:
    return [e.payload if isinstance(e.payload, str) else e.payload["message"] for e in entries]


def test_logging_client_reads_presence_global_text_and_quoted_keys(
        emulator: Emulator, vertex_client: Any, logging_client: Any) -> None:
    job = ran_a_job(emulator, vertex_client)
    mine = f'resource.type="ml_job" resource.labels.job_id="{job}"'
    everything = payloads(logging_client.list_entries(filter_=mine))
    structured = payloads(logging_client.list_entries(filter_=f"{mine} jsonPayload.message:*"))
    text = payloads(logging_client.list_entries(filter_=f"{mine} -jsonPayload.message:*"))
    assert structured and text and sorted(structured + text) == sorted(everything)
    assert "Job is running." in text and "Job is running." not in structured
    assert payloads(logging_client.list_entries(filter_=f'{mine} "job is RUNNING"')) == ["Job is running."]
    assert payloads(logging_client.list_entries(filter_=f"{mine} NOT textPayload:*")) == structured
    steps = payloads(logging_client.list_entries(filter_=f'{mine} "step 2:"'))
    assert len(steps) == 2  # one line per replica
    keyed = f'{mine} resource.labels."task_name"="workerpool1-0" loss'
    assert len(payloads(logging_client.list_entries(filter_=keyed))) == 2  # steps 1 and 2 of the second pool
    descending = list(logging_client.list_entries(filter_=mine, order_by="timestamp desc", page_size=3))
    # Newest first by timestamp (entries of one instant keep their insertId order, reversed).
    assert len(descending) >= 3
    assert [(e.timestamp, e.insert_id) for e in descending] == sorted(((e.timestamp, e.insert_id) for e in descending),
                                                                      reverse=True)


@pytest.mark.parametrize(("flt", "named"), [
    ("sample(insertId, 0.25)", "sample()"), ('SEARCH("Job")', "SEARCH()"), ('log_id("stdout")', "log_id()"),
    ("severity=(ERROR OR INFO)", "a list of values"), ("textPayload=*", "textPayload:*"),
])
def test_logging_client_gets_a_400_naming_what_the_emulator_does_not_serve(
        emulator: Emulator, logging_client: Any, flt: str, named: str) -> None:
    from google.api_core import exceptions

    with pytest.raises(exceptions.BadRequest) as caught:
        list(logging_client.list_entries(filter_=flt))
    assert named in str(caught.value) and "not served by the emulator" in str(caught.value)


# ------------------------------------------------------------------------------------- Cloud Billing Catalog


@pytest.fixture
def catalog_client(emulator: Emulator) -> Any:
    billing = google_client("google.cloud.billing_v1", "google-cloud-billing>=1.21,<2")
    return billing.CloudCatalogClient(transport="rest", credentials=AnonymousCredentials(),
                                      client_options={"api_endpoint": emulator.url.rstrip("/")})


def test_catalog_client_finds_the_services_by_their_display_names(emulator: Emulator, catalog_client: Any) -> None:
    listed = {s.display_name: s.service_id for s in catalog_client.list_services()}
    assert listed == {"Compute Engine": "6F81-5844-456A", "Vertex AI": "C7E2-9256-1C43", "Cloud TPU": "E000-3F24-B8AA"}
    paged = list(catalog_client.list_services(request={"page_size": 2}))
    assert [s.name for s in paged] == [f"services/{i}" for i in listed.values()]
    assert len(emulator.state.requests("services.list")) == 3  # 2 + 1, then no token


def test_catalog_client_reads_geo_taxonomy_on_every_sku(catalog_client: Any) -> None:
    billing = google_client("google.cloud.billing_v1", "google-cloud-billing>=1.21,<2")
    kinds = billing.GeoTaxonomy.Type
    skus = list(catalog_client.list_skus(parent="services/6F81-5844-456A"))
    assert skus and all(s.geo_taxonomy.type_ != kinds.TYPE_UNSPECIFIED for s in skus)
    for sku in skus:
        regions = list(sku.geo_taxonomy.regions)
        if sku.geo_taxonomy.type_ == kinds.GLOBAL:
            assert regions == [] and list(sku.service_regions) == ["global"]
        else:
            assert regions == list(sku.service_regions)
            assert (len(regions) == 1) == (sku.geo_taxonomy.type_ == kinds.REGIONAL)
    assert {s.geo_taxonomy.type_ for s in skus} == {kinds.GLOBAL, kinds.REGIONAL, kinds.MULTI_REGIONAL}
    assert list(catalog_client.list_skus(parent="services/E000-3F24-B8AA")) == []
    vertex = list(catalog_client.list_skus(parent="services/C7E2-9256-1C43"))
    assert vertex and all(s.category.service_display_name == "Vertex AI" for s in vertex)


# ---------------------------------------------------------------------------------------------------- Cloud Quotas

L4 = "aiplatform.googleapis.com/custom_model_training_nvidia_l4_gpus"
PARENT = f"projects/{PROJECT}/locations/global/services/aiplatform.googleapis.com"


@pytest.fixture
def quotas_client(emulator: Emulator) -> Any:
    cloudquotas = google_client("google.cloud.cloudquotas_v1", "google-cloud-quotas>=0.6,<1")
    return cloudquotas.CloudQuotasClient(transport="rest", credentials=AnonymousCredentials(),
                                         client_options={"api_endpoint": emulator.url.rstrip("/")})


def test_quotas_client_lists_and_gets_the_limits_set_on_the_emulator(emulator: Emulator, quotas_client: Any) -> None:
    control(emulator, "quotas", {"metric": L4, "region": "us-central1", "limit": 8})
    control(emulator, "quotas", {"metric": L4, "region": "europe-west4", "limit": -1})  # unlimited
    control(emulator, "quotas", {"metric": "custom_model_training_cpus", "region": "us-central1", "limit": 64})
    infos = {i.metric: i for i in quotas_client.list_quota_infos(parent=PARENT)}
    assert set(infos) == {L4, "aiplatform.googleapis.com/custom_model_training_cpus"}
    l4 = infos[L4]
    assert {d.dimensions["region"]: d.details.value for d in l4.dimensions_infos} == {"us-central1": 8,
                                                                                      "europe-west4": -1}
    assert l4.service == "aiplatform.googleapis.com" and list(l4.dimensions) == ["region"]
    assert quotas_client.get_quota_info(name=l4.name) == l4
    paged = list(quotas_client.list_quota_infos(request={"parent": PARENT, "page_size": 1}))
    assert [i.metric for i in paged] == list(infos)
    assert list(quotas_client.list_quota_infos(parent=PARENT.replace("aiplatform", "compute"))) == []


def test_quotas_client_gets_google_errors(emulator: Emulator, quotas_client: Any) -> None:
    from google.api_core import exceptions

    with pytest.raises(exceptions.NotFound):
        quotas_client.get_quota_info(name=f"{PARENT}/quotaInfos/NoSuchQuotaPerProjectPerRegion")
    with pytest.raises(exceptions.BadRequest):
        list(quotas_client.list_quota_infos(parent=PARENT.replace("global", "us-central1")))
    emulator.state.inject_faults(403, 1, "quotaInfos.list", message="Permission 'cloudquotas.quotas.get' denied")
    with pytest.raises(exceptions.Forbidden):
        list(quotas_client.list_quota_infos(parent=PARENT))


def test_service_usage_get_and_its_views(emulator: Emulator) -> None:
    """consumerQuotaMetrics.get answers one metric; BASIC (the default) shows only buckets with overrides (the
    emulator's limits are defaults: none), FULL every region's bucket; another view is a 400."""
    from googleapiclient.errors import HttpError

    from tests.conftest_emulator import build_client

    control(emulator, "quotas", {"metric": L4, "region": "us-central1", "limit": 8})
    metrics = build_client("serviceusage", emulator.url, "v1beta1").services().consumerQuotaMetrics()
    name = f"projects/{PROJECT}/services/aiplatform.googleapis.com/consumerQuotaMetrics/{L4.replace('/', '%2F')}"
    full = metrics.get(name=name, view="FULL").execute()
    assert full["metric"] == L4 and full["consumerQuotaLimits"][0]["quotaBuckets"] == [
        {"effectiveLimit": "8", "defaultLimit": "8", "dimensions": {"region": "us-central1"}}]
    for basic in (metrics.get(name=name).execute(), metrics.get(name=name, view="BASIC").execute()):
        assert basic["metric"] == L4 and "quotaBuckets" not in basic["consumerQuotaLimits"][0]
    parent = f"projects/{PROJECT}/services/aiplatform.googleapis.com"
    assert "quotaBuckets" not in metrics.list(parent=parent).execute()["metrics"][0]["consumerQuotaLimits"][0]
    with pytest.raises(HttpError) as missing:
        metrics.get(name=name.replace("l4", "t4")).execute()
    assert missing.value.resp.status == 404
    with pytest.raises(urllib.error.HTTPError) as bad:  # the discovery client refuses it before sending
        urllib.request.urlopen(f"{emulator.url}v1beta1/{parent}/consumerQuotaMetrics?view=EVERYTHING", timeout=30)
    assert bad.value.code == 400 and "allowed: QUOTA_VIEW_UNSPECIFIED, BASIC, FULL" in bad.value.read().decode()
