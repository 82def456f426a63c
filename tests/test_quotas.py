"""Quotas and capacity over real HTTP against the emulator, with Google's own discovery clients: the emulator's quota
limits (POST /_emulator/quotas) enforced on create with Vertex's 429 and served through Cloud Quotas (quotaInfos.list)
and Service Usage (serviceusage v1beta1 consumerQuotaMetrics.list, the fallback); stockouts, preemption and a
replica's exit; the transport telling a quota 429 from a rate limit; the quota review (limits + what live jobs hold)
of gcp_training_jobs.backends.quotas; and whose fault a failed job is (gcp_training_jobs.backends.failures)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from googleapiclient.errors import HttpError

from gcp_training_jobs.backends import quotas, transport
from gcp_training_jobs.backends.base import Target
from gcp_training_jobs.backends.failures import CAPACITY, INTERNAL, OTHER, PREEMPTION, USER, failure_of, failure_of_job
from gcp_training_jobs.backends.lifecycle import Jobs
from gcp_training_jobs.backends.transport import QuotaExceeded, RetryPolicy, quota_metrics
from gcp_training_jobs.backends.vertex import VertexBackend
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.jobspec.review.quota_fit import Asker, Over, Placement, fit
from gcp_training_jobs.jobspec.review.quotas import Needs, needs_of
from gcp_training_jobs.jobspec.translate.facts import facts_of_body
from tests.helpers import FakeClock, control

ROOT = Path(__file__).resolve().parents[1]
L4 = "custom_model_training_nvidia_l4_gpus"
PARENT = "projects/my-proj/locations/us-central1"


#: The G2 machine type that carries N L4s (configure-compute: g2-standard-8 one, -24 two, -48 four).
G2 = {1: "g2-standard-8", 2: "g2-standard-24", 4: "g2-standard-48"}


def l4_body(count: int = 1, replicas: int = 1, strategy: str | None = None, machine: str | None = None,
            **labels: str) -> dict[str, Any]:
    machine = machine or G2[count]
    spec: dict[str, Any] = {"workerPoolSpecs": [
        {"machineSpec": {"machineType": machine, "acceleratorType": "NVIDIA_L4", "acceleratorCount": count},
         "replicaCount": "1", "containerSpec": {"imageUri": "us-docker.pkg.dev/my-proj/t/train:1"}}]}
    if replicas > 1:
        spec["workerPoolSpecs"].append({**spec["workerPoolSpecs"][0], "replicaCount": str(replicas - 1)})
    if strategy:
        spec["scheduling"] = {"strategy": strategy}
    return {"displayName": "quota-test", "jobSpec": spec, "labels": labels or {"team": "a"}}


def create(vertex_client: Any, body: dict[str, Any], parent: str = PARENT) -> dict[str, Any]:
    job: dict[str, Any] = vertex_client.projects().locations().customJobs().create(parent=parent, body=body).execute()
    return job


# -- the emulator: quotas on create, Service Usage -----------------------------------------------------------------

def test_a_create_over_a_quota_limit_is_refused_with_vertex_429_naming_the_metric(emulator, vertex_client) -> None:
    assert control(emulator, "quotas", {"metric": L4, "region": "us-central1", "limit": 3})[0] == 200
    create(vertex_client, l4_body(count=2))  # 2 of 3, live (the clock is frozen: it stays QUEUED)
    with pytest.raises(HttpError) as refused:
        create(vertex_client, l4_body(count=2))  # 2 + 2 > 3
    error = json.loads(refused.value.content)["error"]
    assert error == {"code": 429, "status": "RESOURCE_EXHAUSTED",
                     "message": "The following quota metrics exceed quota limits: "
                                "aiplatform.googleapis.com/custom_model_training_nvidia_l4_gpus"}
    create(vertex_client, l4_body(count=1))  # 2 + 1 fits
    create(vertex_client, l4_body(count=2), parent="projects/my-proj/locations/us-east1")  # another region: no limit
    create(vertex_client, l4_body(count=2, strategy="SPOT"))  # Spot counts against the preemptible twin
    assert len(emulator.state.jobs()) == 4


def test_finished_jobs_hold_no_quota(emulator, vertex_client) -> None:
    control(emulator, "quotas", {"metric": f"aiplatform.googleapis.com/{L4}", "region": "us-central1", "limit": 2})
    first = create(vertex_client, l4_body(count=2))
    vertex_client.projects().locations().customJobs().cancel(name=first["name"], body={}).execute()
    assert create(vertex_client, l4_body(count=2))["state"] == "JOB_STATE_QUEUED"


def test_service_usage_serves_the_limits_per_region(emulator) -> None:
    for region, limit in (("us-central1", 8), ("us-east1", 4)):
        control(emulator, "quotas", {"metric": L4, "region": region, "limit": limit})
    control(emulator, "quotas", {"metric": "custom_model_training_cpus", "region": "us-central1", "limit": 64})
    limits = quotas.read_limits("my-proj", emulator.url)
    assert limits == {(L4, "us-central1"): 8, (L4, "us-east1"): 4, ("custom_model_training_cpus", "us-central1"): 64}
    assert quotas.limit_of(limits, L4, "us-east1") == 4 and quotas.limit_of(limits, L4, "europe-west4") is None
    (call,) = emulator.state.requests()  # one request: Cloud Quotas answered
    assert call["path"] == "/v1/projects/my-proj/locations/global/services/aiplatform.googleapis.com/quotaInfos"
    warned: list[str] = []
    emulator.state.inject_faults(403, 1, "quotaInfos.list", message="Cloud Quotas API has not been used in project "
                                 "my-proj before or it is disabled.")
    assert quotas.read_limits("my-proj", emulator.url, warn=warned.append) == limits  # the same, from Service Usage
    assert [r["method"] for r in emulator.state.requests()[1:]] == ["quotaInfos.list", "consumerQuotaMetrics.list"]
    assert emulator.state.requests("consumerQuotaMetrics.list")[0]["query"]["view"] == "FULL"
    (warning,) = warned
    assert warning.startswith("quota limits read from Service Usage (serviceusage v1beta1): Cloud Quotas answered "
                              "HTTP 403") and "cloudquotas.quotas.get" in warning


def test_an_unlimited_quota_is_served_as_minus_one_and_never_enforced(emulator, vertex_client) -> None:
    assert control(emulator, "quotas", {"metric": L4, "region": "us-central1", "limit": -1})[0] == 200
    control(emulator, "quotas", {"metric": L4, "region": "us-east1", "limit": 1})
    limits = quotas.read_limits("my-proj", emulator.url)
    assert limits == {(L4, "us-central1"): -1, (L4, "us-east1"): 1}
    assert quotas.limit_of(limits, L4, "us-central1") is None  # nothing to hold a need against
    assert quotas.limit_of({**limits, (L4, quotas.ANY_REGION): 4}, L4, "us-central1") is None  # its own -1 wins
    assert quotas.unlimited(limits, L4, "us-central1") and not quotas.unlimited(limits, L4, "us-east1")
    big = fit([Asker("big", (Placement("us-central1", Needs({L4: 24})),))], partial(quotas.limit_of, limits),
              lambda region: {})
    assert big.verdicts[0].index == 0  # an unlimited quota holds any need
    assert create(vertex_client, l4_body(count=4, replicas=3))["state"] == "JOB_STATE_QUEUED"
    assert control(emulator, "quotas", {"metric": L4, "region": "us-central1", "limit": -2})[0] == 400


def test_the_limits_are_read_page_by_page(emulator) -> None:
    from google.auth.credentials import AnonymousCredentials
    from googleapiclient.discovery import build

    for index, metric in enumerate(("custom_model_training_cpus", L4, "custom_model_training_nvidia_t4_gpus")):
        control(emulator, "quotas", {"metric": metric, "region": "us-central1", "limit": index + 1})
    usage = build("serviceusage", "v1beta1", static_discovery=True, client_options={"api_endpoint": emulator.url},
                  credentials=AnonymousCredentials())
    first = usage.services().consumerQuotaMetrics().list(
        parent="projects/my-proj/services/aiplatform.googleapis.com", pageSize=2, view="FULL").execute()
    assert len(first["metrics"]) == 2 and first["nextPageToken"]
    assert first["metrics"][0]["consumerQuotaLimits"][0]["quotaBuckets"] == [
        {"effectiveLimit": "1", "defaultLimit": "1", "dimensions": {"region": "us-central1"}}]
    assert len(quotas.read_limits("my-proj", emulator.url)) == 3


def test_bad_quota_and_stockout_controls_are_400s(emulator) -> None:
    assert control(emulator, "quotas", {"metric": L4, "region": "us-central1"})[0] == 400  # no limit
    assert control(emulator, "quotas", {"region": "us-central1", "limit": 1})[0] == 400
    assert control(emulator, "stockouts", {"region": "us-central1"})[0] == 400


# -- the emulator: stockouts, preemption, a replica's exit ---------------------------------------------------------

def test_a_stockout_fails_the_job_before_it_runs_with_vertex_code_and_message(emulator, vertex_client) -> None:
    status, listed = control(emulator, "stockouts", {"region": "us-central1", "machineType": "g2-standard-8"})
    assert status == 200 and listed == [{"region": "us-central1", "machineType": "g2-standard-8"}]
    emulator.state.set_phase_seconds(0)
    failed = create(vertex_client, l4_body())
    assert failed["state"] == "JOB_STATE_FAILED" and "startTime" not in failed
    assert failed["error"] == {"code": 8, "message": "Resources are insufficient in region: us-central1"}
    elsewhere = create(vertex_client, l4_body(), parent="projects/my-proj/locations/us-east1")
    assert elsewhere["state"] == "JOB_STATE_SUCCEEDED"
    other_machine = create(vertex_client, l4_body(machine="g2-standard-12"))
    assert other_machine["state"] == "JOB_STATE_SUCCEEDED"
    emulator.state.reset()
    assert emulator.state.stockouts == set() and emulator.state.quota_limits == {}


def test_one_stockout_clears_and_the_others_stay(emulator, vertex_client) -> None:
    """`clear: true` ends one stockout (a region's machine type), or every one of a region, and no other."""
    for region, machine in (("us-central1", "g2-standard-8"), ("us-central1", "g2-standard-12"),
                            ("us-east1", "g2-standard-8")):
        control(emulator, "stockouts", {"region": region, "machineType": machine})
    status, left = control(emulator, "stockouts", {"region": "us-central1", "machineType": "g2-standard-8",
                                                   "clear": True})
    assert status == 200 and left == [{"region": "us-central1", "machineType": "g2-standard-12"},
                                      {"region": "us-east1", "machineType": "g2-standard-8"}]
    emulator.state.set_phase_seconds(0)
    assert create(vertex_client, l4_body())["state"] == "JOB_STATE_SUCCEEDED"  # capacity back where it was cleared
    still = create(vertex_client, l4_body(), parent="projects/my-proj/locations/us-east1")
    assert still["state"] == "JOB_STATE_FAILED" and still["error"]["code"] == 8
    assert create(vertex_client, l4_body(machine="g2-standard-12"))["state"] == "JOB_STATE_FAILED"
    assert control(emulator, "stockouts", {"region": "us-central1", "machineType": "g2-standard-8", "clear": True}
                   )[0] == 404  # no such stockout any more
    status, left = control(emulator, "stockouts", {"region": "us-central1", "clear": True})  # the region's, all
    assert status == 200 and left == [{"region": "us-east1", "machineType": "g2-standard-8"}]
    assert control(emulator, "stockouts", {"clear": True})[0] == 400


def test_a_queued_job_meets_a_stockout_declared_later(emulator, vertex_client) -> None:
    queued = create(vertex_client, l4_body())
    control(emulator, "stockouts", {"region": "us-central1", "machineType": "g2-standard-8"})
    emulator.state.set_phase_seconds(0)
    job = vertex_client.projects().locations().customJobs().get(name=queued["name"]).execute()
    assert job["state"] == "JOB_STATE_FAILED" and job["error"]["code"] == 8


def test_a_replica_exit_and_a_spot_preemption_fail_the_job_in_their_words(emulator, vertex_client) -> None:
    emulator.state.set_phase_seconds(10)
    user = create(vertex_client, l4_body())
    status, failed = control(emulator, "fail", {"job": user["name"], "exitStatus": 2, "replica": "workerpool0-0"})
    exit_2 = "The replica workerpool0-0 exited with a non-zero status of 2. Termination reason: Error."
    assert status == 200 and failed["error"] == {"code": 3, "message": exit_2}
    spot = create(vertex_client, l4_body(strategy="SPOT"))
    on_demand = create(vertex_client, l4_body())
    assert control(emulator, "fail", {"job": spot["name"], "preempted": True})[0] == 400  # still queued
    emulator.state.advance(25)  # QUEUED 10 s, PENDING 10 s: RUNNING
    assert control(emulator, "fail", {"job": on_demand["name"], "preempted": True})[0] == 400  # not Spot
    status, preempted = control(emulator, "fail", {"job": spot["name"], "preempted": True})
    assert status == 200 and preempted["error"]["code"] == 14 and "preempted" in preempted["error"]["message"]
    assert preempted["startTime"]
    assert control(emulator, "fail", {"job": on_demand["name"], "exitStatus": 0})[0] == 400


# -- whose fault -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("code", "message", "ran", "cause"), [
    (3, "The replica workerpool1-1 exited with a non-zero status of 1. Termination reason: Error.", True, USER),
    (13, "The replica workerpool0-0 exited with a non-zero status of 1.", True, USER),
    (None, "The replica master 0 exited with a non-zero status of 1.", True, USER),
    (8, "Resources are insufficient in region: us-central1", False, CAPACITY),
    (8, "The following quota metrics exceed quota limits: aiplatform.googleapis.com/x", False, CAPACITY),
    (14, "The replica workerpool0-0 was preempted", True, PREEMPTION),
    (13, "Internal error encountered.", True, INTERNAL),
    (14, "The service is currently unavailable.", False, INTERNAL),
    (7, "Permission denied on resource project x.", False, OTHER),
])
def test_whose_fault_a_failure_is(code: int | None, message: str, ran: bool, cause: str) -> None:
    found = failure_of(code, message, ran=ran)
    assert found.cause == cause
    assert found.googles == (cause in (CAPACITY, PREEMPTION, INTERNAL))
    if cause == USER and "workerpool1-1" in message:
        assert found.replica == "workerpool1-1" and "workerpool1-1" in found.describe()
    assert found.before_it_ran == (cause == CAPACITY and not ran)


def test_a_failed_job_as_vertex_answers_it_is_read_from_its_error_and_start_time(emulator, vertex_client) -> None:
    control(emulator, "stockouts", {"region": "us-central1", "machineType": "g2-standard-8"})
    emulator.state.set_phase_seconds(0)
    found = failure_of_job(create(vertex_client, l4_body()))
    assert (found.cause, found.ran, found.code) == (CAPACITY, False, 8) and found.before_it_ran


# -- the transport: a quota 429 is not a rate limit ------------------------------------------------------------------

def test_a_quota_429_is_never_retried_and_a_rate_limit_429_is(emulator, vertex_client) -> None:
    jobs = Jobs(VertexBackend(), Target("my-proj", "us-central1", emulator.url), policy=RetryPolicy(base_seconds=0),
                sleep=FakeClock().sleep, patience=0)
    emulator.state.inject_faults(429, 2, "customJobs.list", message="Quota exceeded for quota metric 'Resource "
                                 "management (CRUD) requests' and limit 'per minute per region'")
    assert jobs.find_all({}) == []  # a rate limit: retried until it goes through
    assert len(emulator.state.requests("customJobs.list")) == 3
    control(emulator, "quotas", {"metric": L4, "region": "us-central1", "limit": 0})
    with pytest.raises(QuotaExceeded) as refused:
        jobs.create("quota_test_1", l4_body(), {"pulumi-resource": "r", "pulumi-spec": "s"})
    assert refused.value.metrics == (f"aiplatform.googleapis.com/{L4}",)
    assert refused.value.status == 429 and L4 in str(refused.value)
    assert len(emulator.state.requests("customJobs.create")) == 1  # at once, never again
    assert emulator.state.jobs() == []


def test_quota_metrics_are_read_from_the_message_or_a_quota_failure() -> None:
    nas = ("The following quota metrics exceed quota limits: aiplatform.googleapis.com/custom_model_training_cpus,"
           "aiplatform.googleapis.com/custom_model_training_nvidia_v100_gpus")
    assert quota_metrics(nas) == ("aiplatform.googleapis.com/custom_model_training_cpus",
                                  "aiplatform.googleapis.com/custom_model_training_nvidia_v100_gpus")
    detail = [{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
               "violations": [{"subject": "aiplatform.googleapis.com/custom_model_training_cpus"}]}]
    assert quota_metrics("Quota exceeded.", detail) == ("aiplatform.googleapis.com/custom_model_training_cpus",)
    assert quota_metrics("Quota exceeded (injected by the emulator).") == ()
    assert transport.retryable(transport.ApiError(429, "RESOURCE_EXHAUSTED", "Too many requests"))
    assert not transport.retryable(QuotaExceeded(429, "RESOURCE_EXHAUSTED", nas, metrics=("x",)))


# -- the review: needs, limits and what live jobs hold --------------------------------------------------------------

def test_needs_are_read_from_the_body_and_what_has_no_metric_is_named() -> None:
    assert needs_of(facts_of_body(l4_body(count=2, replicas=3))).units == {L4: 6}
    flex = needs_of(facts_of_body(l4_body(strategy="FLEX_START")))
    assert flex.units == {"custom_model_training_preemptible_nvidia_l4_gpus": 1}
    unknown = needs_of(facts_of_body({"jobSpec": {"workerPoolSpecs": [
        {"machineSpec": {"machineType": "a3-ultragpu-8g", "acceleratorType": "NVIDIA_H200_141GB",
                         "acceleratorCount": 8}, "replicaCount": "1"}]}}))
    assert not unknown and any("NVIDIA_H200_141GB" in part for part in unknown.unchecked)
    tuning = {"trialJobSpec": l4_body()["jobSpec"], "parallelTrialCount": 3, "maxTrialCount": 9}
    assert needs_of(facts_of_body(tuning)).units == {L4: 3}
    tpu = needs_of(facts_of_body({"jobSpec": {"workerPoolSpecs": [
        {"machineSpec": {"machineType": "cloud-tpu", "acceleratorType": "TPU_V3", "acceleratorCount": 8},
         "replicaCount": "1"}]}}))
    assert tpu.units == {"custom_model_training_tpu_v3": 8}


def test_a_job_over_a_limit_is_named_with_the_metric_region_need_usage_limit_and_where_to_ask() -> None:
    over = Over("big", "us-central1", L4, 4, 1, 2, 4)
    text = over.message("my-proj")
    for part in (f"aiplatform.googleapis.com/{L4}", "us-central1", "big needs 4", "earlier new jobs there take 1",
                 "hold 2", "limit is 4", "(7 > 4)", "console.cloud.google.com/iam-admin/quotas?project=my-proj",
                 "fallbacks"):
        assert part in text, part


def test_a_read_with_the_runs_own_creates_counts_each_resource_once_as_its_last_note_says() -> None:
    """Held.adding: a job the run made that the read does not hold live counts as live; one the read holds live is
    not counted again; of a resource's notes the last says (made, then seen to end: nothing); the read itself is
    never written (the run shares it)."""
    read = quotas.Held(usage={L4: 2}, resources={"deployed", "old"}, by_stack={"dev": {L4: 2}}, live={"deployed"})
    made = [quotas.Made("deployed", "dev", {L4: 2}),  # made while the read was under way: the read holds it
            quotas.Made("old", "dev", {L4: 1}),  # ended before, made again by this run
            quotas.Made("team-a", None, {L4: 1}),
            quotas.Made("team-b", None, {L4: 4}), quotas.Made("team-b", None, {L4: 4}, live=False)]
    found = read.adding(made)
    assert found.usage == {L4: 4} and found.by_stack == {"dev": {L4: 3}}
    assert found.live == {"deployed", "old", "team-a"} and found.resources == {"deployed", "old", "team-a"}
    assert read == quotas.Held(usage={L4: 2}, resources={"deployed", "old"}, by_stack={"dev": {L4: 2}},
                               live={"deployed"})
    assert read.adding([quotas.Made("deployed", "dev", {L4: 2})]) is read


def test_what_live_jobs_hold_is_read_per_region_and_a_stack_s_own_live_jobs_are_left_to_the_rule(
        emulator, vertex_client) -> None:
    control(emulator, "quotas", {"metric": L4, "region": "us-central1", "limit": 4})
    create(vertex_client, l4_body(count=2, **{"pulumi-resource": "deployed", "pulumi-stack": "dev"}))  # holds 2
    held = quotas.held("my-proj", "us-central1", emulator.url)
    assert held.usage == {L4: 2} and held.by_stack == {"dev": {L4: 2}}
    assert held.resources == {"deployed"} and held.live == {"deployed"}
    limits = quotas.read_limits("my-proj", emulator.url)
    mine = [Asker("deployed", (Placement("us-central1", Needs({L4: 2})),)),
            Asker("mine", (Placement("us-central1", Needs({L4: 1})),)),
            Asker("fresh", (Placement("us-central1", Needs({L4: 2})),))]
    found = fit(mine, partial(quotas.limit_of, limits), lambda region: held.usage)
    assert [v.fits for v in found.verdicts] == [True, False, False]  # all new: deployed's 2 counted twice
    live = fit(mine, partial(quotas.limit_of, limits), lambda region: held.usage,
               lambda asker: asker.name in held.live)
    assert [(v.live, v.fits) for v in live.verdicts] == [(True, True), (False, True), (False, False)]


def test_quotas_that_cannot_be_read_are_said_so_and_never_raise_anything_else(emulator) -> None:
    emulator.state.inject_faults(403, 1, "quotaInfos.list", message="Permission 'cloudquotas.quotas.get' denied")
    emulator.state.inject_faults(403, 1, "consumerQuotaMetrics.list", message="Permission 'serviceusage.quotas.get' "
                                 "denied on resource")
    with pytest.raises(quotas.QuotaUnreadable, match="permission denied: Permission 'serviceusage.quotas.get'"):
        quotas.read_limits("my-proj", emulator.url)


# -- plan --online -------------------------------------------------------------------------------------------------

def plan_online(tmp_path: Path, emulator: Emulator, jobs: dict[str, Any], *extra: str) -> Any:
    (tmp_path / "Pulumi.q.yaml").write_text(yaml.safe_dump({"config": {
        "gcp:project": "my-proj", "gcp:region": "us-central1", "gcp-training-jobs:backend": "vertex",
        "gcp-training-jobs:apiEndpoint": emulator.url, "gcp-training-jobs:enableApis": False,
        "gcp-training-jobs:buckets": {"staging": "my-staging", "jobDir": "my-job-dir"},
        "gcp-training-jobs:jobs": jobs}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "GCP_TRAINING_JOBS_API"))}
    env["GCP_TRAINING_JOBS_BUILD_DIR"] = str(tmp_path / "build")
    return subprocess.run([sys.executable, "-m", "components", "plan", "--stack", "q", "--stacks-dir",
                           str(tmp_path), *extra], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_plan_online_holds_the_whole_stack_against_the_quotas(tmp_path, emulator, vertex_client) -> None:
    spec = l4_body()["jobSpec"]
    jobs = {"a": {"jobSpec": spec}, "b": {"jobSpec": spec}}
    control(emulator, "quotas", {"metric": L4, "region": "us-central1", "limit": 2})
    create(vertex_client, l4_body(count=1, **{"team": "other"}))  # someone else's live job holds 1
    offline = plan_online(tmp_path, emulator, jobs)
    assert offline.returncode == 0 and not emulator.state.requests("quotaInfos.list")
    over = plan_online(tmp_path, emulator, jobs, "--online")
    assert over.returncode == 1, over.stdout + over.stderr
    # `a` fits beside the live job; `b` is named alone, with what `a` takes
    assert f"job b: quota aiplatform.googleapis.com/{L4} in us-central1: b needs 1, the stack's earlier new jobs " \
           "there " \
           "take 1, live jobs hold 1, the limit is 2 (3 > 2)" in over.stdout
    assert "job a:" not in over.stdout
    assert "Quotas (Vertex AI custom training, project my-proj, us-central1): 1 job(s) over" in over.stdout
    control(emulator, "quotas", {"metric": L4, "region": "us-central1", "limit": 3})
    fits = plan_online(tmp_path, emulator, jobs, "--online")
    assert fits.returncode == 0 and "Quotas (Vertex AI custom training, project my-proj, us-central1): all hold" \
        in fits.stdout
    emulator.state.inject_faults(403, 1, "quotaInfos.list", message="Cloud Quotas API is disabled")
    fell_back = plan_online(tmp_path, emulator, jobs, "--online")
    assert fell_back.returncode == 0 and "warning: quota limits read from Service Usage" in fell_back.stdout
    assert "all hold" in fell_back.stdout
    emulator.state.inject_faults(403, 1, "quotaInfos.list", message="Permission denied")
    emulator.state.inject_faults(403, 1, "consumerQuotaMetrics.list", message="Permission denied")
    denied = plan_online(tmp_path, emulator, jobs, "--online")
    assert denied.returncode == 0 and "warning: quota check skipped" in denied.stdout
