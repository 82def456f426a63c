"""A job on a reservation is priced as Google bills it: the reservation pays the machines, the job adds Vertex AI's
training management fee (catalog.prices.RESERVATION_FEE); `plan`, its JSON, the provider's cost line and the
guardrails count what the merge adds. A job on ANY_RESERVATION may run on demand: priced at its machines' rate."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.cli.plan.command import run_plan
from gcp_training_jobs.jobspec.catalog import prices
from gcp_training_jobs.jobspec.review.cost import estimate
from gcp_training_jobs.jobspec.review.guardrails import Guardrails, all_guardrail_problems
from gcp_training_jobs.resources.settings.stack_file import load_stack_file
from gcp_training_jobs.resources.training_job.review import cost_line, job_rule_problems
from tests.helpers import offline_review, scratch_project

ROOT = Path(__file__).resolve().parents[1]
RESERVATION = "projects/my-proj/zones/us-central1-a/reservations/h100s"


def job(workers: int = 0) -> dict[str, Any]:
    """8 H100s (and `workers` more machines like it) on reservation h100s, for an hour."""
    machine = {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8,
               "reservationAffinity": {"reservationAffinityType": "SPECIFIC_RESERVATION",
                                       "key": "compute.googleapis.com/reservation-name", "values": [RESERVATION]}}
    pool = {"machineSpec": machine, "replicaCount": 1,
            "containerSpec": {"imageUri": "us-central1-docker.pkg.dev/my-proj/trainers/llm:1.0"}}
    pools = [pool] + ([{**pool, "replicaCount": workers}] if workers else [])
    return {"jobSpec": {"workerPoolSpecs": pools, "scheduling": {"timeout": "3600s"}}}


def stack(jobs: dict[str, Any]) -> str:
    return json.dumps({"config": {"gcp:project": "my-proj", "gcp:region": "us-central1",
                                  "gcp-training-jobs:backend": "vertex",
                                  "gcp-training-jobs:buckets": {"staging": "my-staging", "jobDir": "my-job-dir"},
                                  "gcp-training-jobs:jobs": jobs}})


def _facts(tmp_path: Path, spec: dict[str, Any]) -> Any:
    path = tmp_path / "Pulumi.res.yaml"
    path.write_text(stack({"j": spec}))
    return load_stack_file(path, root=ROOT).jobs["j"].facts


def _any(spec: dict[str, Any]) -> dict[str, Any]:
    for pool in spec["jobSpec"]["workerPoolSpecs"]:
        pool["machineSpec"]["reservationAffinity"] = {"reservationAffinityType": "ANY_RESERVATION"}
    return spec


def test_a_job_on_a_specific_reservation_adds_only_the_fee(tmp_path: Path) -> None:
    found = estimate(_facts(tmp_path, job(workers=2)), "j")
    machines = found.machines_on_demand.known
    assert found.reservation == RESERVATION and machines == pytest.approx(3 * 88.49 * 1.15, abs=1e-4)
    assert found.hourly.known == pytest.approx(machines * prices.RESERVATION_FEE.share)
    assert found.on_demand == found.hourly == found.spot and found.hourly.known <= 0.2 * machines
    assert found.worst_case.known == pytest.approx(found.hourly.known * 1.0)  # 3600s timeout
    line = cost_line(_facts(tmp_path, job(workers=2)), "j")
    assert f"on reservation {RESERVATION}: its machines are paid by the reservation ($305.29/h on demand); " \
           "the job adds $45.79/h (Vertex AI's training management fee, at most 15%" in line


def test_any_reservation_is_priced_at_its_machines_rate(tmp_path: Path) -> None:
    found = estimate(_facts(tmp_path, _any(job())), "j")
    assert found.reservation is None and "ANY_RESERVATION may run on demand" in found.may_leave
    assert found.hourly.known == pytest.approx(88.49 * 1.15, abs=1e-4)


def test_the_guardrails_count_what_the_merge_adds(tmp_path: Path) -> None:
    rails = {"maxJobCostUsd": 100, "maxHourlyUsd": 100, "maxAcceleratorsPerStack": 16}
    reserved = {"j": _facts(tmp_path, job(workers=2))}  # $305/h of machines paid by the reservation, 24 GPUs
    said = [str(p) for p in all_guardrail_problems(reserved, rails)]
    assert len(said) == 1 and "maxAcceleratorsPerStack" in said[0]  # the machines still count there
    on_demand = {"j": _facts(tmp_path, _any(job(workers=2)))}
    said = " ".join(str(p) for p in all_guardrail_problems(on_demand, rails))
    assert "maxJobCostUsd" in said and "maxHourlyUsd" in said


def test_plan_json_and_text_say_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    offline_review(monkeypatch, tmp_path)
    repo = scratch_project(tmp_path)
    (repo / "stacks/Pulumi.res.yaml").write_text(stack({"h100-res": job(workers=2)}))
    monkeypatch.chdir(repo)
    outputs = []
    for as_json in (True, False):
        out = io.StringIO()
        with redirect_stdout(out):
            assert run_plan("res", None, as_json=as_json) == 0
        outputs.append(out.getvalue())
    cost = json.loads(outputs[0])["cost"]["jobs"]["h100-res"]
    machines = cost["reservation"]["machinesOnDemand"]["knownUsdPerHour"]
    assert cost["atItsRate"]["knownUsdPerHour"] <= 0.2 * machines and cost["reservation"]["name"] == RESERVATION
    assert cost["worstCaseUsd"] == pytest.approx(cost["atItsRate"]["knownUsdPerHour"], abs=0.01)
    assert "its machines are paid by the reservation" in outputs[1] and "the job adds $45.79/h" in outputs[1]


def _plan_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: dict[str, Any],
               rails: dict[str, Any] | None = None) -> tuple[int, Any, str]:
    """`plan --json` of stack `res` with `jobs` (and `rails`): its exit code, its document (None when refused) and
    what it said on stderr."""
    offline_review(monkeypatch, tmp_path)
    repo = scratch_project(tmp_path)
    text = json.loads(stack(jobs))
    if rails:
        text["config"]["gcp-training-jobs:guardrails"] = rails
    (repo / "stacks/Pulumi.res.yaml").write_text(json.dumps(text))
    monkeypatch.chdir(repo)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = run_plan("res", None, as_json=True)
    return code, json.loads(out.getvalue()) if out.getvalue() else None, err.getvalue()


#: A fallback on demand: the same machines, run when the reservation has no room (a fallback keeps the job's
#: reservationAffinity, so it is in the same region; it runs off the reservation at worst, priced so).
ON_DEMAND_FALLBACK = {"scheduling": {"strategy": "STANDARD"}}


def test_a_job_with_a_fallback_is_priced_at_its_worst_placement(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    with_fallback = {**job(), "fallbacks": [ON_DEMAND_FALLBACK]}
    code, plan, _ = _plan_json(tmp_path, monkeypatch, {"held": job(), "leaves": with_fallback})
    assert code == 0
    held, leaves = plan["cost"]["jobs"]["held"], plan["cost"]["jobs"]["leaves"]
    fallback = plan["placement"]["leaves"]["fallbacks"][0]
    # without a fallback: the fee only; with one: the fallback's on-demand price, for the job's 1 h timeout
    fee = held["reservation"]["adds"]["knownUsdPerHour"]
    assert held["worstCaseUsd"] == pytest.approx(fee, abs=0.01) and fee <= 0.2 * fallback["usdPerHour"]
    assert leaves["worstCaseUsd"] == pytest.approx(fallback["usdPerHour"], abs=0.01)
    assert leaves["reservation"]["name"] is None and "its fallbacks may run it off reservation" in \
        leaves["reservation"]["pricedOnDemand"]
    stack_hourly = plan["cost"]["stack"]["atJobRates"]["knownUsdPerHour"]
    assert stack_hourly == pytest.approx(fee + fallback["usdPerHour"], abs=0.01)


def test_the_guardrails_and_the_providers_check_count_the_fallbacks_placement(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rails = {"maxJobCostUsd": 50, "maxHourlyUsd": 50}
    code, _, said = _plan_json(tmp_path / "held", monkeypatch, {"held": job()}, rails)
    assert code == 0 and "maxJobCostUsd" not in said  # $15.26/h of fee, within both caps
    code, _, said = _plan_json(tmp_path / "leaves", monkeypatch,
                               {"held": {**job(), "fallbacks": [ON_DEMAND_FALLBACK]}}, rails)
    assert code == 1 and "maxJobCostUsd: job held's worst case is $101.76 ($101.76/h x 1 h" in said
    assert "maxHourlyUsd: the stack's estimated on-demand cost is $101.76/h, over the cap" in said
    facts = _facts(tmp_path, job())
    assert not job_rule_problems(facts, "j", Guardrails.of(rails), date(2026, 12, 1))
    over = job_rule_problems(facts, "j", Guardrails.of(rails), date(2026, 12, 1), falls_back=True)
    assert [p.path for p in over] == ["gcp-training-jobs:guardrails.maxJobCostUsd"]
    line = cost_line(facts, "j", falls_back=True)
    assert "worst case $101.76 (1 h)" in line and "its fallbacks may run it off reservation" in line
