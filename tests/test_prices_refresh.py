"""`python -m components prices refresh` against the loopback emulator's Cloud Billing Catalog, over real HTTP
with google-api-python-client: the table it writes is the one estimates then read; a malformed, partial or
empty answer leaves the table as it was and the command exits 2 saying why."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from googleapiclient.errors import HttpError

from gcp_training_jobs.backends import billing
from gcp_training_jobs.cli import prices as prices_cli
from gcp_training_jobs.cli.main import main
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.emulator import billing as billing_emulator
from gcp_training_jobs.jobspec.catalog import prices, prices_build, prices_refresh
from gcp_training_jobs.jobspec.core.env import VARIABLES
from gcp_training_jobs.jobspec.core.names import EXIT_OK, EXIT_UNREADABLE
from tests.conftest_emulator import build_client


@pytest.fixture
def table_file(tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the refreshed table goes; the commands talk to the emulator; retries are quick."""
    target = tmp_path / "cache" / "prices.json"
    monkeypatch.setenv(prices.PRICES_FILE_ENV, str(target))
    monkeypatch.setenv(VARIABLES["api_endpoint"], emulator.url)  # the providers' variable
    monkeypatch.setenv("GCP_TRAINING_JOBS_RETRY_BASE_SECONDS", "0.001")
    return target


def _refresh(capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["prices", "refresh"])
    out, err = capsys.readouterr()
    return code, out, err


def test_refresh_writes_a_dated_table_that_estimates_then_prefer(
        table_file: Path, emulator: Emulator, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _refresh(capsys)
    assert code == EXIT_OK, err
    assert f"wrote {table_file}" in out and "Estimates read this table first" in out
    table = prices.active_table()
    assert table.path == str(table_file) and table.kind == "refresh" and table.date == date.today()
    n1 = prices.active_table().machine("n1-standard-4", "us-central1")
    assert n1.on_demand == pytest.approx(4 * 0.03635265 + 15 * 0.00487255)  # the Vertex SKUs, summed
    assert n1.spot == pytest.approx(4 * (0.00698 + 0.00474165) + 15 * (0.002606 + 0.00063555))
    assert n1.basis is not None and n1.basis.text.startswith("Vertex AI SKU list") and n1.basis.date == date.today()
    e2 = prices.active_table().machine("e2-standard-4", "us-central1")  # no Spot SKU served: the snapshot entry stays
    assert e2.basis is not None and e2.basis.text == "Compute Engine list 2026-07-30 + Vertex 15% (inferred, rule cpu)"
    t4 = prices.active_table().accelerator("NVIDIA_TESLA_T4", "us-east1", 4)
    assert t4.on_demand == pytest.approx(0.35 * 1.15) and t4.spot == pytest.approx(0.175 + 0.15 * 0.35)
    assert t4.basis is not None and t4.basis.text == f"Compute Engine SKU list {date.today()} + Vertex 15%"
    eu = prices.active_table().machine("n1-standard-4", "europe-west4")  # no Vertex nor Spot SKU there: kept
    assert eu.basis is not None and eu.basis.date == date(2026, 7, 30) and table.oldest == date(2026, 7, 30)
    assert any(s["id"] == "cloudbilling" and s["url"] == emulator.url for s in table.sources)
    pages = [r["query"].get("pageToken") for r in emulator.state.requests("services.skus.list")]
    assert len(pages) >= 4 and pages[0] is None and all(pages[1:3])  # Google's client paged through


def _serve_page_two(emulator: Emulator, broken: Any) -> None:
    good = billing_emulator.default_catalog()[billing_emulator.COMPUTE_ENGINE]
    billing_emulator.serve_skus(emulator.state, billing_emulator.COMPUTE_ENGINE, [*good[:5], broken, *good[5:]])


@pytest.mark.parametrize(("broken", "says"), [
    ({**billing_emulator.default_catalog()[billing_emulator.COMPUTE_ENGINE][1], "skuId": "BAD0-0000-0001",
      "pricingInfo": [{"pricingExpression": {"usageUnit": "h", "tieredRates": [
          {"unitPrice": {"currencyCode": "USD", "units": "abc", "nanos": 5}}]}}]},
     "SKU BAD0-0000-0001 (N1 Predefined Instance Core running in Americas): unitPrice units 'abc'"),
    ("not a SKU", "page 2: `skus` must be a list of SKU objects"),
    ({k: v for k, v in billing_emulator.default_catalog()[billing_emulator.COMPUTE_ENGINE][1].items()
      if k != "geoTaxonomy"} | {"serviceRegions": []}, "`serviceRegions` must be a non-empty list"),
    ({**billing_emulator.default_catalog()[billing_emulator.COMPUTE_ENGINE][1], "geoTaxonomy": {"type": "ZONAL"}},
     "`geoTaxonomy` must be {type: REGIONAL | MULTI_REGIONAL | GLOBAL, regions}"),
])
def test_a_malformed_page_leaves_the_table_untouched_and_exits_2(
        table_file: Path, emulator: Emulator, capsys: pytest.CaptureFixture[str], broken: Any, says: str) -> None:
    assert _refresh(capsys)[0] == EXIT_OK
    before = table_file.read_bytes()
    _serve_page_two(emulator, broken)
    code, out, err = _refresh(capsys)
    assert code == EXIT_UNREADABLE and not out
    assert says in err and f"the price table at {table_file} is unchanged" in err
    assert "Traceback" not in err
    assert table_file.read_bytes() == before and [p.name for p in table_file.parent.iterdir()] == ["prices.json"]


def test_an_answer_that_fails_or_prices_nothing_writes_nothing(
        table_file: Path, emulator: Emulator, capsys: pytest.CaptureFixture[str]) -> None:
    emulator.state.inject_faults(503, count=6, method="services.skus.list")
    code, _, err = _refresh(capsys)
    assert code == EXIT_UNREADABLE and "HTTP 503" in err and "no table was written" in err
    assert not table_file.exists()
    unrelated = billing_emulator.default_catalog()[billing_emulator.COMPUTE_ENGINE][:1]  # an egress SKU only
    billing_emulator.serve_skus(emulator.state, billing_emulator.COMPUTE_ENGINE, unrelated)
    code, _, err = _refresh(capsys)
    assert code == EXIT_UNREADABLE and "prices no machine type" in err and not table_file.exists()
    billing_emulator.serve_skus(emulator.state, billing_emulator.VERTEX_AI, [])
    code, _, err = _refresh(capsys)
    assert code == EXIT_UNREADABLE and "no SKU at all" in err and not table_file.exists()


def test_a_failed_write_leaves_the_old_table_and_no_temporary_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "prices.json"
    target.write_text("old")

    def refuse(*_: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(prices_cli.os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        prices_cli.write_atomically(target, "new")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["prices.json"]


@pytest.mark.parametrize(("description", "service", "part"), [
    ("N1 Predefined Instance Core running in Americas", billing.COMPUTE_ENGINE, ("ce", "cpu:n1", False)),
    ("Spot Preemptible A2 Instance Ram running in Belgium", billing.COMPUTE_ENGINE, ("ce", "ram:a2", True)),
    ("Compute optimized Core running in Iowa", billing.COMPUTE_ENGINE, ("ce", "cpu:c2", False)),
    ("Nvidia Tesla A100 80GB GPU running in Americas", billing.COMPUTE_ENGINE, ("ce", "gpu:NVIDIA_A100_80GB", False)),
    ("Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Americas", billing.COMPUTE_ENGINE,
     ("ce", "gpu:NVIDIA_TESLA_T4", True)),
    ("SSD backed Local Storage attached to Spot Preemptible VMs in Americas", billing.COMPUTE_ENGINE,
     ("ce", "ssd:local", True)),
    ("Vertex AI: Training/Pipelines on NVIDIA H100 80GB in Iowa", billing.VERTEX_AI,
     ("vertex", "gpu:NVIDIA_H100_80GB", False)),
    ("Vertex AI: Training/Pipelines management fee on A3 Instance RAM in Iowa", billing.VERTEX_AI,
     ("fee", "ram:a3", False)),
    ("Vertex AI: Training/Pipelines Management fee on N1 Instance Core in Americas", billing.VERTEX_AI,
     ("fee", "cpu:n1", False)),
    ("N2 Custom Instance Core running in Americas", billing.COMPUTE_ENGINE, None),
    ("Commitment v1: A2 Cpu in Americas for 1 Year", billing.COMPUTE_ENGINE, None),
    ("Vertex AI: Online/Batch Prediction N1 Predefined Instance Core running in Americas", billing.VERTEX_AI, None),
])
def test_sku_descriptions_name_their_part(description: str, service: str, part: tuple[str, str, bool] | None) -> None:
    assert billing.classify(description, service) == part


def test_a_spot_sku_must_say_preemptible_and_prices_convert_per_hour() -> None:
    sku = billing_emulator.default_catalog()[billing_emulator.COMPUTE_ENGINE][-1]  # local SSD, per GiB month
    (rate, *_) = billing.sku_rates(sku, billing.COMPUTE_ENGINE)
    assert rate.part == "ssd:local" and rate.usd == pytest.approx(0.08 / 730) and rate.usage == "on_demand"
    spot = json.loads(json.dumps(billing_emulator.default_catalog()[billing_emulator.COMPUTE_ENGINE][3]))
    spot["category"]["usageType"] = "OnDemand"
    with pytest.raises(billing.BillingAnswerError, match="a Spot SKU with usageType 'OnDemand'"):
        billing.sku_rates(spot, billing.COMPUTE_ENGINE)


def test_the_emulator_answers_paging_and_bad_requests_as_google_does(emulator: Emulator) -> None:
    client = build_client("cloudbilling", emulator.url)
    skus = client.services().skus()
    first = skus.list(parent=f"services/{billing.COMPUTE_ENGINE}", pageSize=3).execute()
    assert len(first["skus"]) == 3 and first["nextPageToken"]
    rest = skus.list(parent=f"services/{billing.COMPUTE_ENGINE}", pageToken=first["nextPageToken"]).execute()
    assert rest["skus"][0]["skuId"] != first["skus"][0]["skuId"]
    for request, status in ((skus.list(parent="services/0000-0000-0000"), 404),
                            (skus.list(parent=f"services/{billing.VERTEX_AI}", pageToken="bm9wZQ"), 400),
                            (skus.list(parent=f"services/{billing.VERTEX_AI}", currencyCode="EUR"), 400)):
        with pytest.raises(HttpError) as caught:
            request.execute()
        assert caught.value.resp.status == status


def test_geo_taxonomy_tells_a_regions_own_price_from_a_wider_one(
        table_file: Path, emulator: Emulator, capsys: pytest.CaptureFixture[str]) -> None:
    """A REGIONAL SKU's price wins over the MULTI_REGIONAL one for its region, whatever their order; a GLOBAL
    SKU (no region listed) prices a part every region lacks."""
    catalog = billing_emulator.default_catalog()
    ce = catalog[billing_emulator.COMPUTE_ENGINE]
    iowa_t4 = billing_emulator.sku(billing_emulator.COMPUTE_ENGINE, "9F1C-1B21-0001", "Nvidia Tesla T4 GPU running "
                                   "in Iowa", "GPU", "OnDemand", ("us-central1",), 0.30)
    global_l4_spot = billing_emulator.sku(billing_emulator.COMPUTE_ENGINE, "9A5B-44E1-0002", "Nvidia L4 GPU attached "
                                          "to Spot Preemptible VMs running in Americas", "GPU", "Preemptible",
                                          billing_emulator.GLOBAL, 0.2)
    assert iowa_t4["geoTaxonomy"] == {"type": "REGIONAL", "regions": ["us-central1"]}
    assert global_l4_spot["geoTaxonomy"] == {"type": "GLOBAL"}
    billing_emulator.serve_skus(emulator.state, billing_emulator.COMPUTE_ENGINE, [iowa_t4, *ce, global_l4_spot])
    code, _, err = _refresh(capsys)
    assert code == EXIT_OK, err
    iowa = prices.active_table().accelerator("NVIDIA_TESLA_T4", "us-central1", 1)
    east = prices.active_table().accelerator("NVIDIA_TESLA_T4", "us-east1", 1)
    assert iowa.on_demand == pytest.approx(0.30 * 1.15) and east.on_demand == pytest.approx(0.35 * 1.15)
    rates = billing.rates([global_l4_spot], billing.COMPUTE_ENGINE)
    assert [(r.region, r.scope) for r in rates] == [("global", "GLOBAL")]
    americas_l4_spot = billing_emulator.sku(billing_emulator.COMPUTE_ENGINE, "9A5B-44E1-0003", "Nvidia L4 GPU "
                                            "attached to Spot Preemptible VMs running in Americas", "GPU",
                                            "Preemptible", ("us-east1", "us-west1"), 0.15)
    book = prices_refresh._book(billing.rates([global_l4_spot, americas_l4_spot], billing.COMPUTE_ENGINE))
    assert book[("ce", "gpu:NVIDIA_L4", "spot", "europe-west4")] == pytest.approx(0.2)  # the global price
    assert book[("ce", "gpu:NVIDIA_L4", "spot", "us-east1")] == pytest.approx(0.15)  # cheaper, but more specific
    assert len({region for *_, region in book}) == len(prices_build.training_regions())
