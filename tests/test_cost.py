"""Cost estimates: what a rendered body holds (pools, replicas, accelerators, TPU slices, trials) and what it costs
from the price table only: per hour on demand and on Spot, at the rate the job runs at, and at worst (that rate
times its timeout, or 7 days). Unknown prices are named with the table's reason, never guessed."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.jobspec.catalog import prices
from gcp_training_jobs.jobspec.load import load_job, render_body
from gcp_training_jobs.jobspec.review.cost import estimate, estimate_stack
from gcp_training_jobs.jobspec.review.cost_text import (
    estimate_text,
    part_text,
    runs_as,
    source_lines,
    stack_text,
    stale_warning,
    worst_case_text,
)
from gcp_training_jobs.jobspec.review.money import Amount
from gcp_training_jobs.jobspec.translate.facts import JobFacts, facts_of_body

TABLE = prices.bundled_table()
#: Google's own figures, us-central1 (the table reproduces them: tests/test_prices.py).
N1_4 = 0.21849885
T4 = 0.4025
WEEK = 7 * 24


def od(machine: str, region: str = "us-central1") -> float:
    price = TABLE.machine(machine, region).on_demand
    assert price is not None, machine
    return price


def spot(machine: str, region: str = "us-central1") -> float:
    price = TABLE.machine(machine, region).spot
    assert price is not None, machine
    return price


def pool(machine: str, acc: str | None = None, count: int = 0, replicas: Any = "1",
         topology: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"machineType": machine}
    if acc:
        spec.update(acceleratorType=acc, acceleratorCount=count)
    if topology:
        spec["tpuTopology"] = topology
    return {"machineSpec": spec, "replicaCount": replicas}


def facts(body: dict[str, Any], region: str | None = None) -> JobFacts:
    """A body's facts as status and spend read them (translate.facts.facts_of_body), in `region`."""
    return facts_of_body(body, region=region)


def custom(*pools_: dict[str, Any], **scheduling: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"workerPoolSpecs": list(pools_)}
    if scheduling:
        spec["scheduling"] = scheduling
    return {"jobSpec": spec}


# --- A body's pools, by the same translation as a job's own -----------------------------------------------


def test_vertex_pools_skip_empty_ones_and_read_int64_text() -> None:
    body = custom(pool("n1-standard-4", "NVIDIA_H100_80GB", 2), {}, pool("n1-highmem-8", replicas=3.0))
    read = facts(body)
    assert [(read.pool_path(p), p.machine_type, p.replica_count, p.accelerators) for p in read.running] == [
        ("jobSpec.workerPoolSpecs[0]", "n1-standard-4", 1, 2), ("jobSpec.workerPoolSpecs[2]", "n1-highmem-8", 3, 0)]
    assert read.accelerators == 2 and read.strategy is None and not read.timeout.set


def test_a_tpu_slice_counts_its_chips_and_vms_from_its_topology() -> None:
    """ct6e-standard-4t 4x4 is 16 chips on 4 VMs with replicaCount 1 (catalog.TPU_SLICES); not 4 chips."""
    (found,) = facts(custom(pool("ct6e-standard-4t", replicas="1", topology="4x4"))).running
    assert (found.held, found.accelerators) == (("ct6e-standard-4t", 16, 4), 16)
    assert (found.machines, found.tpu_topology) == (4, "4x4")
    (single,) = facts(custom(pool("ct5lp-hightpu-8t", topology="2x4"))).running
    assert (single.held[0], single.accelerators, single.machines) == ("TPU_V5_LITEPOD", 8, 1)


def test_the_pools_a_job_was_judged_with_are_the_ones_its_body_reads_to() -> None:
    """One path: a trainingInput's facts as judged (load.Judged.facts) on either backend price and count like the
    facts read back from the body it renders to (what `status` and `spend` read from the API)."""
    from gcp_training_jobs.jobspec.load import judge_job

    t4 = {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 2}}
    data = {"trainingInput": {"scaleTier": "CUSTOM", "masterType": "n1-standard-8", "workerCount": 2,
                              "workerType": "n1-standard-8", "region": "us-central1", "workerConfig": t4,
                              "masterConfig": {**t4, "imageUri": "us-docker.pkg.dev/my-ml-test/trainers/trainer:1"}}}
    for backend in ("vertex", "ai-platform"):
        judged = judge_job(data, backend=backend, today=date(2026, 11, 22))
        assert judged.body is not None, judged.problems
        from_judged = estimate(judged.facts, "j", TABLE)
        from_body = estimate(facts(judged.body, "us-central1"), "j", TABLE)
        assert from_judged == from_body and judged.facts.accelerators == 6, backend


def test_trials_and_timeouts_of_each_kind_of_body() -> None:
    tuning = {"parallelTrialCount": 4, "maxTrialCount": "10",
              "trialJobSpec": {"workerPoolSpecs": [pool("n1-standard-4")], "scheduling": {"timeout": "1800s"}}}
    read = facts(tuning)
    assert (read.parallel_runs, read.trials, read.timeout.seconds, read.timeout.field) == \
        (4, 10, 1800.0, "trialJobSpec.scheduling.timeout")
    ml = {"trainingInput": {"scaleTier": "BASIC", "scheduling": {"maxRunningTime": "5400.5s"},
                            "hyperparameters": {"maxTrials": 6, "maxParallelTrials": 3}}}
    read = facts(ml)
    assert (read.parallel_runs, read.trials, read.timeout.seconds, read.timeout.field) == \
        (3, 6, 5400.5, "trainingInput.scheduling.maxRunningTime")
    assert (facts({"trainingInput": {}}).parallel_runs, facts({"trainingInput": {}}).trials) == (1, 1)


# --- Each kind of pool ----------------------------------------------------------------------------


def test_n1_machines_with_attached_gpus_are_priced_machine_plus_gpus() -> None:
    cost = estimate(facts(custom(pool("n1-standard-4", "NVIDIA_TESLA_T4", 2, "3")), "us-central1"), "t4")
    assert [(p.what, p.units) for p in cost.parts] == [("n1-standard-4", 3), ("NVIDIA_TESLA_T4", 6)]
    assert cost.on_demand.known == pytest.approx(3 * N1_4 + 6 * T4)
    assert cost.on_demand.text() == "$3.07/h" and cost.on_demand.complete and cost.spot.complete
    t4 = TABLE.accelerator("NVIDIA_TESLA_T4", "us-central1", 2)
    assert cost.spot.known == pytest.approx(3 * spot("n1-standard-4") + 6 * (t4.spot or 0))
    assert cost.bases == ("Compute Engine list 2026-07-30 + Vertex 15%", "Compute Engine list (SkyPilot catalog @ "
                          "006059e, read 2026-11-23, highest zone) + Vertex 15%")


def test_whole_machines_hold_their_gpus_so_they_are_not_added_again() -> None:
    for machine, gpu, count in (("a2-ultragpu-8g", "NVIDIA_A100_80GB", 8), ("g2-standard-8", "NVIDIA_L4", 1)):
        cost = estimate(facts(custom(pool(machine, gpu, count, "2")), "us-central1"), "m")
        assert [(p.what, p.units) for p in cost.parts] == [(machine, 2)], machine
        assert cost.on_demand.known == pytest.approx(2 * od(machine)) and cost.on_demand.complete
        assert "(machine, its accelerators included)" in part_text(cost.parts[0])
        assert cost.bases == ("Compute Engine list 2026-07-30 + Vertex 15% (inferred, rule a2-g2-g4)",)


def test_cloud_tpu_is_billed_per_core_at_the_device_or_the_pod_rate() -> None:
    device = estimate(facts(custom(pool("cloud-tpu", "TPU_V2", 8)), "us-central1"), "v2")
    assert [(p.what, p.units) for p in device.parts] == [("TPU_V2", 8)]  # no machine: the cores are the bill
    assert device.on_demand.known == pytest.approx(8 * 4.5 / 8 * 1.15)
    pod = estimate(facts(custom(pool("cloud-tpu", "TPU_V2", 32)), "us-central1"), "pod")
    assert pod.on_demand.known == pytest.approx(32 * 24.0 / 32 * 1.15)  # Pod cores cost more
    assert part_text(pod.parts[0]).startswith("32 x TPU_V2 (TPU core): $0.86/h each on demand")


def test_a_multi_host_tpu_slice_is_priced_per_host_of_the_slice() -> None:
    cost = estimate(facts(custom(pool("ct5lp-hightpu-4t", topology="4x4")), "us-central1"), "v5e")
    assert [(p.what, p.units) for p in cost.parts] == [("ct5lp-hightpu-4t", 4)]  # 16 chips on 4 hosts
    assert cost.on_demand.known == pytest.approx(4 * od("ct5lp-hightpu-4t")) == pytest.approx(16 * 1.2 * 1.15)
    assert cost.spot.known == pytest.approx(4 * spot("ct5lp-hightpu-4t"))


def test_a_tuning_job_is_its_cluster_times_its_parallel_trials() -> None:
    tuning = {"parallelTrialCount": 4, "maxTrialCount": 10,
              "trialJobSpec": {"workerPoolSpecs": [pool("n1-standard-4", "NVIDIA_TESLA_T4", 1)]}}
    cost = estimate(facts(tuning, "us-central1"), "sweep")
    assert [(p.what, p.units) for p in cost.parts] == [("n1-standard-4", 4), ("NVIDIA_TESLA_T4", 4)]
    assert cost.on_demand.known == pytest.approx(4 * (N1_4 + T4))


def test_ml_v1_bodies_legacy_types_tiers_and_cloud_tpu_workers() -> None:
    basic_tpu = estimate(facts({"trainingInput": {"scaleTier": "BASIC_TPU", "region": "us-central1"}}), "resnet")
    assert basic_tpu.region == "us-central1"
    assert [(p.what, p.units) for p in basic_tpu.parts] == [("standard as n1-standard-4", 1), ("TPU_V2", 8)]
    assert basic_tpu.on_demand.known == pytest.approx(N1_4 + 8 * 4.5 / 8 * 1.15) and basic_tpu.on_demand.complete
    assert estimate_text(basic_tpu).endswith("7 days); an ml v1 job, at Vertex AI's rates")
    k80 = estimate(facts({"trainingInput": {"scaleTier": "CUSTOM", "masterType": "complex_model_m_gpu",
                                      "region": "us-central1"}}), "k80")
    assert k80.on_demand.known == pytest.approx(od("n1-highcpu-16"))
    assert k80.on_demand.unknown == ("4 x NVIDIA_TESLA_K80 (NVIDIA_TESLA_K80 is not an accelerator the Vertex AI "
                                     "catalog lists (gcp_training_jobs/jobspec/catalog/vertex_machines.py))",)
    premium = estimate(facts({"trainingInput": {"scaleTier": "PREMIUM_1", "region": "us-central1"}}), "p")
    assert premium.on_demand.unknown == (
        "1 x machines chosen by the service (PREMIUM_1 tier: machines chosen by the service)",)


def test_a_rendered_job_of_either_backend_is_priced_alike() -> None:
    job = load_job({"trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "n1-standard-4", "region": "us-central1",
        "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 1},
                         "imageUri": "us-docker.pkg.dev/my-ml-test/trainers/trainer:1"}}})
    for backend in ("vertex", "ai-platform"):
        cost = estimate(facts(render_body(job, backend, "j"), "us-central1"), "j")
        assert cost.on_demand.known == pytest.approx(N1_4 + T4) and cost.on_demand.complete, backend


# --- Regions, unknowns, rates ---------------------------------------------------------------------


def test_each_job_is_priced_in_its_own_region() -> None:
    body = custom(pool("n1-standard-4", "NVIDIA_TESLA_T4", 1))
    iowa, netherlands = estimate(facts(body, "us-central1"), "a"), estimate(facts(body, "europe-west4"), "b")
    assert netherlands.on_demand.complete and netherlands.on_demand.known != iowa.on_demand.known
    assert netherlands.on_demand.known == pytest.approx(od("n1-standard-4", "europe-west4") + (
        TABLE.accelerator("NVIDIA_TESLA_T4", "europe-west4").on_demand or 0))


def test_unknown_parts_are_named_with_the_tables_reason_and_the_known_part_summed() -> None:
    body = custom(pool("n1-standard-4", replicas="2"), pool("a3-ultragpu-8g", "NVIDIA_H200_141GB", 8))
    cost = estimate(facts(body, "us-central1"), "mixed")
    assert cost.on_demand.known == pytest.approx(2 * N1_4)
    (missing,) = cost.on_demand.unknown
    assert missing.startswith("1 x a3-ultragpu-8g (no source prices it: Cyclenerd pricing.yml has no a3-ultragpu")
    assert cost.on_demand.text().startswith("unknown ($0.44/h known; no price for 1 x a3-ultragpu-8g (no source")
    assert "$0.44/h known" in cost.on_demand.text() and cost.on_demand.short() == "unknown (at least $0.44/h)"
    assert estimate_text(cost).count("1 x a3-ultragpu-8g (") == 1, "each missing part is said once"
    assert cost.worst_case.short(per_hour=False) == f"unknown (at least ${2 * N1_4 * WEEK:,.2f})"


def test_without_a_region_nothing_is_priced_and_the_reason_says_why() -> None:
    cost = estimate(facts(custom(pool("n1-standard-4"))), "nowhere")
    assert cost.region is None and cost.on_demand == Amount(0.0, ("1 x n1-standard-4 (the job's region is unknown)",))


def test_a_spot_job_runs_at_spot_rates_and_flex_start_at_the_on_demand_upper_bound() -> None:
    body = custom(pool("g2-standard-8", "NVIDIA_L4", 1), strategy="SPOT", timeout="7200s")
    cost = estimate(facts(body, "us-central1"), "l4")
    assert cost.rate == "spot" and cost.hourly.known == pytest.approx(spot("g2-standard-8"))
    assert estimate_text(cost) == (f"us-central1, runs SPOT, at Spot rates: ${spot('g2-standard-8'):.2f}/h (on demand "
                           f"${od('g2-standard-8'):.2f}/h; Spot ${spot('g2-standard-8'):.2f}/h); worst case "
                           f"${2 * spot('g2-standard-8'):,.2f} (${spot('g2-standard-8'):.2f}/h x 2 h; "
                           "jobSpec.scheduling.timeout 7200s)")
    flex = estimate(facts(custom(pool("g2-standard-8", "NVIDIA_L4", 1), strategy="FLEX_START"), "us-central1"), "flex")
    assert flex.rate == "on_demand" and flex.hourly.known == pytest.approx(od("g2-standard-8"))
    assert runs_as(flex) == "FLEX_START, at the on-demand rate (an upper bound)"
    assert runs_as(estimate(facts(custom(pool("g2-standard-8")), "us-central1"), "std")) == "on demand"


# --- Worst case -----------------------------------------------------------------------------------


def test_the_worst_case_is_the_rate_it_runs_at_times_its_timeout() -> None:
    body = custom(pool("n1-standard-4", "NVIDIA_TESLA_T4", 1), strategy="SPOT", timeout="5400s")
    cost = estimate(facts(body, "us-central1"), "j")
    assert cost.worst_case.known == pytest.approx(cost.spot.known * 1.5) and cost.worst_case.complete
    assert worst_case_text(cost).endswith("x 1.5 h; jobSpec.scheduling.timeout 5400s)")


def test_without_a_timeout_the_worst_case_is_seven_days() -> None:
    cost = estimate(facts(custom(pool("n1-standard-4")), "us-central1"), "j")
    assert cost.timeout.field is None and cost.timeout.hours == WEEK
    assert cost.worst_case.known == pytest.approx(N1_4 * WEEK)
    assert worst_case_text(cost) == (f"${N1_4 * WEEK:,.2f} ($0.22/h x 168 h; no timeout set: Vertex AI's default, "
                                      "7 days)")
    ml = estimate(facts({"trainingInput": {"scaleTier": "BASIC", "region": "us-central1"}}), "ml")
    assert ml.timeout.text() == "no timeout set: AI Platform Training's default, 7 days"
    assert ml.worst_case.known == pytest.approx(N1_4 * WEEK)
    capped = estimate(facts({"trainingInput": {"scaleTier": "BASIC", "region": "us-central1",
                                         "scheduling": {"maxRunningTime": "3600s"}}}), "ml")
    assert capped.worst_case.known == pytest.approx(N1_4)


def test_a_tuning_jobs_timeout_holds_for_each_of_its_trials() -> None:
    tuning = {"parallelTrialCount": 2, "maxTrialCount": 5,
              "trialJobSpec": {"workerPoolSpecs": [pool("n1-standard-4")], "scheduling": {"timeout": "3600s"}}}
    cost = estimate(facts(tuning, "us-central1"), "sweep")
    assert cost.hourly.known == pytest.approx(2 * N1_4)  # two trials at once
    assert cost.worst_case.known == pytest.approx(5 * N1_4 * 1)  # five trials, each at most an hour
    assert worst_case_text(cost) == (f"${5 * N1_4:,.2f} (5 trials x $0.22/h x 1 h; trialJobSpec.scheduling.timeout "
                                      "3600s, per trial)")


# --- The stack, the table -------------------------------------------------------------------------


def test_the_stack_sums_each_job_at_its_rate_and_names_the_job_of_each_unknown_part() -> None:
    a = estimate(facts(custom(pool("n1-standard-4"), timeout="3600s"), "us-central1"), "a")
    b = estimate(facts(custom(pool("n1-standard-4"), strategy="SPOT", timeout="7200s"), "us-central1"), "b")
    c = estimate(facts(custom(pool("tpu7x-standard-4t", topology="2x2x1")), "us-central1"), "c")
    stack = estimate_stack([a, b, c])
    assert stack.on_demand.known == pytest.approx(2 * N1_4)
    assert stack.hourly.known == pytest.approx(N1_4 + spot("n1-standard-4"))
    assert stack.worst_case.known == pytest.approx(N1_4 + 2 * spot("n1-standard-4"))
    assert [u.split(" (")[0] for u in stack.on_demand.unknown] == ["c: 1 x tpu7x-standard-4t"]
    assert stack_text(stack).startswith("unknown (at least $0.31/h) at the jobs' rates (on demand unknown (at least "
                                   "$0.44/h); Spot unknown (at least $0.19/h)); worst case unknown (at least $0.41); "
                                   "no price for c: 1 x tpu7x-standard-4t (no source prices it: neither snapshot")
    assert estimate_stack([]).on_demand == Amount() and estimate_stack([]).table.path == str(prices.BUNDLED)


def test_source_lines_name_the_table_its_dates_and_each_source() -> None:
    lines = source_lines(TABLE)
    assert lines[0] == "bundled snapshot of 2026-11-23, oldest prices 2026-07-30"
    assert any("Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml @ fd66b26ff84f, generated 2026-07-30"
               in line for line in lines[1:])


def test_a_table_older_than_180_days_warns_with_its_date_and_the_refresh_command() -> None:
    assert stale_warning(TABLE, date(2027, 1, 26)) is None  # 180 days after the oldest prices, 2026-07-30
    assert stale_warning(TABLE, date(2027, 1, 27)) == (
        "the price table's oldest prices are of 2026-07-30, 181 days before 2027-01-27 (more than 180): estimates "
        "may be out of date; refresh the table with `gcp-training-jobs prices refresh`")


def test_estimates_read_a_refreshed_table_when_one_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    refreshed = tmp_path / "prices.json"
    data = json.loads(prices.BUNDLED.read_text())
    data.update(kind="refresh", generated="2026-12-01")
    data["machines"]["n1-standard-4"]["regions"]["us-central1"].update(od=0.5, spot=0.2)
    refreshed.write_text(json.dumps(data))
    body = custom(pool("n1-standard-4", replicas="2"))
    assert estimate(facts(body, "us-central1"), "j").on_demand.known == pytest.approx(2 * N1_4)  # conftest: bundled
    monkeypatch.setenv(prices.PRICES_FILE_ENV, str(refreshed))
    cost = estimate(facts(body, "us-central1"), "j")
    assert (cost.on_demand.known, cost.spot.known) == (pytest.approx(1.0), pytest.approx(0.4))
    assert source_lines(cost.table)[0] == f"refresh table {refreshed} of 2026-12-01, oldest prices 2026-07-30"


# --- What the repository runs ---------------------------------------------------------------------


ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["dev", "dev-ai-platform", "local", "local-ai-platform", "prod", "staging"])
def test_every_job_of_the_repository_stacks_is_priced_completely_in_its_region(name: str) -> None:
    from gcp_training_jobs.resources.settings import load_stack_file
    from gcp_training_jobs.resources.settings.guardrails import stack_facts

    settings = load_stack_file(ROOT / "stacks" / f"Pulumi.{name}.yaml")
    jobs = stack_facts(settings)
    assert jobs
    for job_name, job in jobs.items():
        cost = estimate(job, job_name)
        assert cost.region == job.region == "us-central1", job_name
        assert cost.on_demand.complete and cost.spot.complete and cost.worst_case.complete, estimate_text(cost)
        assert cost.on_demand.known > 0 and cost.spot.known > 0 and cost.spot.known < cost.on_demand.known
        assert all(part.basis for part in cost.parts) and cost.bases, job_name
        if settings.backend == "vertex":  # a CustomJob, or a HyperparameterTuningJob's trials
            assert job.spec_key in ("jobSpec", "trialJobSpec"), "priced on the body Vertex AI is sent"


def test_the_example_jobs_of_the_tests_are_priced_completely_but_retired_gpus() -> None:
    """The Vertex job the provider tests create, and the guides' example jobs (ml v1 bodies at Vertex AI's rates);
    the one with legacy K80 machines is unknown for its K80s only, which Vertex AI does not offer."""
    from gcp_training_jobs.jobspec.io.documents import read_yaml
    from tests.helpers import l4_spot

    bodies = {"l4": {"jobSpec": l4_spot()["jobSpec"]}}
    for example in ("basic_tpu_resnet", "gpu_compute_engine", "tpu_compute_engine_master", "tpu_legacy_master",
                 "gpu_legacy"):
        ti = read_yaml(ROOT / "tests" / "fixtures" / "guide_examples" / f"{example}.yaml")["trainingInput"]
        bodies[example] = {"trainingInput": {**ti, "region": "us-central1"}}
    for name, body in bodies.items():
        cost = estimate(facts(body, "us-central1"), name)
        if name == "gpu_legacy":
            assert [u.split(" (")[0] for u in cost.on_demand.unknown] == ["40 x NVIDIA_TESLA_K80"]
            continue
        assert cost.on_demand.complete and cost.spot.complete and cost.bases, estimate_text(cost)


def test_a_job_whose_body_does_not_read_is_priced_unknown_with_the_reason() -> None:
    """A job as the API holds it that its vocabulary's model does not read (a field it does not know) is never
    priced as $0: its machines are one unknown part, naming the field."""
    body = custom({**pool("n1-standard-4", "NVIDIA_TESLA_T4", 1), "futureField": True})
    cost = estimate(facts(body, "us-central1"), "j", TABLE)
    assert cost.on_demand.known == 0 and len(cost.on_demand.unknown) == 1
    assert cost.on_demand.unknown[0].startswith("1 x the job's machines (its pools do not read: ")
    assert "workerPoolSpecs[0].futureField" in cost.on_demand.unknown[0]
