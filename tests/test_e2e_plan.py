"""The real engine and the stack's plan (docs/quotas.md): what `plan --online` and `pulumi preview` pass, `pulumi up`
makes, job by job, under the engine's parallel creates; the state grows with the stack, not its square; a job of the
stack that ended asks no quota of `plan --online`.

Needs the `pulumi` CLI, as tests/test_e2e.py does.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_support import (  # noqa: F401 (the fixture)
    Emulator,
    Project,
    kill_session,
    offline_config,
    process_emulator,
    require_pulumi,
    wait_until,
)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()
SPOT_L4 = "custom_model_training_preemptible_nvidia_l4_gpus"


def spot_l4() -> dict[str, Any]:
    return {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/plan-project/trainers/t:1"}}],
        "scheduling": {"timeout": "7200s", "strategy": "SPOT"}}


#: Four Spot L4 jobs with one placement, then two with a fallback to us-east4 (the stack's order is by name).
RACE = {**{f"one-{i}": {"jobSpec": spot_l4()} for i in range(4)},
        **{f"sweep-{i}": {"jobSpec": spot_l4(), "fallbacks": [{"region": "us-east4"}]} for i in range(2)}}


@pytest.fixture
def fresh(emulator: Emulator) -> Emulator:
    emulator.control("reset", {})
    emulator.control("phase", {"seconds": 1000000})
    return emulator


def quotas(emulator: Emulator) -> None:
    """Spot L4: 4 in us-central1, 2 in us-east4."""
    emulator.control("quotas", {"metric": SPOT_L4, "region": "us-central1", "limit": 4})
    emulator.control("quotas", {"metric": SPOT_L4, "region": "us-east4", "limit": 2})


def regions(project: Project) -> dict[str, str]:
    """Each job's region, as its state says it was made."""
    return {r["urn"].rsplit("::", 1)[1]: r["outputs"]["placement"]["region"] for r in project.resources()}


def test_what_plan_online_and_preview_pass_up_makes_under_parallel_creates_five_times_of_five(
        tmp_path: Path, fresh: Emulator) -> None:
    """The race: a job with a fallback never takes the room the plan gave a job without one. Five fresh deploys, the
    first two with a preview in the same `up`, the others `--skip-preview`: each passes, each job where the plan put
    it."""
    expected = {**{f"one-{i}": "us-central1" for i in range(4)}, **{f"sweep-{i}": "us-east4" for i in range(2)}}
    for trial in range(5):
        fresh.control("reset", {})
        fresh.control("phase", {"seconds": 1000000})
        quotas(fresh)
        base = tmp_path / f"trial-{trial}"
        base.mkdir()
        project = Project.copy(base, PULUMI, fresh, config=offline_config("plan", RACE))
        if trial == 0:
            online = project.components("plan", "--stack", project.stack, "--online")
            text = online.stdout + online.stderr
            assert online.returncode == 0, text
            assert all(f"job sweep-{i}: over quota as written" in text and "fallbacks[0] (us-east4)" in text
                       for i in range(2)), text
        up = project.pulumi("up", "--yes", *(["--skip-preview"] if trial >= 2 else []), ok=False)
        assert up.returncode == 0, f"trial {trial}:\n{up.stdout}\n{up.stderr}"
        assert regions(project) == expected, f"trial {trial}"
        assert len(fresh.live()) == 6 and len(fresh.calls("customJobs.create")) == 6, f"trial {trial}"


def test_a_jobs_state_holds_its_own_facts_whatever_the_stacks_size(tmp_path: Path, fresh: Emulator) -> None:
    """The state's bytes per job at 40 jobs are those at 10 (at most 1.25 times): no job carries the stack's plan."""
    per_job = {}
    for count in (10, 40):
        fresh.control("reset", {})
        fresh.control("phase", {"seconds": 1000000})
        base = tmp_path / f"n{count}"
        base.mkdir()
        jobs = {f"job-{i:03}": {"jobSpec": spot_l4(), "fallbacks": [{"region": "us-east4"}]} for i in range(count)}
        project = Project.copy(base, PULUMI, fresh, config=offline_config("plan", jobs))
        project.up()
        resources = project.resources()
        assert len(resources) == count
        assert all("stackQuota" not in r["inputs"] and "stackQuota" not in r["outputs"] for r in resources)
        per_job[count] = sum(len(json.dumps(r)) for r in resources) / count
    assert per_job[40] <= 1.25 * per_job[10], per_job


def test_plan_online_passes_a_finished_stack_as_preview_leaves_it(tmp_path: Path, fresh: Emulator) -> None:
    """A Spot L4 sweep that SUCCEEDED, then the quota set to 0: `pulumi preview` leaves it unchanged, and `plan
    --online` asks no quota for it."""
    project = Project.copy(tmp_path, PULUMI, fresh, config=offline_config("plan", {
        f"sweep-{i}": {"jobSpec": spot_l4()} for i in range(2)}))
    project.up()
    fresh.control("phase", {"seconds": 0})
    fresh.control("advance", {"seconds": 10})
    project.pulumi("refresh", "--yes")
    assert {r["outputs"]["state"] for r in project.resources()} == {"SUCCEEDED"}
    fresh.control("quotas", {"metric": SPOT_L4, "region": "us-central1", "limit": 0})
    project.pulumi("preview", "--expect-no-changes")
    online = project.components("plan", "--stack", project.stack, "--online")
    assert online.returncode == 0, online.stdout + online.stderr


def test_the_documented_recovery_passes_with_the_quota_exactly_full(tmp_path: Path, fresh: Emulator) -> None:
    """Four Spot L4 jobs, quota 4: `pulumi up` killed mid-create (creates held 5 s), then the documented recovery
    (`cancel`, `refresh --clear-pending-creates`, `up`): each job the dead run left live is counted once, as live, and
    adopted; the rest are made; every job live once and in the state."""
    fresh.control("quotas", {"metric": SPOT_L4, "region": "us-central1", "limit": 4})
    project = Project.copy(tmp_path, PULUMI, fresh, config=offline_config("plan", {
        f"one-{i}": {"jobSpec": spot_l4()} for i in range(4)}))
    fresh.control("faults", {"delay": 5, "count": 4, "method": "customJobs.create"})
    dead = subprocess.Popen(project.command("up", "--yes", "--skip-preview"), cwd=project.path, env=project.env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    wait_until(lambda: len(fresh.calls("customJobs.create")) >= 2, 180, "creates sent by the first up")
    kill_session(dead)
    sent = len(fresh.calls("customJobs.create"))
    wait_until(lambda: len(fresh.jobs()) == sent, 60, "the dead run's slow creates landing")
    assert project.resources() == [] and 0 < len(fresh.live()) == sent

    project.pulumi("cancel", "--yes", ok=False)  # only if the dead run still holds the lock
    project.pulumi("refresh", "--yes", "--skip-preview", "--clear-pending-creates")
    recovered = project.pulumi("up", "--yes", ok=False)
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr
    assert Counter(job_id.rsplit("_", 1)[0] for job_id in fresh.live()) == Counter({f"one_{i}": 1 for i in range(4)})
    assert {r["outputs"]["jobId"] for r in project.resources()} == set(fresh.live())
