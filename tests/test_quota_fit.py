"""The one rule of what a stack asks of the quotas (jobspec.review.quota_fit): a live job counted as what it holds;
each new job in the stack's order at its first placement that fits beside the stack's earlier new jobs and what live
jobs hold; a job is held only against the metrics it asks, in the region it will run in, and named alone when it fits
nowhere."""

from __future__ import annotations

from collections.abc import Mapping

from gcp_training_jobs.jobspec.review.quota_fit import Asker, Placement, asked, fit, verdict_lines
from gcp_training_jobs.jobspec.review.quotas import Needs, needs_of
from gcp_training_jobs.jobspec.translate.facts import facts_of_body

L4 = "custom_model_training_nvidia_l4_gpus"
SPOT_L4 = "custom_model_training_preemptible_nvidia_l4_gpus"
CPUS = "custom_model_training_cpus"


def job(name: str, *placements: tuple[str, Mapping[str, int]]) -> Asker:
    return Asker(name, tuple(Placement(region, Needs(dict(units)), index)
                             for index, (region, units) in enumerate(placements)))


def limits(table: Mapping[tuple[str, str], int]):
    return lambda metric, region: table.get((metric, region))


def nothing_live(region: str) -> dict[str, int]:
    return {}


# The fleet of the issue: the preemptible L4 quota 0 in us-central1; `spot` (one L4 on Spot, a fallback to us-east4),
# `steady` (one L4 on demand), `sweep` (two L4 trials on demand).
FLEET = (job("spot", ("us-central1", {SPOT_L4: 1}), ("us-east4", {SPOT_L4: 1})),
         job("steady", ("us-central1", {L4: 1})),
         job("sweep", ("us-central1", {L4: 2})))
LIMITS = {(SPOT_L4, "us-central1"): 0, (L4, "us-central1"): 4, (SPOT_L4, "us-east4"): 8}


def test_a_job_over_quota_as_written_lands_at_its_fallback_and_the_others_are_not_held_against_its_metric() -> None:
    found = fit(FLEET, limits(LIMITS), nothing_live)
    assert [(v.name, v.index) for v in found.verdicts] == [("spot", 1), ("steady", 0), ("sweep", 0)]
    assert found.refused == ()
    assert found.taken == {"us-central1": {L4: 3}, "us-east4": {SPOT_L4: 1}}
    problems, (warning,) = verdict_lines(found.verdicts[0], "my-proj")
    assert problems == []
    assert warning.startswith("job spot: over quota as written (custom_model_training_preemptible_nvidia_l4_gpus in "
                              "us-central1: needs 1")
    assert warning.endswith("`pulumi up` will create it at fallbacks[0] (us-east4), which fits")
    assert verdict_lines(found.verdicts[1], "my-proj") == ([], [])


def test_a_fourth_job_over_the_on_demand_limit_is_refused_alone_for_the_metric_it_asks() -> None:
    big = job("big", ("us-central1", {L4: 2}))
    found = fit((*FLEET, big), limits(LIMITS), nothing_live)
    assert [v.name for v in found.refused] == ["big"]
    (problem,), warnings = verdict_lines(found.of("big"), "my-proj")  # type: ignore[arg-type]
    assert warnings == []
    assert problem.startswith(f"job big: quota aiplatform.googleapis.com/{L4} in us-central1: big needs 2, the stack's "
                              "earlier new jobs there take 3, live jobs hold 0, the limit is 4 (5 > 4)")
    assert SPOT_L4 not in problem and "steady" not in problem and "sweep" not in problem


def test_the_earlier_job_fits_first_and_a_refused_job_takes_nothing() -> None:
    first, second, third = (job("first", ("us-central1", {L4: 3})), job("second", ("us-central1", {L4: 3})),
                            job("third", ("us-central1", {L4: 1})))
    found = fit((first, second, third), limits({(L4, "us-central1"): 4}), nothing_live)
    assert [(v.name, v.fits) for v in found.verdicts] == [("first", True), ("second", False), ("third", True)]
    assert found.taken == {"us-central1": {L4: 4}}


def test_live_jobs_outside_the_stack_are_counted_and_a_region_is_read_once() -> None:
    read: list[str] = []

    def live(region: str) -> dict[str, int]:
        read.append(region)
        return {L4: 3}

    found = fit((job("a", ("us-central1", {L4: 1})), job("b", ("us-central1", {L4: 1}))),
                limits({(L4, "us-central1"): 4}), live)
    assert [v.fits for v in found.verdicts] == [True, False]
    assert found.verdicts[1].over[0][0].short() == (f"{L4} in us-central1: needs 1, the stack's earlier new jobs "
                                                    "take 1, "
                                                    "live jobs hold 3, limit 4")
    assert read == ["us-central1"]


def test_a_metric_without_a_known_limit_is_not_judged_and_no_live_job_is_read_for_it() -> None:
    read: list[str] = []
    found = fit((job("a", ("europe-west4", {L4: 64})),), limits({}), lambda r: read.append(r) or {})
    assert found.verdicts[0].index == 0 and read == []


def test_a_job_on_a_specific_reservation_or_a_persistent_resource_asks_no_quota() -> None:
    pool = {"machineSpec": {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB",
                            "acceleratorCount": 8}, "replicaCount": "3",
            "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/i:1"}}
    reserved = {**pool, "machineSpec": {**pool["machineSpec"], "reservationAffinity": {
        "reservationAffinityType": "SPECIFIC_RESERVATION", "key": "compute.googleapis.com/reservation-name",
        "values": ["projects/p/zones/us-central1-a/reservations/h100-res"]}}}
    anywhere = {**pool, "machineSpec": {**pool["machineSpec"], "reservationAffinity": {
        "reservationAffinityType": "ANY_RESERVATION"}}}
    assert needs_of(facts_of_body({"jobSpec": {"workerPoolSpecs": [reserved]}})).units == {}
    assert needs_of(facts_of_body({"jobSpec": {"workerPoolSpecs": [anywhere]}})).units  # may land on demand
    on_resource = {"jobSpec": {"workerPoolSpecs": [pool], "persistentResourceId": "team-pool"}}
    assert needs_of(facts_of_body(on_resource)).units == {}


def test_asked_is_each_job_as_written() -> None:
    assert asked(FLEET) == {"us-central1": {
        L4: {"units": 3, "by": {"steady": 1, "sweep": 2}},
        SPOT_L4: {"units": 1, "by": {"spot": 1}}}}


def test_a_job_already_live_is_counted_as_what_it_holds_not_placed_again() -> None:
    live = {"steady", "sweep"}
    big = job("big", ("us-central1", {L4: 1}))
    found = fit((*FLEET, big), limits({**LIMITS, (L4, "us-central1"): 3}),
                lambda region: {L4: 3} if region == "us-central1" else {},
                lambda asker: asker.name in live)
    assert [(v.name, v.live, v.fits) for v in found.verdicts] == [
        ("spot", False, True), ("steady", True, True), ("sweep", True, True), ("big", False, False)]
    assert found.of("big").over[0][0].short() == (  # type: ignore[union-attr]
        f"{L4} in us-central1: needs 1, the stack's earlier new jobs take 0, live jobs hold 3, limit 3")
    assert verdict_lines(found.of("steady"), "my-proj") == ([], [])  # type: ignore[arg-type]


def test_the_verdict_is_the_same_for_the_same_stack_whoever_asks() -> None:
    once = fit(FLEET, limits(LIMITS), nothing_live)
    again = fit(tuple(Asker(a.name, tuple(Placement(p.region, p.needs, p.index) for p in a.placements))
                      for a in FLEET), limits(LIMITS), nothing_live)
    assert once == again
