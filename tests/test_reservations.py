"""Compute Engine reservations, over real HTTP against the emulator: inserted, read, listed, resized and deleted by
Google's own compute client (`discovery.build("compute", "v1")`, the discovery document google-api-python-client
ships); a Vertex AI job that consumes one raises its inUseCount while it lives and lowers it when it ends, and a job
that needs more than is free, or another machine, is refused; the client's read of the reservations a stack's jobs
name (backends.reservations) and the words of why one does not fit (jobspec.review.reservations)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.auth.credentials import AnonymousCredentials
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

from gcp_training_jobs.backends import reservations as backend
from gcp_training_jobs.backends.run_cache import RUN
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.jobspec.load import judge
from gcp_training_jobs.jobspec.review.reservations import (
    Named,
    Reservation,
    Verdict,
    fit,
    reservation_of,
    takers,
    verdict_lines,
)
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from tests.conftest_emulator import build_client
from tests.helpers import ROOT, configured

PROJECT, REGION, ZONE = "my-proj", "us-central1", "us-central1-a"
PARENT = f"projects/{PROJECT}/locations/{REGION}"
RESERVATION = f"projects/{PROJECT}/zones/{ZONE}/reservations/h100-res"
IMAGE = "us-docker.pkg.dev/p/r/t:1"
H100 = {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8}


@pytest.fixture
def compute(emulator: Emulator) -> Any:
    """Google's compute client pointed at the emulator's `compute/v1/`, as backends.reservations builds it."""
    return build("compute", "v1", static_discovery=True, credentials=AnonymousCredentials(), cache_discovery=False,
                 client_options={"api_endpoint": backend.endpoint_of(emulator.url)})


def insert(compute: Any, name: str = "h100-res", count: int = 2, machine: str = "a3-highgpu-8g",
           **fields: Any) -> dict[str, Any]:
    body = {"name": name, "specificReservationRequired": True,
            "reservationSharingPolicy": {"serviceShareType": "ALLOW_ALL"},
            "specificReservation": {"count": str(count), "instanceProperties": {"machineType": machine}}, **fields}
    operation: dict[str, Any] = compute.reservations().insert(project=PROJECT, zone=ZONE, body=body).execute()
    return operation


def read(compute: Any, name: str = "h100-res") -> dict[str, Any]:
    found: dict[str, Any] = compute.reservations().get(project=PROJECT, zone=ZONE, reservation=name).execute()
    return found


def pools(machines: int, machine: dict[str, Any] | None = None, reservation: str = RESERVATION) -> list[dict[str, Any]]:
    """`machines` replicas on the reservation: the chief, then the rest (Vertex's first pool has one replica)."""
    spec = {**(machine or H100), "reservationAffinity": {
        "reservationAffinityType": "SPECIFIC_RESERVATION", "key": "compute.googleapis.com/reservation-name",
        "values": [reservation]}}
    out = [{"machineSpec": dict(spec), "replicaCount": "1", "containerSpec": {"imageUri": IMAGE}}]
    if machines > 1:
        out.append({"machineSpec": dict(spec), "replicaCount": str(machines - 1), "containerSpec": {"imageUri": IMAGE}})
    return out


def create_job(vertex: Any, machines: int, machine: dict[str, Any] | None = None) -> dict[str, Any]:
    body = {"displayName": "on-res", "jobSpec": {"workerPoolSpecs": pools(machines, machine)}}
    job: dict[str, Any] = vertex.projects().locations().customJobs().create(parent=PARENT, body=body).execute()
    return job


def facts(machines: int, machine: dict[str, Any] | None = None, reservation: str = RESERVATION) -> JobFacts:
    return judge({"workerPoolSpecs": pools(machines, machine, reservation)}, region=REGION).checked().facts


def named_by_name(machines: int) -> JobFacts:
    """A job naming the reservation without its zone (refused offline; its facts are still read)."""
    return judge({"workerPoolSpecs": pools(machines, reservation="h100-res")}, region=REGION).facts


def held_to(reservation: Reservation, **jobs: JobFacts) -> tuple[Verdict, ...]:
    """The stack's jobs (each as written, in this order) held to `reservation` by the one rule."""
    return fit(takers({name: {0: job} for name, job in jobs.items()}, PROJECT, REGION), lambda need: reservation)


def said(verdicts: tuple[Verdict, ...]) -> list[str]:
    """Every review's words of the verdicts: the problems, then the warnings."""
    lines = [verdict_lines(v) for v in verdicts]
    return [line for problems, _ in lines for line in problems] + [line for _, warned in lines for line in warned]


def review_lines(emulator: Emulator, **jobs: JobFacts) -> list[str]:
    """The client's review of the stack's jobs (each as written, in this order) against the emulator."""
    verdicts, unread = backend.review(takers({name: {0: job} for name, job in jobs.items()}, PROJECT, REGION),
                                      PROJECT, emulator.url)
    assert unread == {}
    return said(verdicts)


# --------------------------------------------------------------------------------------------- the emulator


def test_google_client_inserts_gets_lists_resizes_and_deletes(emulator: Emulator, compute: Any) -> None:
    operation = insert(compute)
    assert operation["status"] == "DONE" and operation["operationType"] == "insert"
    done = compute.zoneOperations().get(project=PROJECT, zone=ZONE, operation=operation["name"]).execute()
    assert done["status"] == "DONE"
    found = read(compute)
    assert found["specificReservation"]["count"] == "2" and found["specificReservation"]["inUseCount"] == "0"
    assert found["zone"].endswith(f"/projects/{PROJECT}/zones/{ZONE}") and found["specificReservationRequired"]
    listed = compute.reservations().aggregatedList(project=PROJECT).execute()
    assert [r["name"] for r in listed["items"][f"zones/{ZONE}"]["reservations"]] == ["h100-res"]
    compute.reservations().resize(project=PROJECT, zone=ZONE, reservation="h100-res",
                                  body={"specificSkuCount": "3"}).execute()
    assert read(compute)["specificReservation"]["count"] == "3"
    with pytest.raises(HttpError) as taken:
        insert(compute)
    assert taken.value.resp.status == 409
    compute.reservations().delete(project=PROJECT, zone=ZONE, reservation="h100-res").execute()
    assert compute.reservations().list(project=PROJECT, zone=ZONE).execute().get("items") == []
    with pytest.raises(HttpError) as gone:
        read(compute)
    assert gone.value.resp.status == 404
    methods = [r["method"] for r in emulator.state.requests() if r["method"]]
    assert methods[:3] == ["reservations.insert", "zoneOperations.get", "reservations.get"]


def test_a_job_on_the_reservation_holds_its_machines_while_it_lives(emulator: Emulator, compute: Any) -> None:
    insert(compute)
    vertex = build_client("aiplatform", emulator.url)
    job = create_job(vertex, 2)
    assert read(compute)["specificReservation"]["inUseCount"] == "2"
    vertex.projects().locations().customJobs().cancel(name=job["name"]).execute()
    assert read(compute)["specificReservation"]["inUseCount"] == "0"
    create_job(vertex, 1)
    emulator.state.set_phase_seconds(10.0)
    emulator.state.advance(15.0)  # QUEUED -> PENDING: still holding
    assert read(compute)["specificReservation"]["inUseCount"] == "1"
    emulator.state.advance(30.0)  # ... RUNNING, then SUCCEEDED: released
    assert read(compute)["specificReservation"]["inUseCount"] == "0"


def test_vertex_refuses_a_job_over_the_free_machines_or_of_another_machine(emulator: Emulator, compute: Any) -> None:
    insert(compute)
    vertex = build_client("aiplatform", emulator.url)
    with pytest.raises(HttpError) as over:
        create_job(vertex, 3)
    assert over.value.resp.status == 400
    assert "needs 3 machines from reservation" in str(over.value) and "2 free (count 2, in use 0)" in str(over.value)
    mega = {"machineType": "a3-megagpu-8g", "acceleratorType": "NVIDIA_H100_MEGA_80GB", "acceleratorCount": 8}
    with pytest.raises(HttpError) as other:
        create_job(vertex, 1, mega)
    assert "does not match the machine of reservation" in str(other.value)
    create_job(vertex, 2)
    with pytest.raises(HttpError) as taken:
        create_job(vertex, 1)
    assert "0 free (count 2, in use 2)" in str(taken.value)


def test_a_job_on_the_reservation_holds_no_custom_training_quota(emulator: Emulator, compute: Any) -> None:
    """The emulator counts as the client does (review/quotas skips a SPECIFIC_RESERVATION pool): the H100 quota at 0
    refuses the job on demand and lets it run on the reservation's machines."""
    insert(compute)
    emulator.state.set_quota("custom_model_training_nvidia_h100_gpus", REGION, 0)
    vertex = build_client("aiplatform", emulator.url)
    on_demand = {"displayName": "x", "jobSpec": {"workerPoolSpecs": [
        {"machineSpec": H100, "replicaCount": "1", "containerSpec": {"imageUri": IMAGE}}]}}
    with pytest.raises(HttpError) as over:
        vertex.projects().locations().customJobs().create(parent=PARENT, body=on_demand).execute()
    assert over.value.resp.status == 429
    create_job(vertex, 2)
    assert read(compute)["specificReservation"]["inUseCount"] == "2"


def test_vertex_refuses_a_reservation_vertex_may_not_consume(emulator: Emulator, compute: Any) -> None:
    insert(compute, "closed", reservationSharingPolicy={"serviceShareType": "DISALLOW_ALL"})
    vertex = build_client("aiplatform", emulator.url)
    body = {"displayName": "x", "jobSpec": {"workerPoolSpecs": pools(1, reservation=RESERVATION.replace(
        "h100-res", "closed"))}}
    with pytest.raises(HttpError) as refused:
        vertex.projects().locations().customJobs().create(parent=PARENT, body=body).execute()
    assert "ALLOW_ALL" in str(refused.value)


# ----------------------------------------------------------------------------------------------- the client


def test_the_client_reads_a_reservation_by_its_path_and_without_its_zone(emulator: Emulator, compute: Any) -> None:
    insert(compute, count=4, shareSettings={"shareType": "SPECIFIC_PROJECTS",
                                            "projectMap": {"other": {"projectId": "other"}}})
    looked = backend.look_up(Named.of(RESERVATION), PROJECT, REGION, emulator.url)
    held = looked.reservation
    assert looked.why_not is None and held is not None
    assert (held.zone, held.machine_type, held.accelerators, held.count, held.in_use) == (
        ZONE, "a3-highgpu-8g", (("nvidia-h100-80gb", 8),), 4, 0)
    assert held.specific_required and held.services_allowed and held.shared_with == ("other",)
    by_name = backend.look_up(Named.of("h100-res"), PROJECT, REGION, emulator.url)
    assert by_name.reservation == held
    assert [r["method"] for r in emulator.state.requests() if r["method"]][-2:] == [
        "reservations.get", "reservations.aggregatedList"]
    absent = backend.look_up(Named.of(RESERVATION.replace("h100-res", "nope")), PROJECT, REGION, emulator.url)
    assert absent.reservation is None and "does not exist" in str(absent.why_not)


def test_the_review_holds_the_stacks_jobs_one_by_one_in_its_order(emulator: Emulator, compute: Any) -> None:
    insert(compute)
    assert review_lines(emulator, big=facts(3)) == [
        "job big: needs 3 a3-highgpu-8g from reservation h100-res; it has 2 free (count 2, in use 0)"]
    assert review_lines(emulator, fits=facts(2)) == []
    assert review_lines(emulator, a=facts(2), b=facts(1)) == [  # a fits first; b is named alone
        "job b: needs 1 a3-highgpu-8g from reservation h100-res, the stack's earlier jobs on it take 2; it has 2 free "
        "(count 2, in use 0)"]
    create_job(build_client("aiplatform", emulator.url), 1)  # a live job holds one: in inUseCount
    assert review_lines(emulator, fits=facts(2)) == [
        "job fits: needs 2 a3-highgpu-8g from reservation h100-res; it has 1 free (count 2, in use 1)"]
    assert len(emulator.state.requests("reservations.get")) == 4, "read once per review"


RESERVED = {"name": "h100-res", "zone": f"https://www.googleapis.com/compute/v1/projects/{PROJECT}/zones/{ZONE}",
            "reservationSharingPolicy": {"serviceShareType": "ALLOW_ALL"},
            "specificReservation": {"count": "4", "inUseCount": "0", "instanceProperties": {
                "machineType": "a3-highgpu-8g",
                "guestAccelerators": [{"acceleratorType": "nvidia-h100-80gb", "acceleratorCount": 8}]}}}


def with_free(count: int) -> Reservation:
    return reservation_of({**RESERVED, "specificReservation": {**RESERVED["specificReservation"],
                                                                "count": str(count)}}, PROJECT)


def test_two_jobs_of_two_on_three_free_the_first_fits_the_second_is_named_alone() -> None:
    verdicts = held_to(with_free(3), a=facts(2), b=facts(2))
    assert [(v.name, v.index) for v in verdicts] == [("a", 0), ("b", None)]
    assert said(verdicts) == ["job b: needs 2 a3-highgpu-8g from reservation h100-res, the stack's earlier jobs on it "
                              "take 2; it has 3 free (count 3, in use 0)"]


def test_a_later_job_that_fits_in_what_is_left_passes() -> None:
    """2, 2, 1 on 3 free: the second does not fit beside the first and takes nothing, so the third fits beside the
    first (the earlier fit first)."""
    verdicts = held_to(with_free(3), a=facts(2), b=facts(2), c=facts(1))
    assert [(v.name, v.fits) for v in verdicts] == [("a", True), ("b", False), ("c", True)]
    assert said(verdicts) == ["job b: needs 2 a3-highgpu-8g from reservation h100-res, the stack's earlier jobs on it "
                              "take 2; it has 3 free (count 3, in use 0)"]
    assert said(held_to(with_free(3), a=facts(2), b=facts(1), c=facts(1))) == [
        "job c: needs 1 a3-highgpu-8g from reservation h100-res, the stack's earlier jobs on it take 3; it has 3 free "
        "(count 3, in use 0)"]


MEGA = {"machineType": "a3-megagpu-8g", "acceleratorType": "NVIDIA_H100_MEGA_80GB", "acceleratorCount": 8}


def test_the_review_wants_the_exact_machine() -> None:
    reservation = reservation_of(RESERVED, PROJECT)
    assert said(held_to(reservation, ok=facts(1))) == []
    [wrong] = said(held_to(reservation, mega=facts(1, MEGA)))
    assert wrong.startswith("job mega: jobSpec.workerPoolSpecs[0]: runs a3-megagpu-8g + 8 nvidia-h100-mega-80gb")
    assert "reserves a3-highgpu-8g + 8 nvidia-h100-80gb" in wrong and "exact match" in wrong
    [zone] = said(held_to(reservation_of({**RESERVED, "zone": "europe-west4-a"}, PROJECT), far=named_by_name(1)))
    assert "is in zone europe-west4-a, not in the job's region us-central1" in zone
    [foreign] = said(held_to(reservation_of(RESERVED, "owner"), x=facts(1)))
    assert "not shared with my-proj" in foreign
    # each pool that does not fit is said, and the job's pools that fit are held to what is free
    mixed = judge({"workerPoolSpecs": [pools(1, MEGA)[0], *pools(3)[1:]]}, region=REGION).checked().facts
    [machine, room] = said(held_to(with_free(1), mixed=mixed))
    assert machine.startswith("job mixed: jobSpec.workerPoolSpecs[0]: runs a3-megagpu-8g")
    assert room == "job mixed: needs 2 a3-highgpu-8g from reservation h100-res; it has 1 free (count 1, in use 0)"


def test_the_plan_and_the_review_read_a_jobs_reservations_by_one_walk() -> None:
    """cli.plan.placement's needs are review.reservations' takings summed: the machines the plan shows are the
    machines the review holds to the reservation."""
    from gcp_training_jobs.cli.plan.placement import reservation_needs
    from gcp_training_jobs.jobspec.review.reservations import needs_of, takings

    job = facts(3)
    [shown] = reservation_needs(job)
    assert (shown.type, shown.name, shown.machine_type, shown.machines) == (
        "SPECIFIC_RESERVATION", RESERVATION, "a3-highgpu-8g", 3)
    assert sum(n.machines for n in needs_of("j", job, PROJECT)) == sum(t.machines for t in takings(job)) == 3
    anywhere = judge({"workerPoolSpecs": [{"machineSpec": {**H100, "reservationAffinity": {
        "reservationAffinityType": "ANY_RESERVATION"}}, "replicaCount": "1", "containerSpec": {"imageUri": IMAGE}}]},
        region=REGION).checked().facts
    assert [n.text() for n in reservation_needs(anywhere)] == ["1 a3-highgpu-8g from any reservation"]
    assert needs_of("j", anywhere, PROJECT) == []  # names none: nothing to read


# ------------------------------------------------------------------------------------------ the provider's check


def job_props(name: str, machines: int, machine: dict[str, Any] | None = None, **keys: Any) -> dict[str, Any]:
    """A TrainingJob's inputs: `machines` on the reservation, of stack dev; `keys`, its other inputs
    (`fallbacks`)."""
    job = {"jobSpec": {"workerPoolSpecs": pools(machines, machine), "scheduling": {"timeout": "3600s"}},
           "region": REGION}
    return {"name": name, "project": PROJECT, "backend": "vertex", "job": job, "waitForCompletion": False,
            "waitTimeoutSeconds": None, "identity": f"org/proj/dev/{name}",
            **keys}


def check_failures(provider: Any, news: dict[str, Any]) -> list[str]:
    return [f.message for f in provider.check({}, news).failures]


def stack_of(provider: Any, **machines: int) -> Any:
    """`provider` configured for a stack whose jobs (named in the stack's order) take these machines from the
    reservation."""
    return configured(provider, {name: stack_job(n) for name, n in machines.items()}, project=PROJECT, region=REGION)


def test_the_providers_check_refuses_what_plan_online_refuses_in_its_words(provider: Any, emulator: Emulator,
                                                                           compute: Any) -> None:
    """The check (`pulumi preview`, and before `up` creates) reads the reservation and says what `plan --online`
    says; a job the reservation gives what it needs passes; nothing is sent."""
    insert(compute)
    assert check_failures(provider, job_props("big", 3)) == [
        "job big: needs 3 a3-highgpu-8g from reservation h100-res; it has 2 free (count 2, in use 0)"]
    assert check_failures(provider, job_props("fits", 2)) == []
    mega = {"machineType": "a3-megagpu-8g", "acceleratorType": "NVIDIA_H100_MEGA_80GB", "acceleratorCount": 8}
    [other] = check_failures(provider, job_props("mega", 1, machine=mega))
    assert other.startswith("job mega: jobSpec.workerPoolSpecs[0]: runs a3-megagpu-8g") and "exact match" in other
    assert not emulator.state.requests("customJobs.create")


def test_the_providers_check_holds_the_stacks_jobs_in_order_and_counts_a_live_one_once(
        provider: Any, emulator: Emulator, compute: Any) -> None:
    """The stackQuota input carries what each job of the stack takes from which reservation: the jobs on one are held
    to it in the stack's order, only the one that does not fit fails its check; a job of the stack already live is in
    the reservation's inUseCount and not counted again."""
    insert(compute)
    stack_of(provider, a=2, b=1)
    assert check_failures(provider, job_props("a", 2)) == []  # first: it fits
    assert check_failures(provider, job_props("b", 1)) == [
        "job b: needs 1 a3-highgpu-8g from reservation h100-res, the stack's earlier jobs on it take 2; it has 2 free "
        "(count 2, in use 0)"]
    stack_of(provider, a=1, b=1)
    assert check_failures(provider, job_props("a", 1)) == []
    provider.create(provider.check({}, job_props("a", 1)).inputs)  # a is live: in use 1
    assert read(compute)["specificReservation"]["inUseCount"] == "1"
    RUN.clear()  # another run
    assert check_failures(provider, job_props("b", 1)) == []  # a in inUseCount, not counted again: 1 of 1 free
    RUN.clear()
    [alone] = check_failures(provider, job_props("c", 2))  # a job of no stack, alone beside what is in use
    assert alone == "job c: needs 2 a3-highgpu-8g from reservation h100-res; it has 1 free (count 2, in use 1)"


def test_the_providers_check_says_what_the_review_says_of_a_stack_job_by_job(provider: Any, emulator: Emulator,
                                                                            compute: Any) -> None:
    """2, 2, 1 on 3 free: each job's check is its own verdict of the one rule, in the review's words."""
    insert(compute, count=3)
    stack_of(provider, a=2, b=2, c=1)
    checks = {name: check_failures(provider, job_props(name, n)) for name, n in (("a", 2), ("b", 2), ("c", 1))}
    assert checks == {"a": [], "c": [], "b": review_lines(emulator, a=facts(2), b=facts(2), c=facts(1))}
    assert checks["b"] == ["job b: needs 2 a3-highgpu-8g from reservation h100-res, the stack's earlier jobs on it "
                           "take 2; it has 3 free (count 3, in use 0)"]


def test_the_check_reads_each_reservation_once_per_run(provider: Any, emulator: Emulator, compute: Any) -> None:
    insert(compute)
    stack_of(provider, a=1, b=1)
    for name in ("a", "b", "a"):
        assert check_failures(provider, job_props(name, 1)) == []
    assert len(emulator.state.requests("reservations.get")) == 1


# ------------------------------------------------------------------------------------------------ fallbacks

#: A fallback on the job's own machines, as Spot: it keeps the job's reservationAffinity (resources.fallbacks).
SPOT = {"scheduling": {"strategy": "SPOT"}}
#: A fallback whose machine is the reservation's (the job as written runs another).
ON_ITS_MACHINE = {"machineSpec": {k: H100[k] for k in ("machineType", "acceleratorType", "acceleratorCount")}}


def test_a_fallback_takes_from_the_same_reservation_so_a_full_one_refuses_it_too(provider: Any, emulator: Emulator,
                                                                               compute: Any) -> None:
    """A fallback keeps the job's reservationAffinity: where the reservation cannot give the job its machines as
    written, it cannot at the fallback either, and the job fits nowhere: each placement is named."""
    insert(compute, count=3)
    stack_of(provider, a=2, b=2)
    take = ("needs 2 a3-highgpu-8g from reservation h100-res, the stack's earlier jobs on it take 2; it has 3 free "
            "(count 3, in use 0)")
    assert check_failures(provider, job_props("b", 2, fallbacks=[SPOT])) == [
        f"job b: {take}", f"job b: fallbacks[0]: {take}"]
    assert not emulator.state.requests("customJobs.create")


def test_a_job_the_reservation_gives_its_machines_at_a_fallback_only_is_warned_and_made_there(
        provider: Any, emulator: Emulator, compute: Any, logged: dict[str, list[str]]) -> None:
    """As written the job runs another machine than the reservation's, its fallback the reservation's own: the check
    passes with a warning naming the fallback, and `up` skips the job as written unsent and makes it there."""
    insert(compute)
    stack_of(provider, w=1)
    news = job_props("w", 1, MEGA, fallbacks=[ON_ITS_MACHINE])
    assert check_failures(provider, news) == []
    [warned] = [w for w in logged["warn"] if w.startswith("job w:")]
    assert warned.startswith("job w: as written (us-central1): jobSpec.workerPoolSpecs[0]: runs a3-megagpu-8g")
    assert warned.endswith("; `pulumi up` will not send it there and will create it at fallbacks[0] (us-central1), "
                           "which fits")
    outs = dict(provider.create(provider.check({}, news).inputs).outs)
    assert outs["placement"]["index"] == 1
    assert len(emulator.state.requests("customJobs.create")) == 1, "the job as written is never sent"
    assert any(line.startswith("job w: placement 0 (us-central1 STANDARD) skipped at create: "
                               "jobSpec.workerPoolSpecs[0]: runs a3-megagpu-8g") for line in logged["info"])
    assert read(compute)["specificReservation"]["inUseCount"] == "1"


def test_a_reservation_without_room_at_create_skips_each_placement_and_creates_nothing(
        provider: Any, emulator: Emulator, compute: Any) -> None:
    """Room at the check, none at create (another job took it since): each placement is skipped unsent, and the
    create fails naming each."""
    from gcp_training_jobs.resources.training_job.tries import QuotaRefused

    insert(compute)
    inputs = provider.check({}, job_props("late", 2, fallbacks=[SPOT])).inputs
    create_job(build_client("aiplatform", emulator.url), 1)  # another job takes one of the 2
    reads = len(emulator.state.requests("reservations.get"))
    with pytest.raises(QuotaRefused) as refused:
        provider.create(inputs)
    assert len(emulator.state.requests("reservations.get")) == reads + 1, "read once per create, for both placements"
    free = "needs 2 a3-highgpu-8g from reservation h100-res; it has 1 free (count 2, in use 1)"
    assert str(refused.value) == (
        "job late: no placement can hold the job (quota refused, or no room on the reservation it names), nothing "
        f"was created: placement 0 (us-central1 STANDARD) skipped at create: {free}; placement 1 (us-central1 SPOT) "
        f"skipped at create: {free}")
    assert len(emulator.state.requests("customJobs.create")) == 1, "only the other job was sent"


# ------------------------------------------------------------------------------------------------------- plan


def stack_job(machines: int, machine: dict[str, Any] | None = None, **keys: Any) -> dict[str, Any]:
    """A stack's job of `machines` on the reservation (`keys`: its other settings, `fallbacks`)."""
    return {"jobSpec": {"workerPoolSpecs": pools(machines, machine), "scheduling": {"timeout": "3600s"}}, **keys}


def plan(tmp_path: Path, emulator: Emulator, jobs: dict[str, Any], *extra: str) -> subprocess.CompletedProcess[str]:
    """`plan --stack q` of a stack of these jobs (each `machines` on the reservation, or a stack_job) at the
    emulator."""
    (tmp_path / "Pulumi.q.yaml").write_text(yaml.safe_dump({"config": {
        "gcp:project": PROJECT, "gcp:region": REGION, "gcp-training-jobs:backend": "vertex",
        "gcp-training-jobs:apiEndpoint": emulator.url, "gcp-training-jobs:enableApis": False,
        "gcp-training-jobs:buckets": {"staging": "my-staging", "jobDir": "my-job-dir"},
        "gcp-training-jobs:jobs": {name: n if isinstance(n, dict) else stack_job(n) for name, n in jobs.items()}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "GCP_TRAINING_JOBS_API"))}
    env["GCP_TRAINING_JOBS_BUILD_DIR"] = str(tmp_path / "build")
    return subprocess.run([sys.executable, "-m", "components", "plan", "--stack", "q", "--stacks-dir", str(tmp_path),
                           *extra], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_plan_names_the_reservations_offline_and_reads_them_online(tmp_path: Path, emulator: Emulator,
                                                                   compute: Any) -> None:
    insert(compute)
    offline = plan(tmp_path, emulator, {"a": 1, "b": 2})
    assert offline.returncode == 0, offline.stdout + offline.stderr
    [line] = [line for line in offline.stdout.splitlines() if line.startswith("Reservations")]
    assert line == ("Reservations: named, not checked offline (`plan --online` reads each and holds the stack's jobs "
                    "to it): h100-res (a 1, b 2)")
    assert not emulator.state.requests("reservations.get"), "offline: nothing is read"
    document = json.loads(plan(tmp_path, emulator, {"a": 1, "b": 2}, "--json").stdout)
    assert document["reservations"]["checked"] is False
    assert document["reservations"]["named"][RESERVATION] == {"name": "h100-res", "machineType": "a3-highgpu-8g",
                                                              "machines": 3, "by": {"a": 1, "b": 2}}
    online = plan(tmp_path, emulator, {"a": 1, "b": 2}, "--online")
    assert online.returncode == 1, online.stdout + online.stderr
    assert ("job b: needs 2 a3-highgpu-8g from reservation h100-res, the stack's earlier jobs on it take 1; it has 2 "
            "free (count 2, in use 0)" in online.stdout)
    assert "job a:" not in online.stdout
    assert "Reservations (Compute Engine, project my-proj: h100-res): 1 job(s) refused" in online.stdout
    fits = plan(tmp_path, emulator, {"a": 1, "b": 1}, "--online")
    assert fits.returncode == 0 and "h100-res): all fit" in fits.stdout, fits.stdout + fits.stderr
    assert len(emulator.state.requests("reservations.get")) == 2, "read once per plan"


def settings_configured(provider: Any, tmp_path: Path) -> Any:
    """`provider` configured with the config of the stack file `plan` wrote, as the engine hands it over (object
    values as JSON text)."""
    from pulumi.dynamic import ConfigureRequest
    from pulumi.dynamic.config import Config

    config = yaml.safe_load((tmp_path / "Pulumi.q.yaml").read_text())["config"]
    raw = {key: value if isinstance(value, str) else json.dumps(value) for key, value in config.items()}
    provider.configure(ConfigureRequest(Config(raw, "proj")))
    return provider


@pytest.mark.slow
def test_plan_online_and_the_providers_check_say_one_verdict_in_one_wording(tmp_path: Path, emulator: Emulator,
                                                                          provider: Any, compute: Any) -> None:
    """Two jobs of 2 on 3 free: `plan --online` and each job's check (the stack's quota input built from the same
    settings) pass the first and name the second alone, in the same words."""
    insert(compute, count=3)
    online = plan(tmp_path, emulator, {"a": 2, "b": 2}, "--online")
    words = ("job b: needs 2 a3-highgpu-8g from reservation h100-res, the stack's earlier jobs on it take 2; it has 3 "
             "free (count 3, in use 0)")
    assert online.returncode == 1 and words in online.stdout and "job a:" not in online.stdout, online.stdout
    settings_configured(provider, tmp_path)
    assert check_failures(provider, job_props("a", 2)) == []
    assert check_failures(provider, job_props("b", 2)) == [words]


@pytest.mark.slow
def test_plan_online_warns_of_a_job_made_at_its_fallback(tmp_path: Path, emulator: Emulator, provider: Any,
                                                         compute: Any, logged: dict[str, list[str]]) -> None:
    """The job as written on another machine than the reservation's, its fallback on the reservation's: `plan
    --online` passes, warning in the words the provider's check logs."""
    insert(compute)
    online = plan(tmp_path, emulator, {"w": stack_job(1, MEGA, fallbacks=[ON_ITS_MACHINE])}, "--online")
    assert online.returncode == 0, online.stdout + online.stderr
    assert "Reservations (Compute Engine, project my-proj: h100-res): all fit, 1 at a fallback" in online.stdout
    settings_configured(provider, tmp_path)
    assert check_failures(provider, job_props("w", 1, MEGA, fallbacks=[ON_ITS_MACHINE])) == []
    [warned] = [w for w in logged["warn"] if w.startswith("job w:")]
    assert f"warning: {warned}" in online.stdout, online.stdout


@pytest.mark.slow
def test_the_online_diff_says_a_reservation_overrun_as_one_and_its_header_says_online(
        tmp_path: Path, emulator: Emulator, compute: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`diff --online`: a job past a reservation's free machines is "over the reservation" (not "over quota"), a job of
    another machine than the reservation's is a "reservation" problem, and the header and the comment say the diff
    read Google's side (online); without --online they say offline."""
    from gcp_training_jobs.cli.diff.command import diff
    from gcp_training_jobs.cli.diff.text import render_markdown, render_text
    from tests.helpers import commit_all, scratch_project

    insert(compute, count=2)
    repo = scratch_project(tmp_path)
    for key in [k for k in os.environ if k.startswith(("PULUMI_", "GCP_TRAINING_JOBS_API")) or "PROXY" in k.upper()]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("GCP_TRAINING_JOBS_BUILD_DIR", str(tmp_path / "build"))
    config = {"gcp:project": PROJECT, "gcp:region": REGION, "gcp-training-jobs:apiEndpoint": emulator.url,
              "gcp-training-jobs:enableApis": False,
              "gcp-training-jobs:buckets": {"staging": "my-staging", "jobDir": "my-job-dir"}}
    stack = repo / "stacks" / "Pulumi.q.yaml"
    stack.write_text(yaml.safe_dump({"config": {**config, "gcp-training-jobs:jobs": {"a": stack_job(1)}}}))
    commit_all(repo, "base")
    other = {"machineType": "a3-highgpu-4g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 4}
    stack.write_text(yaml.safe_dump({"config": {**config, "gcp-training-jobs:jobs": {
        "a": stack_job(1), "b": stack_job(2), "c": stack_job(1, other)}}}))
    monkeypatch.chdir(repo)
    offline = diff("main", None)
    assert isinstance(offline, dict) and offline["online"] is False
    assert " (offline, at the head's prices): " in render_text(offline).splitlines()[0]
    found = diff("main", None, online=True)
    assert isinstance(found, dict) and found["online"] is True, found
    text = render_text(found)
    assert " (online, at the head's prices): " in text.splitlines()[0]
    assert "    over the reservation: job b: needs 2 a3-highgpu-8g from reservation h100-res, the stack's earlier " \
           "jobs on it take 1; it has 2 free (count 2, in use 0)" in text.splitlines(), text
    assert any(line.startswith("    reservation: job c: ") for line in text.splitlines()), text
    assert "over quota" not in text
    assert "; online (`gcp-training-jobs diff --online`), " in render_markdown(found)
