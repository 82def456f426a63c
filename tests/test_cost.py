"""Cost estimates: what a rendered body holds (pools, replicas, accelerators, trials) and its price per hour,
from the price table only; unknown prices are named, never guessed."""

from __future__ import annotations

from typing import Any

import pytest

from components.jobspec.catalog import prices
from components.jobspec.load import load_job
from components.jobspec.render.bodies import render_body
from components.jobspec.review.body_pools import accelerators, pools, strategy
from components.jobspec.review.cost import Amount, estimate, estimate_stack, source_lines

N1_4 = 0.21849885  # the table's n1-standard-4, us-central1
H100 = 9.5  # an accelerator price for the arithmetic tests only (the table has none: see prices.py)


def pool(machine: str, acc: str | None = None, count: int = 0, replicas: Any = "1") -> dict[str, Any]:
    spec: dict[str, Any] = {"machineType": machine}
    if acc:
        spec.update(acceleratorType=acc, acceleratorCount=count)
    return {"machineSpec": spec, "replicaCount": replicas}


def test_every_price_names_its_page_and_the_date_read() -> None:
    for table in (prices.MACHINE_PRICES, prices.ACCELERATOR_PRICES):
        for region, rows in table.items():
            for name, price in rows.items():
                assert price.source.url.startswith("https://") and price.source.read, (region, name)
    assert source_lines() == [f"{prices.SOURCE_PRICING.title}, {prices.SOURCE_PRICING.url}, read 2026-11-22"]


def test_vertex_pools_skip_empty_ones_and_read_int64_text() -> None:
    body = {"jobSpec": {"workerPoolSpecs": [pool("n1-standard-4", "NVIDIA_H100_80GB", 2), {},
                                            pool("n1-highmem-8", replicas=3.0)]}}
    found = pools(body)
    assert [(p.path, p.machine_type, p.replicas, p.accelerators) for p in found] == [
        ("jobSpec.workerPoolSpecs[0]", "n1-standard-4", 1, 2), ("jobSpec.workerPoolSpecs[2]", "n1-highmem-8", 3, 0)]
    assert accelerators(body) == 2 and strategy(body) is None


def test_tpu_vm_hosts_count_their_chips() -> None:
    body = {"jobSpec": {"workerPoolSpecs": [{"machineSpec": {"machineType": "ct6e-standard-4t",
                                                             "tpuTopology": "4x4"}, "replicaCount": "4"}]}}
    (found,) = pools(body)
    assert (found.accelerator_type, found.accelerator_count, found.accelerators) == ("ct6e-standard-4t", 4, 16)


def test_known_prices_times_machines_and_accelerators(monkeypatch: pytest.MonkeyPatch) -> None:
    price = prices.HourlyPrice(H100, None, prices.SOURCE_PRICING)
    monkeypatch.setattr(prices, "ACCELERATOR_PRICES", {"us-central1": {"NVIDIA_H100_80GB": price}})
    body = {"jobSpec": {"workerPoolSpecs": [pool("n1-standard-4", "NVIDIA_H100_80GB", 2, "3")]}}
    cost = estimate(body, "h100", "us-central1")
    assert cost.on_demand == Amount(3 * N1_4 + 6 * H100)
    assert cost.on_demand.text() == f"${3 * N1_4 + 6 * H100:,.2f}/h"
    assert cost.text() == ("us-central1: on demand $57.66/h; Spot unknown (no Spot price for any part)")
    assert cost.sources == (prices.SOURCE_PRICING,)


def test_an_accelerator_without_a_sourced_price_is_unknown() -> None:
    body = {"jobSpec": {"workerPoolSpecs": [pool("n1-standard-4", "NVIDIA_H100_80GB", 2)]}}
    assert estimate(body, "h100", "us-central1").on_demand == Amount(N1_4, ("2 x NVIDIA_H100_80GB",))


def test_unknown_parts_are_named_with_the_known_part_summed() -> None:
    body = {"jobSpec": {"workerPoolSpecs": [pool("n1-standard-4", "NVIDIA_TESLA_T4", 1, "2"),
                                            pool("n1-highmem-8", replicas="3")],
                        "scheduling": {"strategy": "SPOT"}}}
    cost = estimate(body, "mixed", "us-central1")
    assert cost.on_demand.known == 2 * N1_4
    assert cost.on_demand.unknown == ("3 x n1-highmem-8", "2 x NVIDIA_TESLA_T4")
    assert cost.text() == ("us-central1: on demand unknown ($0.44/h known; no price for 3 x n1-highmem-8; "
                           "2 x NVIDIA_TESLA_T4); Spot unknown (no Spot price for any part); runs as SPOT")


def test_a_region_without_prices_is_unknown_not_us_central1s() -> None:
    body = {"jobSpec": {"workerPoolSpecs": [pool("n1-standard-4")]}}
    assert estimate(body, "eu", "europe-west4").on_demand == Amount(0.0, ("1 x n1-standard-4",))
    assert estimate(body, "nowhere").region is None


def test_parallel_trials_multiply_the_cluster() -> None:
    tuning = {"parallelTrialCount": 4, "trialJobSpec": {"workerPoolSpecs": [pool("n1-standard-4")]}}
    assert estimate(tuning, "sweep", "us-central1").on_demand == Amount(4 * N1_4)
    assert accelerators({**tuning, "trialJobSpec": {"workerPoolSpecs": [pool("g2-standard-8", "NVIDIA_L4", 1)]}}) == 4


def test_ml_v1_bodies_tiers_and_tpu_workers() -> None:
    basic_tpu = {"trainingInput": {"scaleTier": "BASIC_TPU", "region": "us-central1"}}
    cost = estimate(basic_tpu, "resnet")
    assert cost.region == "us-central1"
    assert cost.on_demand.unknown == ("1 x standard", "8 x TPU_V2")  # the cloud_tpu host is billed as its TPU
    premium = {"trainingInput": {"scaleTier": "PREMIUM_1", "region": "us-central1"}}
    assert estimate(premium, "p").on_demand.unknown == ("1 x machines chosen by the service",)


def test_a_rendered_job_of_either_backend() -> None:
    job = load_job({"trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "n1-standard-4", "region": "us-central1",
        "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 1},
                         "imageUri": "us-docker.pkg.dev/my-ml-test/trainers/trainer:1"}}})
    for backend in ("vertex", "ai-platform"):
        cost = estimate(render_body(job, backend, "j"), "j", "us-central1")
        assert cost.on_demand.known == N1_4, backend
        assert cost.on_demand.unknown == ("1 x NVIDIA_TESLA_T4",), backend


def test_the_stack_sum_says_which_job_each_unknown_part_belongs_to() -> None:
    a = estimate({"jobSpec": {"workerPoolSpecs": [pool("n1-standard-4")]}}, "a", "us-central1")
    b = estimate({"jobSpec": {"workerPoolSpecs": [pool("n1-standard-8")]}}, "b", "us-central1")
    stack = estimate_stack([a, b])
    assert stack.on_demand == Amount(N1_4, ("b: 1 x n1-standard-8",))
    assert stack.text() == ("on demand unknown ($0.22/h known; no price for b: 1 x n1-standard-8); Spot unknown "
                            "(no Spot price for any part)")
    assert estimate_stack([]).on_demand == Amount() and estimate_stack([]).sources == (prices.SOURCE_PRICING,)
