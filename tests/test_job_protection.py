"""The stack's rules in the TrainingJob provider, against the emulator: guardrails and the fixed job rules in
check, the cost estimate as an info line, and what a replace or a delete does to a job still queued or running
(a warning in words; with protectJobs or jobs.NAME.protect, a failure instead)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gcp_training_jobs.jobspec.translate.facts import facts_of_body
from gcp_training_jobs.resources.training_job import TrainingJobProvider
from gcp_training_jobs.resources.training_job.review import ProtectedJobError, cost_line
from tests.helpers import checked, l4_spot, spec_props

RAILS = {"allowedAccelerators": ["NVIDIA_L4"], "maxAcceleratorsPerJob": 1, "requiredLabels": ["env"],
         "spotOnly": True}


# -- check: guardrails, fixed rules, cost ---------------------------------------------------------------

def test_check_holds_a_job_to_its_stacks_per_job_guardrails(provider) -> None:
    job = l4_spot(count=2, machine="g2-standard-24")
    job["jobSpec"]["scheduling"]["strategy"] = "STANDARD"
    failures = provider.check({}, spec_props(job, guardrails=RAILS)).failures
    assert [(f.field, f.message) for f in failures] == [
        ("gcp-training-jobs:guardrails.maxAcceleratorsPerJob", "job l4 holds 2 accelerators at once "
         "(2 NVIDIA_L4 x 1 replica); allowed: at most 1"),
        ("gcp-training-jobs:guardrails.requiredLabels", "job l4 has no label env; allowed: jobs labelled env (the "
         "job's labels or the stack's gcp-training-jobs:labels)"),
        ("gcp-training-jobs:guardrails.spotOnly", "job l4 runs as STANDARD (on demand); allowed: scheduling.strategy "
         "SPOT or FLEX_START"),
    ]
    assert checked(provider, spec_props(l4_spot(env="staging"), guardrails=RAILS))


def test_check_refuses_guardrails_it_cannot_read(provider) -> None:
    (failure,) = provider.check({}, spec_props(guardrails={"maxAcceleratorsPerJob": "many"})).failures
    assert failure.field == "gcp-training-jobs:guardrails.maxAcceleratorsPerJob"
    assert failure.message.startswith("'many': ")


def test_check_logs_the_jobs_estimated_cost(provider, logged) -> None:
    checked(provider, spec_props())  # one line per check: the provider keeps nothing between calls
    (line,) = logged["info"]
    # g2-standard-8 in us-central1, its L4 included: $0.61/h on Spot (on demand $0.98/h), for at most 7200s
    assert line == ("job l4: $0.61/h (SPOT, at Spot rates), on demand $0.98/h, worst case $1.22 (2 h), us-central1; "
                    "basis: Compute Engine list 2026-07-30 + Vertex 15% (inferred, rule a2-g2-g4)")


def test_the_cost_line_is_the_full_text(provider, logged) -> None:
    """A long name and two bases: every basis is said, nothing is cut."""
    job = l4_spot(machine="g2-standard-96", count=8)
    job["jobSpec"]["workerPoolSpecs"].append({"machineSpec": {"machineType": "n1-highmem-96"}, "replicaCount": "2",
                                              "containerSpec": {"imageUri": job["jobSpec"]["workerPoolSpecs"][0][
                                                  "containerSpec"]["imageUri"]}})
    job["region"] = "me-central2"
    checked(provider, spec_props(job, name="a-job-with-a-rather-long-name-for-a-training-run"))
    (line,) = logged["info"]
    assert len(line) > 200 and "…" not in line, line
    assert line.startswith("job a-job-with-a-rather-long-name-for-a-training-run: $"), line
    assert "/h (SPOT, at Spot rates), on demand $" in line and " (2 h), me-central2; basis: Compute Engine list" in line
    assert line.endswith("+ Vertex 15%"), line  # the last basis, whole


def test_a_cost_line_with_an_unpriced_part_gives_the_whole_reason() -> None:
    body = {"jobSpec": {"workerPoolSpecs": [{"machineSpec": {"machineType": "a3-ultragpu-8g", "acceleratorType":
                                                             "NVIDIA_H200_141GB", "acceleratorCount": 8}}]}}
    line = cost_line(facts_of_body(body, region="us-central1"), "h200")
    assert "…" not in line
    assert line.startswith("job h200: unknown on demand, Spot unknown, worst case unknown (168 h, no timeout set), "
                           "us-central1; no price for 1 x a3-ultragpu-8g (no source prices it: "), line
    assert line.endswith(")"), line


def test_check_holds_a_job_to_its_cost_guardrails(provider) -> None:
    rails = {"maxJobCostUsd": 1, "requireTimeout": True}
    failures = provider.check({}, spec_props(guardrails=rails)).failures
    assert [(f.field, f.message) for f in failures] == [
        ("gcp-training-jobs:guardrails.maxJobCostUsd", "job l4's worst case is $1.22 ($0.61/h x 2 h; "
         "jobSpec.scheduling.timeout 7200s), running SPOT, at Spot rates, over the cap; allowed: at most $1.00")]
    no_timeout = l4_spot()
    del no_timeout["jobSpec"]["scheduling"]["timeout"]
    failures = provider.check({}, spec_props(no_timeout, guardrails=rails)).failures
    assert [f.field for f in failures] == ["gcp-training-jobs:guardrails.requireTimeout",
                                              "gcp-training-jobs:guardrails.maxJobCostUsd"]
    assert "may cost" not in failures[1].reason and "x 168 h; no timeout set" in failures[1].reason
    assert checked(provider, spec_props(guardrails={"maxJobCostUsd": 1.25, "requireTimeout": True}))


# -- diff: replacing an active job ----------------------------------------------------------------------

def deployed(provider: TrainingJobProvider, **extra: Any) -> tuple[str, dict[str, Any]]:
    result = provider.create(checked(provider, spec_props(**extra)))
    return result.id, dict(result.outs)


def replacing(outs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The next inputs: one more L4 (a replace), with other inputs changed as given."""
    news = {k: v for k, v in copy.deepcopy(outs).items() if k in spec_props()}
    news["job"] = l4_spot(count=2, machine="g2-standard-24")
    news.update(extra)
    return news


def test_replacing_an_active_job_warns_in_words(provider, logged) -> None:
    id_, outs = deployed(provider)
    result = provider.diff(id_, outs, replacing(outs))
    assert result.replaces == ["job"]
    assert logged["warn"] == [f"replacing job l4 (QUEUED since {outs['createTime']}): the running job will be "
                              "cancelled"]


@pytest.mark.parametrize("protection", [{"guardrails": {"protectJobs": True}}, {"protect": True}])
def test_replacing_a_protected_active_job_fails_the_preview(provider, logged, protection) -> None:
    id_, outs = deployed(provider)
    with pytest.raises(ProtectedJobError) as caught:
        provider.diff(id_, outs, replacing(outs, **protection))
    where = "jobs.l4.protect" if "protect" in protection else "guardrails.protectJobs"
    assert str(caught.value).startswith(
        f"gcp-training-jobs:{where}: replacing job l4 (QUEUED since {outs['createTime']}): the running job will be "
        "cancelled, and job l4 is protected; allowed: let it finish (or cancel it) first, or set ")
    # both keys, which one wins, and that the change must be recorded by an up before a replace or destroy passes
    assert "gcp-training-jobs:jobs.l4.protect to false" in str(caught.value)
    assert "gcp-training-jobs:guardrails.protectJobs" in str(caught.value)
    assert str(caught.value).endswith("then run `pulumi up` to record that: a replace or destroy reads the "
                                      "protection the last `pulumi up` recorded")
    assert logged["warn"] == []


def test_a_job_protected_when_deployed_stays_protected_until_an_up_of_its_own(provider) -> None:
    id_, outs = deployed(provider, guardrails={"protectJobs": True})
    with pytest.raises(ProtectedJobError, match="it was protected when last deployed"):
        provider.diff(id_, outs, replacing(outs, guardrails={}))
    lifted = provider.diff(id_, outs, {**replacing(outs, guardrails={}), "job": outs["job"]})
    assert (lifted.changes, lifted.replaces) == (True, []), "lifting the protection alone is an update"


def test_a_protected_job_at_rest_is_replaced_and_its_state_is_read_again(provider, emulator, logged) -> None:
    id_, outs = deployed(provider, protect=True)
    emulator.state.set_phase_seconds(0)  # it finished since: the state recorded still says QUEUED
    assert provider.diff(id_, outs, replacing(outs, protect=True)).replaces == ["job"]
    assert logged["warn"] == []
    assert emulator.state.requests("customJobs.get"), "the last known state was read again"


def test_a_change_that_does_not_replace_never_warns(provider, logged) -> None:
    id_, outs = deployed(provider, protect=True)
    news = {k: v for k, v in outs.items() if k in spec_props()}
    assert provider.diff(id_, outs, {**news, "waitForCompletion": True}).replaces == []
    assert logged["warn"] == []


# -- delete: the engine asks no provider before it, so a protected active job is refused here -----------

def test_deleting_a_protected_active_job_is_refused_and_the_job_keeps_running(provider, emulator) -> None:
    id_, outs = deployed(provider, guardrails={"protectJobs": True})
    with pytest.raises(ProtectedJobError, match="deleting job l4 .QUEUED since .*: the running job will be "
                       "cancelled, and job l4 is protected"):
        provider.delete(id_, outs)
    assert emulator.state.jobs()[0]["job"]["state"] == "JOB_STATE_QUEUED"
    emulator.state.set_phase_seconds(0)
    provider.delete(id_, outs)  # finished: nothing to protect, and its record stays
    assert emulator.state.jobs()[0]["job"]["state"] == "JOB_STATE_SUCCEEDED"


def test_a_paused_job_is_protected_like_a_running_one(provider, emulator) -> None:
    """A paused job waits to be resumed: replacing or deleting it cancels it, so protection holds it too."""
    id_, outs = deployed(provider, protect=True)
    emulator.state.pause_job(id_)
    with pytest.raises(ProtectedJobError, match="replacing job l4 .PAUSED since .*: the paused job will be "
                       "cancelled, and job l4 is protected"):
        provider.diff(id_, outs, replacing(outs, protect=True))  # its last known state (QUEUED) is read again
    assert emulator.state.jobs()[0]["job"]["state"] == "JOB_STATE_PAUSED"


def test_deleting_an_unprotected_active_job_cancels_it(provider, emulator) -> None:
    id_, outs = deployed(provider)
    provider.delete(id_, outs)
    assert emulator.state.jobs()[0]["job"]["state"] in ("JOB_STATE_CANCELLED", "JOB_STATE_CANCELLING")
