"""The real engine against the emulator with `jobs.NAME.placement: cheapest`: the stack's placement candidates are the
job's placements, cheapest first, taken as fallbacks are (no quota free at create, quota refused: the next), and a
later `up` does not move a running job; a placement whose quota, read at create, cannot hold the job is never sent.
Needs the `pulumi` CLI, as tests/test_e2e.py does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_support import (  # noqa: F401 (the fixture)
    Emulator,
    Project,
    offline_config,
    process_emulator,
    require_pulumi,
    wait_until,
)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()
SPOT_L4 = "custom_model_training_preemptible_nvidia_l4_gpus"
BOUNDS = {"regions": ["us-central1", "us-east4", "europe-west4"], "strategies": ["STANDARD", "SPOT"]}


def l4_spec() -> dict[str, Any]:
    return {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/cap-project/trainers/t:1"}}],
        "scheduling": {"timeout": "7200s"}}


@pytest.fixture
def fresh(emulator: Emulator) -> Emulator:
    emulator.control("reset", {})
    emulator.control("phase", {"seconds": 1000000})
    return emulator


def made(emulator: Emulator) -> list[tuple[str, str, str]]:
    """(region, strategy, state) of each job the emulator holds."""
    return sorted((e["name"].split("/")[3], str(e["job"]["jobSpec"].get("scheduling", {}).get("strategy")),
                   e["job"]["state"]) for e in emulator.control("jobs"))


def test_placement_cheapest_makes_the_job_where_spot_quota_is_and_a_later_up_keeps_it(tmp_path: Path,
                                                                                     fresh: Emulator) -> None:
    for region, limit in (("us-central1", 0), ("europe-west4", 0), ("us-east4", 8)):
        fresh.control("quotas", {"metric": SPOT_L4, "region": region, "limit": limit})
    config = offline_config("cap", {"train": {"jobSpec": l4_spec(), "placement": "cheapest"}}, placement=BOUNDS)
    project = Project.copy(tmp_path, PULUMI, fresh, config=config)
    review = project.components("plan", "--stack", "local", "--online")
    said = review.stdout + review.stderr
    assert review.returncode == 0, said
    assert "train: placement cheapest, cheapest first: us-east4 SPOT" in said, said
    project.up()
    assert made(fresh) == [("us-east4", "SPOT", "JOB_STATE_QUEUED")], made(fresh)
    fresh.control("quotas", {"metric": SPOT_L4, "region": "us-east4", "limit": 0})
    project.pulumi("preview", "--expect-no-changes")  # running: a later `up` does not move it
    project.up()
    assert len(fresh.calls("customJobs.create")) == 1


def test_a_candidate_refused_for_quota_at_create_gives_way_to_the_next(tmp_path: Path, fresh: Emulator) -> None:
    """The cheapest candidate (us-east4 SPOT) has no Spot quota: `up` takes the next one, europe-west4 SPOT, one job,
    labelled with its placement."""
    for region, limit in (("us-central1", 0), ("us-east4", 0), ("europe-west4", 8)):
        fresh.control("quotas", {"metric": SPOT_L4, "region": region, "limit": limit})
    config = offline_config("cap", {"train": {"jobSpec": l4_spec(), "placement": "cheapest"}}, placement=BOUNDS)
    project = Project.copy(tmp_path, PULUMI, fresh, config=config)
    preview = project.pulumi("preview")
    assert "will create it at" in preview.stdout + preview.stderr, preview.stdout + preview.stderr
    project.up()
    assert made(fresh) == [("europe-west4", "SPOT", "JOB_STATE_QUEUED")], made(fresh)
    (job,) = fresh.control("jobs")
    assert job["job"]["labels"]["pulumi-placement"] == "1"
    assert created_in(fresh) == ["europe-west4"]  # us-east4 skipped at create, never sent


def created_in(emulator: Emulator) -> list[str]:
    """The region of each create the emulator was sent, in order."""
    return [call["path"].split("/")[5] for call in emulator.calls("customJobs.create")]


def test_a_placement_without_quota_at_create_is_skipped_and_never_sent(tmp_path: Path, fresh: Emulator) -> None:
    """A Spot job as written in us-central1 (no Spot L4 quota there) with a fallback in us-east4 (8): `up` makes one
    job, in us-east4, and sends no create to us-central1 (Google's 429 there): the stack's plan, read once per run,
    gives it its fallback, which its create starts at (the read at create skipping a placement whose quota filled
    since is tests/test_fallbacks.py's)."""
    for region, limit in (("us-central1", 0), ("us-east4", 8)):
        fresh.control("quotas", {"metric": SPOT_L4, "region": region, "limit": limit})
    spot = {**l4_spec(), "scheduling": {"timeout": "7200s", "strategy": "SPOT"}}
    config = offline_config("cap", {"train": {"jobSpec": spot, "fallbacks": [{"region": "us-east4"}]}})
    project = Project.copy(tmp_path, PULUMI, fresh, config=config)
    up = project.up()
    assert made(fresh) == [("us-east4", "SPOT", "JOB_STATE_QUEUED")], made(fresh)
    assert created_in(fresh) == ["us-east4"]
    said = up.stdout + up.stderr
    assert "job train: the stack's plan gives it placement 1 (us-east4" in said, said


def test_a_cheapest_job_made_outside_its_written_region_is_found_by_status_logs_and_spend(
        tmp_path: Path, fresh: Emulator) -> None:
    """Written in us-central1 (the stack's region), made at its candidate europe-west4 SPOT (no Spot quota in the two
    cheaper regions): `status`, `logs` and `spend` look in every region its placements allow (settings.placements),
    so they find it there, and the job's `placement` output says where the deploy made it."""
    for region, limit in (("us-central1", 0), ("us-east4", 0), ("europe-west4", 8)):
        fresh.control("quotas", {"metric": SPOT_L4, "region": region, "limit": limit})
    config = offline_config("cap", {"train": {"jobSpec": l4_spec(), "placement": "cheapest"}}, placement=BOUNDS)
    project = Project.copy(tmp_path, PULUMI, fresh, config=config)
    fresh.control("phase", {"seconds": 0.05})  # it runs, and ends: `spend` counts the time it ran
    try:
        project.up()
        wait_until(lambda: not fresh.live(), 60, "the job finished")
    finally:
        fresh.control("phase", {"seconds": 1000000})
    assert made(fresh) == [("europe-west4", "SPOT", "JOB_STATE_SUCCEEDED")], made(fresh)
    (resource,) = project.resources()
    placement = resource["outputs"]["placement"]
    assert (placement["region"], placement["strategy"], placement["reservation"]) == ("europe-west4", "SPOT", None)

    status = project.components("status", "--stack", "local", "--json")
    assert status.returncode == 0, status.stdout + status.stderr
    document = json.loads(status.stdout)
    (job,) = document["jobs"]
    assert job["name"] == "train" and job["region"] == "europe-west4", document
    assert "train" not in document.get("notFound", []), document

    logs = project.components("logs", "--stack", "local", "train")
    assert logs.returncode == 0, logs.stdout + logs.stderr

    spend = project.components("spend", "--stack", "local", "--json")
    assert spend.returncode == 0, spend.stderr
    (spent,) = json.loads(spend.stdout)["jobs"]  # (spend lists a job that ran within the window only)
    assert (spent["name"], spent["region"], spent["rate"]) == ("train", "europe-west4", "spot"), spent
