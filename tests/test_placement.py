"""The cheapest placement within a stack's bounds (`gcp-training-jobs:placement`): candidates judged, priced,
guardrailed, ranked, suggested by `plan` (text and JSON) offline and, held to the quota, by `plan --online` against the
emulator; `jobs.NAME.placement: cheapest` refused beside fallbacks and without bounds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.jobspec.catalog import prices
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.review.cost import estimate
from gcp_training_jobs.jobspec.review.placement import rank
from gcp_training_jobs.resources.settings.judge import judge
from tests.helpers import ROOT, control

SPOT_L4 = "custom_model_training_preemptible_nvidia_l4_gpus"
BOUNDS = {"regions": ["us-central1", "us-east4", "europe-west4"], "strategies": ["STANDARD", "SPOT"]}


def l4_spec(strategy: str | None = None) -> dict[str, Any]:
    scheduling: dict[str, Any] = {"timeout": "7200s", **({"strategy": strategy} if strategy else {})}
    return {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/t:1"}}], "scheduling": scheduling}


def config(jobs: dict[str, Any], placement: dict[str, Any] | None = BOUNDS, **extra: Any) -> dict[str, Any]:
    found = {"gcp:project": "my-proj", "gcp:region": "us-central1", "gcp-training-jobs:backend": "vertex",
             "gcp-training-jobs:enableApis": False,
             "gcp-training-jobs:buckets": {"staging": "my-staging", "jobDir": "my-job-dir"},
             "gcp-training-jobs:jobs": jobs, **extra}
    if placement is not None:
        found["gcp-training-jobs:placement"] = placement
    return found


def plan(tmp_path: Path, cfg: dict[str, Any], *extra: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "Pulumi.q.yaml").write_text(yaml.safe_dump({"config": cfg}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "GCP_TRAINING_JOBS_API"))}
    env["GCP_TRAINING_JOBS_BUILD_DIR"] = str(tmp_path / "build")
    return subprocess.run([sys.executable, "-m", "components", "plan", "--stack", "q", "--stacks-dir",
                           str(tmp_path), *extra], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_an_l4_job_on_demand_gets_a_spot_suggestion_no_dearer_than_its_own_spot_price(tmp_path: Path) -> None:
    settings = judge(config({"train": {"jobSpec": l4_spec()}}), tmp_path)
    ranked = rank(settings.candidates["train"])
    own = estimate(settings.jobs["train"].facts, "train", prices.active_table())
    best = ranked[0]
    assert best.strategy == "SPOT" and best.region in BOUNDS["regions"]
    assert best.hourly is not None and best.hourly <= own.spot.known
    assert [c.hourly for c in ranked] == sorted(c.hourly for c in ranked)  # cheapest first
    assert {(c.region, c.strategy) for c in ranked} == {(r, s) for r in BOUNDS["regions"] for s in BOUNDS["strategies"]}

    shown = plan(tmp_path, config({"train": {"jobSpec": l4_spec()}}))
    assert shown.returncode == 0, shown.stdout + shown.stderr
    saving = own.hourly.known - best.hourly
    line = (f"train: cheaper within the stack's placement: {best.region} SPOT ${best.hourly:,.2f}/h "
            f"(-${saving:,.2f}/h, -{round(100 * saving / own.hourly.known)}%); quota not read (price table of "
            f"{prices.active_table().date.isoformat()}")
    assert line in shown.stdout, shown.stdout
    assert f"the stack would save ${saving:,.2f}/h" in shown.stdout

    data = json.loads(plan(tmp_path, config({"train": {"jobSpec": l4_spec()}}), "--json").stdout)
    cheapest = data["placement"]["train"]["cheapest"]
    assert {k: cheapest[k] for k in ("region", "strategy", "quotaFree")} == \
        {"region": best.region, "strategy": "SPOT", "quotaFree": None}
    assert cheapest["usdPerHour"] == best.hourly and cheapest["savingUsdPerHour"] == pytest.approx(saving, abs=1e-5)
    assert [c["usdPerHour"] for c in data["placement"]["train"]["candidates"]] == [c.hourly for c in ranked]


def test_bounds_of_its_own_region_and_standard_alone_suggest_nothing(tmp_path: Path) -> None:
    cfg = config({"train": {"jobSpec": l4_spec()}}, {"regions": ["us-central1"], "strategies": ["STANDARD"]})
    shown = plan(tmp_path, cfg)
    assert shown.returncode == 0 and "cheaper within the stack's placement:" not in shown.stdout
    assert "train: nothing cheaper within the stack's placement" in shown.stdout
    data = json.loads(plan(tmp_path, cfg, "--json").stdout)
    assert data["placement"]["train"]["cheapest"] is None
    nothing = json.loads(plan(tmp_path, config({"train": {"jobSpec": l4_spec()}}, None), "--json").stdout)
    assert "cheapest" not in nothing["placement"]["train"] and "placementBounds" not in nothing  # today's behaviour


def test_candidates_are_held_to_the_guardrails_and_the_catalog(tmp_path: Path) -> None:
    spot_only = judge(config({"train": {"jobSpec": l4_spec("SPOT")}},
                             **{"gcp-training-jobs:guardrails": {"spotOnly": True}}), tmp_path)
    ranked = rank(spot_only.candidates["train"])
    assert ranked and {c.strategy for c in ranked} == {"SPOT"}  # STANDARD refused by spotOnly
    refused = [c for c in spot_only.candidates["train"] if c.strategy == "STANDARD"]
    assert refused and all("spotOnly" in c.excluded[0] for c in refused)
    a100 = {"workerPoolSpecs": [{"machineSpec": {"machineType": "a2-highgpu-1g", "acceleratorType": "NVIDIA_TESLA_A100",
                                                 "acceleratorCount": 1}, "replicaCount": 1,
                                 "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/t:1"}}]}
    wide = judge(config({"a": {"jobSpec": a100}}, {"regions": ["us-central1", "us-east4", "southamerica-east1"],
                                                   "strategies": ["STANDARD"]}), tmp_path)
    regions = {c.region for c in wide.candidates["a"]}
    assert "southamerica-east1" not in regions  # the catalog does not offer the A100 there for training


def test_placement_cheapest_is_one_or_the_other_with_fallbacks_and_needs_bounds(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as both:
        judge(config({"a": {"jobSpec": l4_spec(), "placement": "cheapest", "fallbacks": [{"region": "us-east4"}]}}),
              tmp_path)
    assert "gcp-training-jobs:jobs.a.placement: cheapest beside fallbacks; allowed: one or the other" \
        in str(both.value)
    with pytest.raises(SpecError) as unbounded:
        judge(config({"a": {"jobSpec": l4_spec(), "placement": "cheapest"}}, None), tmp_path)
    assert "cheapest without gcp-training-jobs:placement" in str(unbounded.value)
    with pytest.raises(SpecError) as bad:
        judge(config({"a": {"jobSpec": l4_spec()}}, {"regions": ["mars-east1"], "strategies": ["CHEAP"]}), tmp_path)
    assert "'mars-east1' is not a Vertex AI training region" in str(bad.value)
    assert "'CHEAP' is not a scheduling strategy; allowed: STANDARD, SPOT, FLEX_START" in str(bad.value)


@pytest.mark.slow
def test_plan_online_suggests_the_region_with_spot_quota(tmp_path: Path, emulator: Emulator) -> None:
    for region, limit in (("us-central1", 0), ("europe-west4", 0), ("us-east4", 8)):
        control(emulator, "quotas", {"metric": SPOT_L4, "region": region, "limit": limit})
    cfg = config({"train": {"jobSpec": l4_spec()}}, **{"gcp-training-jobs:apiEndpoint": emulator.url})
    online = plan(tmp_path, cfg, "--online")
    assert online.returncode == 0, online.stdout + online.stderr
    assert "train: cheaper within the stack's placement: us-east4 SPOT" in online.stdout, online.stdout
    assert "; quota free 8 (price table of" in online.stdout
    data = json.loads(plan(tmp_path, cfg, "--online", "--json").stdout)
    cheapest = data["placement"]["train"]["cheapest"]
    assert (cheapest["region"], cheapest["strategy"], cheapest["quotaFree"]) == ("us-east4", "SPOT", 8)
    left_out = {(c["region"], c["strategy"]) for c in data["placement"]["train"]["excluded"]}
    assert {("us-central1", "SPOT"), ("europe-west4", "SPOT")} <= left_out


def test_the_diff_and_the_pull_request_comment_say_what_the_stack_would_save(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from gcp_training_jobs.cli.diff.command import diff
    from gcp_training_jobs.cli.diff.text import render_markdown, render_text
    from tests.helpers import commit_all, offline_review, scratch_project

    repo = scratch_project(tmp_path)
    offline_review(monkeypatch, tmp_path)
    stack = repo / "stacks/Pulumi.pr.yaml"
    stack.write_text(yaml.safe_dump({"config": config({"train": {"jobSpec": l4_spec()}}, None)}))
    base = commit_all(repo, "base")
    head = {**l4_spec(), "scheduling": {"timeout": "3600s"}}
    stack.write_text(yaml.safe_dump({"config": config({"train": {"jobSpec": head}})}))  # bounds added, job changed
    monkeypatch.chdir(repo)
    document = diff(base, None, ["pr"])
    assert isinstance(document, dict), document
    saving = document["stacks"]["pr"]["cheaper"]["savingUsdPerHour"]
    assert saving > 0 and document["total"]["placementSavingUsdPerHour"] == saving
    assert "train: cheaper within the stack's placement: us-east4 SPOT" in render_text(document)
    comment = render_markdown(document)
    assert f"the changed stacks would save ${saving:,.2f}/h" in comment, comment
    assert "- train: cheaper within the stack's placement: us-east4 SPOT" in comment


def test_an_empty_placement_is_no_placement_as_pulumi_hands_the_default(tmp_path: Path) -> None:
    for empty in ({}, "{}", ""):
        settings = judge(config({"train": {"jobSpec": l4_spec()}}, empty), tmp_path)  # type: ignore[arg-type]
        assert settings.placement is None and settings.candidates == {}
    text = judge(config({"train": {"jobSpec": l4_spec()}}, json.dumps(BOUNDS)), tmp_path)  # type: ignore[arg-type]
    assert text.placement is not None and text.placement.regions == tuple(BOUNDS["regions"])


def test_a_cheapest_job_is_priced_where_it_may_run_by_the_plan_the_guardrails_the_budget_and_the_provider(
        tmp_path: Path) -> None:
    """Written on demand in us-central1 ($0.98/h, $2.94 in its 3 h: over maxJobCostUsd 2), a `placement: cheapest` job
    runs at its cheapest Spot candidate: its rate is that candidate's, its worst case its dearest candidate's (the
    on-demand ones are over the cap, so not candidates), in the plan, the guardrails, the budget and the provider's
    cost line alike; the written figure is nowhere."""
    from gcp_training_jobs.resources.settings.placements import placed
    from gcp_training_jobs.resources.training_job.review import cost_line

    spec = {**l4_spec(), "scheduling": {"timeout": "10800s"}}
    cfg = config({"train": {"jobSpec": spec, "placement": "cheapest"}},
                 **{"gcp-training-jobs:guardrails": {"maxJobCostUsd": 2},
                    "gcp-training-jobs:budget": {"monthlyUsd": 100, "billingAccount": "012345-6789AB-CDEF01"}})
    settings = judge(cfg, tmp_path)
    ranked = rank(settings.candidates["train"])
    assert ranked and {c.strategy for c in ranked} == {"SPOT"}
    dearest = max(c.worst or 0.0 for c in ranked)
    written = estimate(settings.jobs["train"].facts, "train", prices.active_table())
    assert written.worst_case.known > 2 and dearest < 2 and dearest > ranked[0].worst  # type: ignore[operator]

    done = plan(tmp_path, cfg, "--json")
    assert done.returncode == 0, done.stdout + done.stderr  # the guardrails hold where it runs
    document = json.loads(done.stdout)
    cost = document["cost"]["jobs"]["train"]
    assert cost["atItsRate"]["knownUsdPerHour"] == pytest.approx(ranked[0].hourly, abs=1e-6)
    assert cost["worstCaseUsd"] == pytest.approx(dearest, abs=0.01)
    assert document["budget"]["worstCaseUsd"] == cost["worstCaseUsd"]
    assert (cost["candidate"]["strategy"], cost["candidate"]["written"]["strategy"]) == ("SPOT", "STANDARD")
    assert "as written it runs on demand, this candidate on Spot" in cost["candidate"]["text"]
    assert document["placementBounds"]["savingUsdPerHour"] == 0  # it takes the cheapest already

    text = plan(tmp_path, cfg).stdout
    assert f"worst case ${dearest:,.2f} at its dearest candidate" in text, text
    assert "fallbacks[" not in text and "as written (" not in text
    line = cost_line(settings.jobs["train"].facts, "train", placed=placed(settings)["train"])
    assert f"worst case ${dearest:,.2f} at its dearest candidate" in line and "(SPOT, at Spot rates)" in line, line
