"""A job on a Compute Engine reservation under the real Pulumi engine, against the emulator: a reservation of 2
a3-highgpu-8g inserted through Compute Engine's REST API (as `gcloud compute reservations create` sends it);
`plan --online` and the provider's check at `pulumi preview` hold a stack's jobs to it one by one in the stack's order
(of jobs of 1 and 2, the second is named alone) and refuse a job that needs 3 from it, in the same words;
`plan --online` passes a job that needs 2, which comes up, and the reservation then reads `inUseCount` 2; read again,
the live job is in its inUseCount and not counted twice. The client's review of the stack's jobs
(backends.reservations) says the same.

Needs the `pulumi` CLI (official, or built by scripts/install-pulumi-engine.sh). Outside CI a missing engine skips
these tests; under CI (CI=true) it fails them.
"""

from __future__ import annotations

import copy
import json
import urllib.request
from typing import Any

import pytest

from gcp_training_jobs.backends import reservations
from gcp_training_jobs.jobspec.load import judge
from gcp_training_jobs.jobspec.review.reservations import takers, verdict_lines
from tests.e2e_support import LOCAL_BUCKETS, Emulator, Project, offline_config, process_emulator, require_pulumi  # noqa: F401 (the emulator fixture)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()

PROJECT, ZONE = "local-project", "us-central1-a"
RESERVATION = f"projects/{PROJECT}/zones/{ZONE}/reservations/h100-res"
IMAGE = "us-docker.pkg.dev/local-project/trainers/example:0.1"
H100 = {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8,
        "reservationAffinity": {"reservationAffinityType": "SPECIFIC_RESERVATION",
                                "key": "compute.googleapis.com/reservation-name", "values": [RESERVATION]}}


def on_reservation(machines: int) -> dict[str, Any]:
    pool = {"machineSpec": H100, "replicaCount": 1, "containerSpec": {"imageUri": IMAGE}}
    pools = [pool] + ([{**pool, "replicaCount": machines - 1}] if machines > 1 else [])
    return {"jobSpec": {"scheduling": {"timeout": "3600s"}, "workerPoolSpecs": pools}}


def compute(emulator: Emulator, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    request = urllib.request.Request(f"{emulator.url}compute/v1/{path}", method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        found: dict[str, Any] = json.loads(answer.read())
        return found


def test_a_job_on_a_reservation_comes_up_and_holds_its_machines(tmp_path: Any, emulator: Emulator) -> None:
    emulator.control("reset", {})
    compute(emulator, "POST", f"projects/{PROJECT}/zones/{ZONE}/reservations", {
        "name": "h100-res", "specificReservationRequired": True,
        "reservationSharingPolicy": {"serviceShareType": "ALLOW_ALL"},
        "specificReservation": {"count": "2", "instanceProperties": {"machineType": "a3-highgpu-8g"}}})
    facts = {n: judge(on_reservation(n)["jobSpec"], region="us-central1").checked().facts for n in (2, 3)}
    fits, unread = reservations.review(takers({"fits": {0: facts[2]}}, PROJECT, "us-central1"), PROJECT,
                                       emulator.url)
    assert [v.fits for v in fits] == [True] and unread == {}
    (refused,), _ = reservations.review(takers({"big": {0: facts[3]}}, PROJECT, "us-central1"), PROJECT, emulator.url)
    assert verdict_lines(refused) == (
        ["job big: needs 3 a3-highgpu-8g from reservation h100-res; it has 2 free (count 2, in use 0)"], [])
    config = offline_config("local", {"a": on_reservation(1), "b": on_reservation(2)}, buckets=LOCAL_BUCKETS,
                            tpuAccess={"grant": False})
    project = Project.copy(tmp_path, PULUMI, emulator, stack="reserved", config=copy.deepcopy(config))
    # job by job in the stack's order: a fits, b is named alone, in the same words by plan and each job's check
    second = ("job b: needs 2 a3-highgpu-8g from reservation h100-res, the stack's earlier jobs on it take 1; it has 2 "
              "free (count 2, in use 0)")
    over = project.components("plan", "--stack", "reserved", "--online")
    assert over.returncode == 1 and second in over.stdout, over.stdout + over.stderr
    assert "job a: needs" not in over.stdout
    preview = project.pulumi("preview", ok=False)
    said = preview.stdout + preview.stderr
    assert preview.returncode != 0 and second in said and "job a: needs" not in said, said
    project.edit_config(lambda c: c.update({"gcp-training-jobs:jobs": {"big": on_reservation(3)}}))
    words = "job big: needs 3 a3-highgpu-8g from reservation h100-res; it has 2 free (count 2, in use 0)"
    over = project.components("plan", "--stack", "reserved", "--online")
    assert over.returncode == 1 and words in over.stdout, over.stdout + over.stderr
    assert "Reservations (Compute Engine, project local-project: h100-res): 1 job(s) refused" in over.stdout
    preview = project.pulumi("preview", ok=False)
    assert preview.returncode != 0 and words in preview.stdout + preview.stderr, preview.stdout + preview.stderr
    assert not emulator.jobs(), "refused before anything is sent"

    project.edit_config(lambda c: c.update({"gcp-training-jobs:jobs": {"on-res": on_reservation(2)}}))
    fits = project.components("plan", "--stack", "reserved", "--online")
    assert fits.returncode == 0, fits.stdout + fits.stderr
    assert "Reservations (Compute Engine, project local-project: h100-res): all fit" in fits.stdout
    project.up()
    (job,) = emulator.live().values()
    assert job["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["reservationAffinity"]["values"] == [RESERVATION]
    held = compute(emulator, "GET", f"projects/{PROJECT}/zones/{ZONE}/reservations/h100-res")
    assert held["specificReservation"]["inUseCount"] == "2"
    again = project.components("plan", "--stack", "reserved", "--online")  # on-res live: in inUseCount, counted once
    assert again.returncode == 0 and "h100-res): all fit" in again.stdout, again.stdout + again.stderr
