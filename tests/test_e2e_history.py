"""A job's history outlives its resource, under the real Pulumi engine against the emulator (a separate process):
jobs are run, replaced, removed from the stack and destroyed, and after each step the job records the API holds are
counted, with what `spend` and `status` report. Only `jobs.NAME.deleteRecordOnDelete` removes a finished job's
record; a job still active is cancelled, and nothing else is ever deleted.

While jobs are to finish, the emulator's jobs spend PHASE_SECONDS in each state, on its clock, which runs with the
real one (so the times `spend` counts are all in the past); a step that needs them finished waits until the API
says so (nothing is timed). Then the clock is frozen again and a new job stays queued.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing engine skips
these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e_support import (  # noqa: F401 (the fixture)
    LOCAL_BUCKETS,
    ROOT,
    Emulator,
    Project,
    offline_config,
    process_emulator,
    project_fixture,
    require_pulumi,
    wait_until,
)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()

IMAGE = "us-central1-docker.pkg.dev/local-project/trainers/example:0.1"
#: Each state's length on the emulator's clock while jobs are to finish.
PHASE_SECONDS = 0.05


def l4_job(**extra: Any) -> dict[str, Any]:
    return {"jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
        "replicaCount": 1, "containerSpec": {"imageUri": IMAGE, "args": ["--epochs=5"]}}],
        "scheduling": {"strategy": "SPOT"}}, **extra}


#: `kept` stays, `removed` leaves the stack (its record stays), `purged` leaves it with deleteRecordOnDelete.
CONFIG = offline_config("local", {"kept": l4_job(), "removed": l4_job(), "purged": l4_job(deleteRecordOnDelete=True)},
                        buckets=LOCAL_BUCKETS, labels={"env": "local"})


project = project_fixture("history", CONFIG)



def records(emulator: Emulator) -> dict[str, str]:
    """job id -> state of every custom job record the emulator holds."""
    return {job_id: job["state"] for job_id, job in emulator.jobs().items()}


def stems(emulator: Emulator) -> list[str]:
    return sorted(job_id.rsplit("_", 1)[0] for job_id in emulator.jobs())


def spend(project: Project) -> dict[str, Any]:
    done = project.components("spend", "--stack", "history", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def finished(emulator: Emulator) -> None:
    wait_until(lambda: not emulator.live(), 60, "every job finished")


def ran(document: dict[str, Any]) -> dict[str, float]:
    """job id -> the hours it ran, of each job a spend document counts."""
    return {job["jobId"]: job["hours"] for job in document["jobs"]}


def deletes(emulator: Emulator, since: int) -> list[str]:
    return [str(r["method"]) for r in emulator.control("requests")[since:] if str(r["method"]).endswith(".delete")]


def test_run_replace_remove_and_destroy_keep_every_record_but_the_opted_out_one(project: Project,
                                                                              emulator: Emulator) -> None:
    emulator.control("reset", {})
    emulator.control("phase", {"seconds": PHASE_SECONDS})
    try:
        project.up()
        finished(emulator)
        assert sorted(records(emulator).values()) == ["JOB_STATE_SUCCEEDED"] * 3

        # a spec change replaces the finished `kept` job: the new one runs, the old record stays
        start = len(emulator.control("requests"))
        project.edit_job("kept", lambda job: job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"].update(
            args=["--epochs=6"]))
        project.up()
        finished(emulator)
        assert stems(emulator) == ["kept", "kept", "purged", "removed"]
        assert deletes(emulator, start) == []
        before = spend(project)
        assert before["jobCount"] == 4 and {job["jobId"] for job in before["jobs"]} == set(emulator.jobs())

        # two jobs leave the stack: `removed`'s record stays, `purged` asked for its record to go
        start = len(emulator.control("requests"))
        project.edit_config(lambda config: [config["gcp-training-jobs:jobs"].pop(n) for n in ("removed", "purged")])
        project.up()
        assert stems(emulator) == ["kept", "kept", "removed"]
        assert deletes(emulator, start) == ["customJobs.delete"]
        after_remove = spend(project)
        assert after_remove["jobCount"] == 3
        assert {job["jobId"] for job in after_remove["jobs"]} == set(emulator.jobs())
    finally:
        emulator.control("phase", {"seconds": 1000000})

    # a spec change while the clock is frozen: the new `kept` job stays queued, and destroy cancels it
    project.edit_job("kept", lambda job: job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"].update(
        args=["--epochs=7"]))
    project.up()
    live = list(emulator.live())
    assert len(live) == 1 and live[0].startswith("kept_")
    start = len(emulator.control("requests"))
    project.pulumi("destroy", "--yes", "--skip-preview")
    assert project.resources() == []
    assert deletes(emulator, start) == []
    assert stems(emulator) == ["kept", "kept", "kept", "removed"]
    assert records(emulator)[live[0]] == "JOB_STATE_CANCELLED"

    # what ran is still counted: the cancelled job never ran, so the spend is as before the destroy
    after_destroy = spend(project)
    assert ran(after_destroy) == ran(after_remove) and after_destroy["costUsd"] == after_remove["costUsd"]
    status = project.components("status", "--stack", "history", "--json")
    assert status.returncode == 0, status.stdout + status.stderr
    document = json.loads(status.stdout)
    shown = {job["jobId"] for job in document["jobs"]} | {e["jobId"] for job in document["jobs"]
                                                          for e in job["earlier"]}
    assert shown == set(emulator.jobs())
