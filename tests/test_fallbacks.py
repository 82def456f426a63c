"""`jobs.NAME.fallbacks`, `retries`, `rerun` and the quota check, on the TrainingJob provider called directly against
the emulator over real HTTP (the engine runs the same methods in tests/test_e2e_capacity.py): every alternative
judged, guardrailed and priced at check; a placement whose quota, read at create, cannot hold the job is skipped
unsent, and a create refused for quota moves to the next placement at once; a job
that failed for Google's reasons is made again (the next placement after a stockout), one failed by the user's code
never; CANCELLED is reported; `rerun` replaces; and never two live jobs for one resource."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.backends.run_cache import RUN
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import PLACEMENT_LABEL, RESOURCE_LABEL, RETRY_LABEL, SPEC_LABEL
from gcp_training_jobs.resources.job_model.identity import identity_labels
from gcp_training_jobs.resources.training_job import TrainingJobProvider
from gcp_training_jobs.resources.training_job.tries import QuotaRefused
from tests.helpers import FakeClock, checked, configured, provider_props

L4 = "custom_model_training_nvidia_l4_gpus"
IDENTITY = "org/proj/dev/trial"
FALLBACK_EAST = [{"region": "us-east1"}]


def l4_job(region: str = "us-central1", strategy: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"workerPoolSpecs": [
        {"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
         "replicaCount": "1", "containerSpec": {"imageUri": "us-docker.pkg.dev/my-proj/trainers/train:1"}}],
        "scheduling": {"timeout": "7200s"}}
    if strategy:
        spec["scheduling"]["strategy"] = strategy
    return {"jobSpec": spec, "region": region, "labels": {"team": "vision"}}


def props(job: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return provider_props(job or l4_job(), **{"name": "trial", "identity": IDENTITY, **extra})


@pytest.fixture
def provider_clock() -> FakeClock:
    return FakeClock()


def failures(provider: TrainingJobProvider, news: dict[str, Any], olds: dict[str, Any] | None = None
             ) -> list[tuple[str, str]]:
    return [(f.field, f.message) for f in provider.check(olds or {}, news).failures]


def created(provider: TrainingJobProvider, news: dict[str, Any]) -> dict[str, Any]:
    return dict(provider.create(checked(provider, news)).outs)


def quota(emulator: Emulator, region: str, limit: int, metric: str = L4) -> None:
    emulator.state.set_quota(metric, region, limit)


def next_run() -> None:
    """Another `pulumi preview` (a new provider process): the quotas and live jobs are read again."""
    RUN.clear()


def jobs_by_region(emulator: Emulator) -> list[tuple[str, str]]:
    return [(entry["name"].split("/")[3], entry["job"]["state"]) for entry in emulator.state.jobs()]


def live(emulator: Emulator) -> list[dict[str, Any]]:
    return [e for e in emulator.state.jobs() if e["job"]["state"] in ("JOB_STATE_QUEUED", "JOB_STATE_PENDING",
                                                                       "JOB_STATE_RUNNING")]


# -- check: every alternative judged, guardrailed and priced ------------------------------------------------------

def test_each_fallback_is_judged_at_its_path(provider) -> None:
    bad = [{"region": "us-east1"}, {"machineSpec": {"machineType": "g2-standard-8", "acceleratorCount": 3}},
           {"region": "us-east1", "colour": "blue"}, "us-west1"]
    found = failures(provider, props(fallbacks=bad))
    second = [p for p, _ in found if p.startswith("fallbacks[1]")]
    assert second == ["fallbacks[1].job.jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"]
    assert any(p == "fallbacks[2].colour" and "allowed: region, machineSpec, scheduling" in r for p, r in found)
    assert any(p == "fallbacks[3]" for p, _ in found)
    assert not any(p.startswith("fallbacks[0]") for p, _ in found)
    nowhere = failures(provider, props(fallbacks=[{"region": "mars-central1"}]))
    assert [p for p, _ in nowhere] == ["fallbacks[0].job.region"]


def test_a_job_on_a_persistent_resource_takes_no_fallbacks(provider) -> None:
    """Its machines are the resource's: no stockout or quota refusal to fall back from, and an alternative would
    keep running on the same resource, elsewhere. Refused at each fallback, by the provider and in a stack."""
    on_pool = l4_job()
    on_pool["jobSpec"]["persistentResourceId"] = "team-pool"
    found = failures(provider, props(on_pool, fallbacks=[{"region": "us-east1"}], persistentResourceDeclared=True))
    assert found == [(
        "fallbacks[0]", "the job runs on persistent resource team-pool (jobSpec.persistentResourceId), whose "
        "machines are there while it exists: no stockout or quota refusal to fall back from; allowed: no fallbacks "
        "on a job on a persistent resource")], found


def test_a_problem_of_the_job_itself_is_said_once_not_again_per_fallback(tmp_path: Path) -> None:
    from gcp_training_jobs.resources.settings.judge import judge

    job = l4_job()
    job["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorCount"] = 3  # g2-standard-8 comes with 1
    job["fallbacks"] = [{"region": "us-east1"}, {"region": "us-west1"}]
    with pytest.raises(SpecError) as refused:
        judge({"gcp:project": "my-proj", "gcp-training-jobs:backend": "vertex",
               "gcp-training-jobs:jobs": {"trial": job}}, tmp_path)
    assert [p.path for p in refused.value.problems] == [
        "gcp-training-jobs:jobs.trial.jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"]


def test_a_fallback_breaking_a_guardrail_fails_the_check_and_each_is_priced(provider, logged) -> None:
    t4 = {"machineSpec": {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 1}}
    rails = {"allowedAccelerators": ["NVIDIA_L4"]}
    found = failures(provider, props(fallbacks=[FALLBACK_EAST[0], t4], guardrails=rails))
    assert [(p, r.split(":")[0]) for p, r in found] == [
        ("gcp-training-jobs:guardrails.allowedAccelerators", "fallbacks[1]")]
    assert "NVIDIA_TESLA_T4" in found[0][1]
    costs = [line for line in logged["info"] if line.startswith("job trial")]
    assert any(line.startswith("job trial fallbacks[0]:") and "us-east1" in line for line in costs)
    assert any(line.startswith("job trial fallbacks[1]:") for line in costs)


def test_retries_and_rerun_are_checked(provider) -> None:
    assert failures(provider, props(retries=-1))[0][0] == "retries"
    assert failures(provider, props(retries=2.5))[0][0] == "retries"
    assert failures(provider, props(rerun=7))[0][0] == "rerun"
    checked(provider, props(retries=0.0, rerun="2026-11-24"))  # Pulumi sends 0 as 0.0


def test_a_training_input_fallback_cannot_set_a_strategy() -> None:
    from gcp_training_jobs.resources.fallbacks import alternative_job

    job = {"trainingInput": {"scaleTier": "BASIC_GPU", "region": "us-central1"}}
    data, problems = alternative_job(job, {"region": "us-east1", "scheduling": {"strategy": "SPOT"},
                                           "machineSpec": {"machineType": "n1-standard-8"}})
    assert data["trainingInput"]["region"] == "us-east1"
    assert [p.path for p in problems] == ["machineSpec", "scheduling.strategy"]
    custom = {"trainingInput": {"scaleTier": "CUSTOM", "masterType": "n1-standard-8", "workerType": "n1-standard-8",
                                "workerCount": "2", "parameterServerType": "n1-highmem-8", "parameterServerCount": "1",
                                "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "1"}},
                                "workerConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "1"}}}}
    data, problems = alternative_job(custom, {"machineSpec": {"machineType": "n1-standard-16",
                                                              "acceleratorType": "NVIDIA_TESLA_V100",
                                                              "acceleratorCount": 2}})
    ti = data["trainingInput"]
    assert problems == [] and ti["masterType"] == ti["workerType"] == "n1-standard-16"
    assert ti["parameterServerType"] == "n1-highmem-8"  # a pool without accelerators keeps its machine
    assert ti["workerConfig"]["acceleratorConfig"] == {"type": "NVIDIA_TESLA_V100", "count": "2"}


# -- check: the quota check ------------------------------------------------------------------------------------

def test_a_job_over_quota_fails_the_check_naming_metric_region_need_usage_and_limit(provider, emulator) -> None:
    quota(emulator, "us-central1", 0)
    ((prop, reason),) = failures(provider, props())
    assert prop == "job"
    for part in (f"aiplatform.googleapis.com/{L4}", "us-central1", "trial needs 1", "hold 0", "limit is 0",
                 "iam-admin/quotas?project=my-proj"):
        assert part in reason, part
    spot = failures(provider, props(l4_job(strategy="SPOT")))
    assert spot == []  # Spot counts against the preemptible twin, which has no limit here
    assert emulator.state.jobs() == []


def test_over_quota_as_written_but_a_fallback_fits_is_a_warning(provider, emulator, logged) -> None:
    quota(emulator, "us-central1", 0)
    quota(emulator, "us-east1", 4)
    checked(provider, props(fallbacks=FALLBACK_EAST))
    (warning,) = [w for w in logged["warn"] if "over quota" in w]
    assert "fallbacks[0] (us-east1)" in warning and "needs 1" in warning
    quota(emulator, "us-east1", 0)
    next_run()
    found = failures(provider, props(fallbacks=FALLBACK_EAST))
    assert [r.split(":")[1].strip() for _, r in found] == ["quota aiplatform.googleapis.com/" + L4 + " in us-central1",
                                                           "fallbacks[0]"]


def l4_stack_job(count: int = 1, **keys: Any) -> dict[str, Any]:
    """A stack file's job of `count` L4 in us-central1 (`keys`: its other settings, `fallbacks`)."""
    machine = {1: "g2-standard-8", 2: "g2-standard-24", 4: "g2-standard-48"}[count]
    job = l4_job()
    job["jobSpec"]["workerPoolSpecs"][0]["machineSpec"].update(machineType=machine, acceleratorCount=count)
    return {**job, **keys}


def test_the_stacks_jobs_count_together_and_stand_for_what_its_live_jobs_hold(provider, emulator) -> None:
    """The stack's config (which the engine hands the provider's configure) is its jobs in order with what each asks:
    the job is placed after the stack's earlier new jobs, beside what live jobs hold; a job of the stack already live
    (found by its pulumi-resource label) is counted as what it holds, not as new."""
    configured(provider, {"other": l4_stack_job(2), "trial": l4_stack_job()})  # stack dev, in its order
    quota(emulator, "us-central1", 2)
    ((_, reason),) = failures(provider, props())
    assert "trial needs 1, the stack's earlier new jobs there take 2, live jobs hold 0, the limit is 2 (3 > 2)" \
        in reason
    other = provider_props(l4_stack_job(2), name="other", identity="org/proj/dev/other")
    provider.create(checked(provider, other))  # stack dev: holds 2
    quota(emulator, "us-central1", 3)
    next_run()
    assert failures(provider, props()) == []  # other, live, counted as the 2 it holds: 2 + 1 fits
    provider.create(checked(provider, props(identity="org/proj/prod/else", name="else")))  # stack prod: holds 1
    next_run()
    ((_, reason),) = failures(provider, props())
    assert "trial needs 1, the stack's earlier new jobs there take 0, live jobs hold 3, the limit is 3" in reason
    quota(emulator, "us-central1", 4)
    next_run()
    configured(TrainingJobProvider(), {})
    assert failures(TrainingJobProvider(), props()) == []  # alone (no stack), the job needs 1 beside the 3 held
    first = configured(TrainingJobProvider(), {"trial": l4_stack_job(), "zz": l4_stack_job(4)})
    assert failures(first, props()) == []  # a later job's excess is never this job's


def test_the_resources_own_orphan_is_counted_once_as_live(provider, emulator) -> None:
    """Recovery after a run that died mid-create, with the quota full: the resource's own job, live and outside the
    state, is found by its identity and counted once, as live (the create adopts it), never as live and new."""
    configured(provider, {"other": l4_stack_job(), "trial": l4_stack_job()})
    quota(emulator, "us-central1", 2)
    provider.create(checked(provider, props()))  # the run dies before the state records it: an orphan
    provider.create(checked(provider, provider_props(l4_stack_job(), name="other", identity="org/proj/dev/other")))
    next_run()
    assert failures(provider, props()) == []  # its own job counted once: 2 held of 2, nothing new
    outs = created(provider, props())
    assert len(emulator.state.jobs()) == 2 and outs["jobId"] in {e["name"].rsplit("/", 1)[-1]
                                                                for e in emulator.state.jobs()} | {outs["jobId"]}
    changed = props(l4_stack_job(2))  # a replace: its new job is new beside the old one
    next_run()
    quota(emulator, "us-central1", 3)
    ((_, reason),) = failures(provider, changed, olds=outs)
    assert "trial needs 2" in reason and "live jobs hold 2, the limit is 3" in reason


def test_a_finished_job_of_the_stack_asks_nothing(provider, emulator) -> None:
    """A job of the stack that ended (as Google says) is one `pulumi preview` leaves as it is: it asks no quota of the
    stack's later jobs."""
    configured(provider, {"a-sweep": l4_stack_job(2), "trial": l4_stack_job()})
    quota(emulator, "us-central1", 2)
    sweep = created(provider, provider_props(l4_stack_job(2), name="a-sweep", identity="org/proj/dev/a-sweep"))
    emulator.state.advance(10 * emulator.state.phase_seconds)  # it runs, and ends
    assert [e["job"]["state"] for e in emulator.state.jobs()] == ["JOB_STATE_SUCCEEDED"], sweep
    next_run()
    assert failures(provider, props()) == []  # the sweep holds nothing now, and asks nothing


def test_a_create_takes_the_placement_the_stacks_plan_gave_it_whatever_order_the_engine_creates_in(
        provider, emulator, logged) -> None:
    """`one` (no fallback) then `trial` (a fallback to us-east1), 1 L4 free in each region: the plan gives `one`
    us-central1 and `trial` its fallback. Created first, as the engine's parallel creates may, `trial` still goes to
    us-east1, leaving us-central1 to `one`; both are made."""
    configured(provider, {"one": l4_stack_job(), "trial": l4_stack_job(fallbacks=FALLBACK_EAST)})
    quota(emulator, "us-central1", 1)
    quota(emulator, "us-east1", 1)
    one = provider_props(l4_stack_job(), name="one", identity="org/proj/dev/one")
    inputs = {name: checked(provider, news) for name, news in (("one", one), ("trial", props(fallbacks=FALLBACK_EAST)))}
    assert any("`pulumi up` will create it at fallbacks[0] (us-east1)" in w for w in logged["warn"]), logged["warn"]
    trial = dict(provider.create(inputs["trial"]).outs)
    assert trial["placement"]["region"] == "us-east1"
    assert "job trial: the stack's plan gives it placement 1 (us-east1), where the stack's earlier jobs leave room" \
        in logged["info"], logged["info"]
    assert dict(provider.create(inputs["one"]).outs)["placement"]["region"] == "us-central1"
    assert [r["path"].split("/")[5] for r in emulator.state.requests("customJobs.create")] == ["us-east1",
                                                                                              "us-central1"]


def test_a_planned_placement_taken_since_by_a_job_outside_the_stack_moves_the_create_on(provider, emulator,
                                                                                        logged) -> None:
    """The plan gives `trial` its fallback (us-east1); a job outside the stack takes that room after the plan was
    read: the fresh read at create moves `trial` on, saying why, rather than sending a create Google would refuse."""
    configured(provider, {"one": l4_stack_job(), "trial": l4_stack_job(fallbacks=FALLBACK_EAST)})
    quota(emulator, "us-central1", 1)
    quota(emulator, "us-east1", 1)
    inputs = checked(provider, props(fallbacks=FALLBACK_EAST))  # plan: `one` in us-central1, `trial` in us-east1
    quota(emulator, "us-east1", 0)  # taken since, outside the stack
    outs = dict(provider.create(inputs).outs)
    assert outs["placement"]["region"] == "us-central1"
    assert f"job trial: placement 1 (us-east1 STANDARD) skipped at create: aiplatform.googleapis.com/{L4} free 0, " \
        "needs 1" in logged["info"], logged["info"]
    assert [r["path"].split("/")[5] for r in emulator.state.requests("customJobs.create")] == ["us-central1"]


def test_plan_online_asks_nothing_of_a_finished_job_as_preview_leaves_it(provider, emulator, tmp_path: Path) -> None:
    """plan --online's review counts a job of the stack that ended (Google says SUCCEEDED) as `pulumi preview` does:
    unchanged, asking no quota, so a finished sweep passes with the quota at 0; a job never made still asks."""
    import yaml

    from gcp_training_jobs.cli.plan.quota import online_review
    from gcp_training_jobs.resources.settings import load_stack_file

    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(yaml.safe_dump({"config": {
        "gcp:project": "my-proj", "gcp:region": "us-central1", "gcp-training-jobs:backend": "vertex",
        "gcp-training-jobs:apiEndpoint": emulator.url, "gcp-training-jobs:enableApis": False,
        "gcp-training-jobs:buckets": {"staging": "my-staging", "jobDir": "my-job-dir"},
        "gcp-training-jobs:jobs": {"trial": l4_stack_job()}}}))
    settings = load_stack_file(stack, root=Path(__file__).resolve().parents[1])
    created(provider, props())  # stack dev's `trial`
    emulator.state.advance(10 * emulator.state.phase_seconds)
    quota(emulator, "us-central1", 0)
    assert online_review(settings, "org/proj/dev/").problems == []
    (problem,) = online_review(settings, "org/proj/other/").problems  # another stack's: never made there
    assert "trial needs 1" in problem and "the limit is 0" in problem


def test_an_unchanged_job_reads_no_quota_and_unreadable_quotas_only_warn(provider, emulator, logged) -> None:
    news = checked(provider, props())
    reads = len(emulator.state.requests("quotaInfos.list"))
    checked(provider, copy.deepcopy(news), olds=news)  # no change: nothing is made, nothing to check
    assert len(emulator.state.requests("quotaInfos.list")) == reads
    emulator.state.inject_faults(403, 1, "quotaInfos.list", message="Permission denied on resource")
    emulator.state.inject_faults(403, 1, "consumerQuotaMetrics.list", message="Permission denied on resource")
    next_run()
    checked(provider, props())
    assert any("quota check skipped" in w and "permission denied" in w for w in logged["warn"])


# -- create: placements, quota refusals ------------------------------------------------------------------------

def test_a_job_without_fallbacks_keeps_exactly_its_labels(provider, emulator) -> None:
    outs = created(provider, props())
    (entry,) = emulator.state.jobs()
    labels = entry["job"]["labels"]
    assert PLACEMENT_LABEL not in labels and RETRY_LABEL not in labels
    job = props()["job"]
    assert {k: labels[k] for k in (RESOURCE_LABEL, SPEC_LABEL)} == identity_labels(IDENTITY, job, "vertex")
    assert identity_labels(IDENTITY, job, "vertex") == identity_labels(IDENTITY, job, "vertex", rerun=None)
    assert outs["placement"] == {"index": 0, "region": "us-central1", "strategy": "STANDARD", "reservation": None,
                                "machine": "g2-standard-8 + 1 NVIDIA_L4"}
    assert outs["retryCount"] == 0


def unreadable_quotas(emulator: Emulator) -> None:
    """The next read of the limits is refused by both APIs (403), as where the permissions are missing."""
    emulator.state.inject_faults(403, 1, "quotaInfos.list", message="Permission denied on resource")
    emulator.state.inject_faults(403, 1, "consumerQuotaMetrics.list", message="Permission denied on resource")


def held_reads(emulator: Emulator) -> list[str]:
    """The regions whose live jobs were read (a listing without a label filter), one entry per read."""
    return [r["path"].split("/")[5] for m in ("customJobs.list", "hyperparameterTuningJobs.list")
            for r in emulator.state.requests(m) if not r["query"].get("filter")]


def test_a_placement_without_quota_free_at_create_is_skipped_unsent(provider, emulator, logged) -> None:
    """The quota read at create (fresh: the check read none to hold it to) skips us-central1, where the limit is 0
    since the preview: no create is sent there. The limits are read once, and only the region with a limit for the
    metric the job asks has its live jobs read."""
    inputs = checked(provider, props(fallbacks=FALLBACK_EAST))
    quota(emulator, "us-central1", 0)  # after the preview
    limits, held = len(emulator.state.requests("quotaInfos.list")), held_reads(emulator)
    outs = dict(provider.create(inputs).outs)
    assert (outs["placement"]["index"], outs["placement"]["region"], outs["retryCount"]) == (1, "us-east1", 0)
    assert [r["path"].split("/")[5] for r in emulator.state.requests("customJobs.create")] == ["us-east1"]
    assert emulator.state.jobs()[0]["job"]["labels"][PLACEMENT_LABEL] == "1"
    assert f"job trial: placement 0 (us-central1 STANDARD) skipped at create: aiplatform.googleapis.com/{L4} free " \
           "0, needs 1" in logged["info"], logged["info"]
    assert len(emulator.state.requests("quotaInfos.list")) - limits == 1
    read = held_reads(emulator)
    for region in held:
        read.remove(region)
    assert read == ["us-central1", "us-central1"]  # custom and tuning jobs, us-central1 only
    assert logged["warn"] == []


def test_a_placement_whose_live_jobs_hold_its_quota_is_skipped(provider, emulator, logged) -> None:
    """What the project's live jobs hold counts: the 1 L4 of a limit of 1 is taken by another resource's job."""
    quota(emulator, "us-central1", 1)
    provider.create(checked(provider, props(identity="org/proj/dev/other", name="other")))
    next_run()
    outs = created(provider, props(fallbacks=FALLBACK_EAST))
    assert outs["placement"]["region"] == "us-east1"
    assert f"job trial: placement 0 (us-central1 STANDARD) skipped at create: aiplatform.googleapis.com/{L4} free " \
           "0, needs 1" in logged["info"], logged["info"]


def test_quotas_unread_at_create_are_said_once_and_a_refused_create_goes_to_the_next_placement(
        provider, emulator, logged) -> None:
    """Where the quota cannot be read at create the placements are sent in order, as without the read: Vertex's 429
    moves the create to the next one at once, and no retry is spent."""
    inputs = checked(provider, props(fallbacks=FALLBACK_EAST))
    quota(emulator, "us-central1", 0)  # after the preview: the create meets Vertex's 429
    unreadable_quotas(emulator)
    outs = dict(provider.create(inputs).outs)
    assert outs["placement"]["index"] == 1 and outs["placement"]["region"] == "us-east1"
    assert outs["resourceName"].startswith("projects/my-proj/locations/us-east1/customJobs/")
    assert outs["retryCount"] == 0  # nothing was made: no retry spent
    assert jobs_by_region(emulator) == [("us-east1", "JOB_STATE_QUEUED")]
    assert emulator.state.jobs()[0]["job"]["labels"][PLACEMENT_LABEL] == "1"
    assert len(emulator.state.requests("customJobs.create")) == 2
    (unread,) = [w for w in logged["warn"] if "quota not read at create" in w]
    assert unread.startswith("job trial: quota not read at create (") and "permission denied" in unread
    assert unread.endswith("; each placement is tried in order")
    assert any("refused for quota" in w for w in logged["warn"])
    read = provider.read(outs["resourceName"], outs)  # read (and delete) at the job's own region
    assert read.outs["placement"]["region"] == "us-east1"
    provider.delete(outs["resourceName"], outs)
    assert jobs_by_region(emulator) == [("us-east1", "JOB_STATE_CANCELLED")]


def test_every_placement_without_quota_at_create_creates_nothing_and_names_each(provider, emulator) -> None:
    inputs = checked(provider, props(fallbacks=FALLBACK_EAST))
    quota(emulator, "us-central1", 0)
    quota(emulator, "us-east1", 0)
    with pytest.raises(QuotaRefused) as refused:
        provider.create(inputs)
    assert str(refused.value).startswith(
        "job trial: no placement has the quota free to hold the job, nothing was created: "
        f"placement 0 (us-central1 STANDARD) skipped at create: aiplatform.googleapis.com/{L4} free 0, needs 1; "
        f"placement 1 (us-east1 STANDARD) skipped at create: aiplatform.googleapis.com/{L4} free 0, needs 1; "
        "ask for more at https://console.cloud.google.com/iam-admin/quotas?project=my-proj"), str(refused.value)
    assert emulator.state.jobs() == [] and emulator.state.requests("customJobs.create") == []


def test_every_placement_refused_for_quota_creates_nothing(provider, emulator) -> None:
    inputs = checked(provider, props(fallbacks=FALLBACK_EAST))
    quota(emulator, "us-central1", 0)
    quota(emulator, "us-east1", 0)
    unreadable_quotas(emulator)  # Google's answers decide
    with pytest.raises(QuotaRefused, match="every placement was refused for quota") as refused:
        provider.create(inputs)
    assert str(refused.value).count(L4) == 2
    assert emulator.state.jobs() == []


def test_a_job_with_one_placement_is_sent_as_written_and_reads_no_quota_at_create(provider, emulator) -> None:
    inputs = checked(provider, props())
    quota(emulator, "us-central1", 0)
    limits, held = len(emulator.state.requests("quotaInfos.list")), len(held_reads(emulator))
    with pytest.raises(QuotaRefused, match="every placement was refused for quota"):
        provider.create(inputs)
    assert len(emulator.state.requests("customJobs.create")) == 1  # Google's own answer decides
    assert len(emulator.state.requests("quotaInfos.list")) == limits and len(held_reads(emulator)) == held


SPOT_L4 = "custom_model_training_preemptible_nvidia_l4_gpus"
#: `placement: cheapest` candidates, the cheapest first: Spot in us-central1, then in us-east4.
SPOT_CANDIDATES = [{"region": "us-central1", "scheduling": {"strategy": "SPOT"}},
                   {"region": "us-east4", "scheduling": {"strategy": "SPOT"}}]


def test_placement_cheapest_skips_a_candidate_without_spot_quota_at_create(provider, emulator, logged) -> None:
    """`cheapestFirst`: the candidates are the placements (placement i is fallbacks[i]); the first, us-central1 SPOT,
    has no Spot quota free at create and is never sent."""
    inputs = checked(provider, props(fallbacks=SPOT_CANDIDATES, cheapestFirst=True))
    quota(emulator, "us-central1", 0, SPOT_L4)
    quota(emulator, "us-east4", 8, SPOT_L4)
    outs = dict(provider.create(inputs).outs)
    assert (outs["placement"]["index"], outs["placement"]["region"]) == (1, "us-east4")
    assert [r["path"].split("/")[5] for r in emulator.state.requests("customJobs.create")] == ["us-east4"]
    assert f"job trial: candidate 1 (us-central1 SPOT) skipped at create: aiplatform.googleapis.com/{SPOT_L4} " \
           "free 0, needs 1" in logged["info"], logged["info"]


def test_placement_cheapest_names_its_candidates_as_candidates_when_google_refuses_them(provider, emulator,
                                                                                        logged) -> None:
    """Under `cheapestFirst` placement 0 is the cheapest candidate, not the job as written: the refusals say so."""
    inputs = checked(provider, props(fallbacks=SPOT_CANDIDATES, cheapestFirst=True))
    quota(emulator, "us-central1", 0, SPOT_L4)
    quota(emulator, "us-east4", 0, SPOT_L4)
    unreadable_quotas(emulator)  # Google's answers decide
    with pytest.raises(QuotaRefused) as refused:
        provider.create(inputs)
    assert "candidate 1 (us-central1): " in str(refused.value) and "job as written" not in str(refused.value)
    assert any(w.startswith("job trial: candidate 1 (us-central1) refused for quota") and
               w.endswith("trying candidate 2 (us-east4)") for w in logged["warn"]), logged["warn"]


def test_a_placement_on_a_reservation_asks_no_quota_at_create(emulator) -> None:
    """needs_of: a job on a specific reservation's machines asks nothing of the quotas, so nothing is read for it."""
    from gcp_training_jobs.jobspec.load import judge
    from gcp_training_jobs.resources.training_job.quota import AtCreate

    h100 = {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8,
            "reservationAffinity": {"reservationAffinityType": "SPECIFIC_RESERVATION",
                                    "key": "compute.googleapis.com/reservation-name",
                                    "values": ["projects/my-proj/zones/us-central1-a/reservations/h100-res"]}}
    facts = judge({"workerPoolSpecs": [{"machineSpec": h100, "replicaCount": "1", "containerSpec": {
        "imageUri": "us-docker.pkg.dev/p/r/t:1"}}]}, region="us-central1").checked().facts
    quota(emulator, "us-central1", 0, "custom_model_training_nvidia_h100_gpus")
    said: list[str] = []
    at_create = AtCreate("my-proj", emulator.url, "trial", say=said.append, note=said.append, debug=said.append)
    assert at_create.over(facts, 0) == ()
    assert said == [] and emulator.state.requests("quotaInfos.list") == [] and held_reads(emulator) == []


def test_a_live_job_at_any_placement_is_adopted_never_doubled(provider, emulator) -> None:
    inputs = checked(provider, props(fallbacks=FALLBACK_EAST))
    quota(emulator, "us-central1", 0)
    first = dict(provider.create(inputs).outs)
    emulator.state.quota_limits.clear()  # capacity is back; a run that lost its state creates again
    again = dict(provider.create(inputs).outs)
    assert again["jobId"] == first["jobId"] and len(emulator.state.jobs()) == 1


# -- run semantics ---------------------------------------------------------------------------------------------

def test_a_stocked_out_job_with_a_fallback_ends_succeeded_there_in_the_same_up(provider, emulator, logged) -> None:
    emulator.state.add_stockout("us-central1", "g2-standard-8")
    emulator.state.set_phase_seconds(0)
    outs = created(provider, props(fallbacks=FALLBACK_EAST, waitForCompletion=True))
    assert outs["state"] == "SUCCEEDED" and outs["placement"]["region"] == "us-east1" and outs["retryCount"] == 1
    assert jobs_by_region(emulator) == [("us-central1", "JOB_STATE_FAILED"), ("us-east1", "JOB_STATE_SUCCEEDED")]
    assert logged["error"] == [] and outs.get("waitFailure") is None  # made again: a warning, and the update is green
    assert any("Resources are insufficient in region: us-central1" in w for w in logged["warn"])


def test_without_waiting_the_next_up_reads_the_failure_and_makes_it_again_elsewhere(provider, emulator) -> None:
    emulator.state.add_stockout("us-central1", "g2-standard-8")
    news = props(fallbacks=FALLBACK_EAST)
    outs = created(provider, news)
    assert outs["state"] == "QUEUED"
    emulator.state.set_phase_seconds(0)  # it would run now: no capacity, FAILED before it ran
    diff = provider.diff(outs["resourceName"], outs, checked(provider, news, olds=outs))
    assert diff.replaces == ["state"]
    again = dict(provider.create(checked(provider, news, olds=outs)).outs)  # the engine's replace: create first
    assert again["placement"]["index"] == 1 and again["retryCount"] == 1 and again["state"] == "SUCCEEDED"
    labels = emulator.state.jobs()[-1]["job"]["labels"]
    assert (labels[PLACEMENT_LABEL], labels[RETRY_LABEL]) == ("1", "1")
    assert provider.diff(again["resourceName"], again, checked(provider, news, olds=again)).changes is False


def test_a_user_code_failure_is_kept_and_reported_with_its_replica(provider, emulator, logged) -> None:
    emulator.state.set_phase_seconds(10)
    outs = created(provider, props())
    emulator.state.exit_replica(outs["resourceName"], 1, "workerpool0-0")
    diff = provider.diff(outs["resourceName"], {**outs, "state": "RUNNING"}, props())
    assert diff.changes is False and diff.replaces == []
    (warning,) = [w for w in logged["warn"] if "FAILED" in w]
    assert "the user's code failed, replica workerpool0-0" in warning and "not made again" in warning


def test_a_waited_user_code_failure_fails_the_update_once_and_is_never_run_again(provider, emulator, logged) -> None:
    """The create records the FAILED job with `waitFailure` (TrainingJob raises on it: the update exits non-zero
    after the job is in the state); the next diff is an update in place that clears it, reads the job and makes
    nothing: a failure of the user's code is never made again."""
    emulator.state.set_phase_seconds(0)
    job = l4_job()
    job["labels"]["emulator-outcome"] = "failed"  # the emulator's replica exits 1: the user's code failed
    news = props(job, waitForCompletion=True)
    outs = created(provider, news)
    error = "The replica workerpool0-0 exited with a non-zero status of 1."
    assert outs["state"] == "FAILED" and outs["waitFailure"] == f"training job {outs['jobId']} FAILED: {error}"
    assert any(line.startswith(f"training job {outs['jobId']} FAILED: {error}") for line in logged["error"])
    next_up = checked(provider, news, olds=outs)
    diff = provider.diff(outs["resourceName"], outs, next_up)
    assert diff.changes is True and diff.replaces == []
    updated = dict(provider.update(outs["resourceName"], outs, next_up).outs)
    assert updated["waitFailure"] is None
    assert (updated["jobId"], updated["state"], updated["errorMessage"]) == (outs["jobId"], "FAILED", error)
    assert provider.diff(updated["resourceName"], updated, checked(provider, news, olds=updated)).changes is False
    assert len(emulator.state.requests("customJobs.create")) == 1


def test_a_waited_failure_of_googles_past_its_retries_fails_the_update(provider, emulator) -> None:
    emulator.state.add_stockout("us-central1", "g2-standard-8")
    emulator.state.set_phase_seconds(0)
    outs = created(provider, props(waitForCompletion=True, retries=1))
    assert outs["state"] == "FAILED" and outs["retryCount"] == 1
    assert outs["waitFailure"].startswith(f"training job {outs['jobId']} FAILED: Resources are insufficient")
    assert len(emulator.state.requests("customJobs.create")) == 2


def test_an_infrastructure_failure_is_made_again_up_to_retries(provider, emulator, logged) -> None:
    news = props(retries=1)
    outs = created(provider, news)
    emulator.state.fail_job(outs["resourceName"], "Internal error encountered.", 13)
    assert provider.diff(outs["resourceName"], outs, news).replaces == ["state"]
    second = dict(provider.create(checked(provider, news, olds=outs)).outs)
    assert second["retryCount"] == 1 and second["placement"]["index"] == 0  # same place: not a capacity failure
    emulator.state.fail_job(second["resourceName"], "Internal error encountered.", 13)
    diff = provider.diff(second["resourceName"], second, news)
    assert diff.replaces == [] and diff.changes is False
    assert any("made again 1 time(s)" in w and "retries (1)" in w for w in logged["warn"])


def test_a_job_cancelled_outside_pulumi_is_reported_and_kept(provider, emulator, vertex_client, logged) -> None:
    outs = created(provider, props())
    vertex_client.projects().locations().customJobs().cancel(name=outs["resourceName"], body={}).execute()
    assert provider.diff(outs["resourceName"], outs, props()).changes is False
    assert any("CANCELLED outside Pulumi" in w and "rerun" in w for w in logged["warn"])


def test_rerun_replaces_the_job_with_a_fresh_run_never_adopting_the_old_one(provider, emulator) -> None:
    outs = created(provider, props())
    news = props(rerun="again")
    diff = provider.diff(outs["resourceName"], outs, checked(provider, news, olds=outs))
    assert diff.replaces == ["rerun"]
    fresh = dict(provider.create(checked(provider, news, olds=outs)).outs)
    assert fresh["jobId"] != outs["jobId"]  # the old one is still live: a different pulumi-spec, not adopted
    specs = [e["job"]["labels"][SPEC_LABEL] for e in emulator.state.jobs()]
    assert len(set(specs)) == 2


def test_adding_fallbacks_or_retries_never_replaces_a_running_job(provider, emulator) -> None:
    outs = created(provider, props())
    for change in ({"fallbacks": FALLBACK_EAST}, {"retries": 5}, {"fallbacks": FALLBACK_EAST, "retries": 0}):
        news = checked(provider, props(**change), olds=outs)
        diff = provider.diff(outs["resourceName"], outs, news)
        assert diff.changes is True and diff.replaces == [], change
        updated = provider.update(outs["resourceName"], outs, news).outs
        assert updated["placement"]["index"] == 0 and updated["jobId"] == outs["jobId"]
    assert len(emulator.state.jobs()) == 1 and len(emulator.state.requests("customJobs.create")) == 1


# -- the stack file: fallbacks judged by the same pass as the job ------------------------------------------------

def stack_file(tmp_path: Any, job: dict[str, Any]) -> Any:
    import yaml

    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(yaml.safe_dump({"config": {
        "gcp:project": "my-proj", "gcp:region": "us-central1", "gcp-training-jobs:backend": "vertex",
        "gcp-training-jobs:jobs": {"trial": job}}}))
    return path


def test_a_stack_files_fallbacks_are_judged_at_their_keys(tmp_path) -> None:
    from gcp_training_jobs.jobspec.core.errors import SpecError
    from gcp_training_jobs.resources.settings import load_stack_file

    spec = l4_job()["jobSpec"]
    good = {"jobSpec": spec, "fallbacks": [{"region": "us-east1"}, {"scheduling": {"strategy": "SPOT"}}],
            "retries": 1, "rerun": "first"}
    settings = load_stack_file(stack_file(tmp_path, good), root=tmp_path)
    job = settings.jobs["trial"]
    assert (job.retries, job.rerun) == (1, "first")
    assert [(j.facts.region, j.facts.strategy) for j in job.alternatives] == [
        ("us-east1", None), ("us-central1", "SPOT")]
    bad = {"jobSpec": spec, "fallbacks": [{"region": "us-east1", "machineSpec": {"acceleratorCount": 3}},
                                          {"region": "mars-central1"}, {"zone": "us-east1-b"}], "retries": 11}
    with pytest.raises(SpecError) as error:
        load_stack_file(stack_file(tmp_path, bad), root=tmp_path)
    paths = [p.path for p in error.value.problems]
    assert "gcp-training-jobs:jobs.trial.fallbacks[0].jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount" in paths
    assert "gcp-training-jobs:jobs.trial.fallbacks[1].region" in paths
    assert "gcp-training-jobs:jobs.trial.fallbacks[2].zone" in paths
    assert "gcp-training-jobs:jobs.trial.retries" in paths


def test_the_docs_example_is_a_valid_stack_whose_fallbacks_are_judged(tmp_path) -> None:
    import re
    from pathlib import Path

    from gcp_training_jobs.resources.settings import load_stack_file

    page = (Path(__file__).resolve().parents[1] / "docs" / "capacity-and-cost.md").read_text()
    section = page.split("## When Google has no capacity", 1)[1].split("\n#", 1)[0]
    (block,) = re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)
    import yaml

    jobs = yaml.safe_load(block)["gcp-training-jobs:jobs"]
    settings = load_stack_file(stack_file(tmp_path, jobs["l4-trial"]), root=tmp_path)
    job = settings.jobs["trial"]
    assert [j.facts.region for j in job.alternatives] == ["us-east1", "us-east1", "us-central1"]
    assert (job.retries, job.rerun, job.wait_for_completion) == (3, "2026-11-24", True)


def test_without_credentials_the_quota_check_is_skipped_with_a_note(monkeypatch, logged) -> None:
    """No endpoint override and no Application Default Credentials: nothing is sent anywhere, the preview goes on."""
    from gcp_training_jobs.backends import transport

    monkeypatch.delenv("GCP_TRAINING_JOBS_API_ENDPOINT", raising=False)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/key.json")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    transport.reset_for_tests()
    result = TrainingJobProvider().check({}, props())
    assert result.failures == []
    assert any("quota check skipped" in line and "no credentials" in line for line in logged["info"])
    assert not any("quota check" in line for line in logged["warn"])


def test_a_preempted_spot_job_is_made_again_at_the_same_place(provider, emulator) -> None:
    news = props(l4_job(strategy="SPOT"), fallbacks=FALLBACK_EAST)
    emulator.state.set_phase_seconds(10)
    outs = created(provider, news)
    emulator.state.advance(25)  # RUNNING: it ran, so a preemption is no capacity failure before it ran
    emulator.state.preempt(outs["resourceName"])
    assert provider.diff(outs["resourceName"], {**outs, "state": "RUNNING"}, news).replaces == ["state"]
    again = dict(provider.create(checked(provider, news, olds=outs)).outs)
    assert (again["placement"]["index"], again["retryCount"]) == (0, 1)


def test_placement_cheapest_is_priced_and_guardrailed_at_its_candidates_at_check(provider, logged) -> None:
    """Written on demand in us-central1 ($1.96 in its 2 h, over maxJobCostUsd 1.5), its candidates Spot: the check
    holds the candidates to the cap, not the job as written, and its one cost line prices it at the first candidate
    ($/h) and at the dearest (worst case), naming them as candidates."""
    candidates = [SPOT_CANDIDATES[1], SPOT_CANDIDATES[0]]  # us-east4 SPOT (the cheapest), then us-central1 SPOT
    rails = {"maxJobCostUsd": 1.5}
    assert failures(provider, props(guardrails=rails))  # as written, over the cap
    said = len(logged["info"])
    checked(provider, props(fallbacks=candidates, cheapestFirst=True, guardrails=rails))
    (line,) = [m for m in logged["info"][said:] if m.startswith("job trial: ")]
    assert line.startswith("job trial: $0.50/h (SPOT, at Spot rates)"), line
    assert "worst case $1.22 at its dearest candidate, us-central1 SPOT (2 h)" in line, line
    assert "us-east4 SPOT (the candidate it would take first, placement: cheapest; as written it runs on demand, " \
           "this candidate on Spot)" in line, line
    assert not [m for m in logged["info"][said:] if "fallbacks[" in m], logged["info"]
