"""Once per run (gcp_training_jobs.backends.run_cache): one read per key however many threads ask, answers kept for
max_age on an injected clock, failures kept as answers; and the TrainingJob provider's quota check on it, against the
emulator over real HTTP: many checks in threads read the limits once and each region's live jobs once, and the
cached read stays right while the run creates the stack's jobs (a job outside a stack counts the run's own creates,
noted as they are made, beside that one read)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from gcp_training_jobs.backends.run_cache import RUN, RunCache
from gcp_training_jobs.backends.transport import ApiError
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.resources.training_job import TrainingJobProvider, plan
from tests.conftest_emulator import LIVENESS_SECONDS
from tests.helpers import FakeClock, configured, provider_props

L4 = "custom_model_training_nvidia_l4_gpus"
#: The reads of a region's live jobs (quotas.held: every custom and tuning job there, no label filter).
HELD_READS = ("customJobs.list", "hyperparameterTuningJobs.list")


def gathered(threads: int, work: Callable[[int], Any]) -> list[Any]:
    """`work(i)` for i in range(threads), all at once, in a pool of that many threads."""
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(work, range(threads), timeout=LIVENESS_SECONDS))


# -- the cache -------------------------------------------------------------------------------------------------

def test_many_threads_asking_for_a_key_read_it_once_per_key() -> None:
    """The reads wait until all the threads have asked (together they take one permit per thread): a cache
    without its lock would let each thread that asked meanwhile start a read of its own."""
    cache, threads, regions = RunCache(), 32, 4
    reads: dict[str, int] = {}
    asked = threading.Semaphore(0)
    counted = threading.Lock()

    def read(region: str) -> str:
        with counted:
            reads[region] = reads.get(region, 0) + 1
        for _ in range(threads // regions):
            assert asked.acquire(timeout=LIVENESS_SECONDS)
        return f"limits of {region}"

    def check(i: int) -> str:
        region = f"region-{i % regions}"
        asked.release()
        return cache.once(("held", region), lambda: read(region))

    answers = gathered(threads, check)
    assert answers == [f"limits of region-{i % regions}" for i in range(threads)]
    assert reads == {f"region-{r}": 1 for r in range(regions)}


def test_an_answer_is_kept_for_max_age_on_the_injected_clock_then_read_again() -> None:
    clock = FakeClock()
    cache = RunCache(max_age=120.0, clock=clock.time)
    reads: list[float] = []

    def read() -> int:
        reads.append(clock.now)
        return len(reads)

    assert cache.once("limits", read) == 1
    clock.sleep(120.0)
    assert cache.once("limits", read) == 1  # as old as max_age: still this run's
    clock.sleep(0.5)
    assert cache.once("limits", read) == 2  # older: read again
    assert cache.once("other", read) == 3  # another key, its own read
    cache.clear()
    assert cache.once("limits", read) == 4
    assert reads == [0.0, 120.5, 120.5, 120.5]


def test_notes_since_an_answer_are_those_made_after_its_read_began_kept_for_max_age() -> None:
    """A note made before an answer's read is in the read: not given with it; one made after is, until the answer is
    read again (then it is in the new read) or the note grows older than max_age; clear forgets notes too."""
    clock = FakeClock()
    cache = RunCache(max_age=120.0, clock=clock.time)
    cache.note("made", "before")
    clock.sleep(1.0)
    first = cache.once_since("held", lambda: "read at 1", "made")
    assert (first.value, first.noted) == ("read at 1", ())
    cache.note("made", "a")
    clock.sleep(1.0)
    cache.note("made", "b")
    cache.note("other", "c")
    assert cache.once_since("held", lambda: "unread", "made") == first.__class__("read at 1", ("a", "b"))
    clock.sleep(119.5)  # the answer (read at 1) is past max_age: read again, holding a and b itself
    again = cache.once_since("held", lambda: "read at 121.5", "made")
    assert (again.value, again.noted) == ("read at 121.5", ())
    cache.note("made", "d")
    clock.sleep(121.0)  # past max_age: a, b and d forgotten, and the answer read again
    assert cache.once_since("held", lambda: "read at 242.5", "made").noted == ()
    cache.note("made", "e")
    cache.clear()
    assert cache.once_since("held", lambda: "after clear", "made").noted == ()


def test_a_failure_is_an_answer_until_it_is_read_again() -> None:
    clock = FakeClock()
    cache = RunCache(max_age=60.0, clock=clock.time)
    calls: list[int] = []

    def refused() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise PermissionError("permission denied")
        return 7

    for _ in range(3):
        with pytest.raises(PermissionError, match="permission denied"):
            cache.once("limits", refused)
    assert len(calls) == 1  # every job of the run meets the same refusal, without asking again
    clock.sleep(61.0)
    assert cache.once("limits", refused) == 7


def test_each_caller_of_a_failed_read_gets_its_own_exception_with_the_same_words() -> None:
    """Threads waiting on one read that fails each raise an exception of their own (one object raised in every
    thread would have them write one traceback at once), of the failure's type, words and attributes."""
    cache, threads = RunCache(), 4
    asked = threading.Semaphore(0)

    def refused() -> int:
        for _ in range(threads - 1):  # every other thread is waiting on this read when it fails
            assert asked.acquire(timeout=LIVENESS_SECONDS)
        raise ApiError(403, "PERMISSION_DENIED", "quota read denied", method="quotaInfos.list")

    def check(_: int) -> BaseException:
        asked.release()
        try:
            cache.once("limits", refused)
        except ApiError as error:
            return error
        raise AssertionError("the failed read raised nothing")

    raised = gathered(threads, check)
    assert len({id(error) for error in raised}) == threads
    assert {(type(e), str(e), e.status, e.reason, e.method) for e in raised} == {
        (ApiError, "quotaInfos.list: HTTP 403 PERMISSION_DENIED: quota read denied", 403, "PERMISSION_DENIED",
         "quotaInfos.list")}
    (cached,) = {id(e.__cause__): e.__cause__ for e in raised}.values()  # each made from the one failure kept
    assert isinstance(cached, ApiError) and all(e is not cached for e in raised)


def test_an_interrupted_read_is_not_kept() -> None:
    cache = RunCache()

    def interrupted() -> int:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cache.once("limits", interrupted)
    assert cache.once("limits", lambda: 5) == 5


# -- the provider's quota check on it ----------------------------------------------------------------------------

def l4_job(region: str = "us-central1") -> dict[str, Any]:
    """One L4 in `region`: a job as a stack file writes it, and as TrainingJob's `job` input carries it."""
    return {"jobSpec": {"workerPoolSpecs": [
        {"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1},
         "replicaCount": "1", "containerSpec": {"imageUri": "us-docker.pkg.dev/my-proj/trainers/train:1"}}],
        "scheduling": {"timeout": "7200s"}}, "region": region}


def l4_news(name: str, stack: str = "dev", region: str = "us-central1") -> dict[str, Any]:
    """A TrainingJob's inputs: one L4 in `region`, of stack `stack`."""
    return provider_props(l4_job(region), name=name, identity=f"org/proj/{stack}/{name}")


@pytest.fixture
def provider_clock() -> FakeClock:
    return FakeClock()


def reasons(provider: TrainingJobProvider, news: dict[str, Any]) -> list[str]:
    return [f.reason for f in provider.check({}, news).failures]


def reads(emulator: Emulator) -> dict[str, int]:
    """How many times the limits and the live jobs were read, per region."""
    found: dict[str, int] = {"limits": len(emulator.state.requests("quotaInfos.list"))}
    for method in HELD_READS:
        for request in emulator.state.requests(method):
            if not request["query"].get("filter"):  # a lookup of one resource's job filters by its label
                key = f"{method} {request['path'].split('/')[5]}"
                found[key] = found.get(key, 0) + 1
    return found


def test_concurrent_checks_read_the_limits_once_and_each_regions_jobs_once(provider, emulator, monkeypatch) -> None:
    """As the engine calls the provider: a new provider object per call (it is unpickled for each), from several
    threads; the checks of one run of 40 jobs in two regions read the limits once and each region's jobs once."""
    for region in ("us-central1", "us-east1"):
        emulator.state.set_quota(L4, region, 40)
    stack = {f"job-{i:02}": l4_job(("us-central1", "us-east1")[i % 2]) for i in range(40)}

    def check(i: int) -> list[str]:
        fresh = configured(FakeClock().drive(TrainingJobProvider()), stack)
        return reasons(fresh, l4_news(f"job-{i:02}", region=("us-central1", "us-east1")[i % 2]))

    judged = []
    real = plan._judged
    monkeypatch.setattr(plan, "_judged", lambda config: judged.append(1) or real(config))
    assert gathered(40, check) == [[]] * 40
    assert judged == [1], "the stack's config judged once per run"
    assert reads(emulator) == {"limits": 1, **{f"{m} {r}": 1 for m in HELD_READS for r in ("us-central1", "us-east1")}}


def in_order(provider: TrainingJobProvider, *names: str) -> TrainingJobProvider:
    """`provider` configured for a stack of these jobs (named in the stack's order), one L4 each in us-central1."""
    return configured(provider, {name: l4_job() for name in names})


def test_the_stacks_own_creates_leave_a_cached_read_right(provider, emulator) -> None:
    """Two checks of one run with a job of the stack created between them: the second answers as a fresh read
    would (the stack's live jobs are taken out by their label and its needs counted instead), without reading."""
    emulator.state.set_quota(L4, "us-central1", 3)
    in_order(provider, "a", "b", "c")  # stack dev's jobs, one L4 each
    assert reasons(provider, l4_news("a")) == []
    provider.create(provider.check({}, l4_news("a")).inputs)
    before = reads(emulator)
    assert reasons(provider, l4_news("b")) == []
    assert reads(emulator) == before  # the run's answer, not read again
    RUN.clear()  # what a fresh read says: the same
    assert reasons(provider, l4_news("b")) == []
    over = in_order(TrainingJobProvider(), "a", "b", "bb", "c")
    (cached,) = reasons(over, l4_news("c"))
    RUN.clear()
    assert reasons(over, l4_news("c")) == [cached]
    # a, live, is counted as what it holds, not as new: each job once
    assert "c needs 1, the stack's earlier new jobs there take 2, live jobs hold 1, the limit is 3" in cached


def test_a_job_without_a_stack_counts_the_runs_own_creates_without_reading_again(provider, emulator) -> None:
    """Without a stack nothing takes the run's own creates out of the run's read: each create is noted, and a job
    alone is placed beside the read and the run's creates since, so a job created between two checks counts, once,
    and the region's jobs are read once for the run (read anew for each check, they were listed and judged once per
    job). What a fresh read says is the same."""
    emulator.state.set_quota(L4, "us-central1", 2)
    assert reasons(provider, l4_news("a")) == []
    provider.create(provider.check({}, l4_news("a")).inputs)
    assert reasons(provider, l4_news("b")) == []
    provider.create(provider.check({}, l4_news("b")).inputs)
    (reason,) = reasons(provider, l4_news("c"))
    assert "c needs 1, the stack's earlier new jobs there take 0, live jobs hold 2, the limit is 2" in reason
    assert reads(emulator) == {"limits": 1, **{f"{m} us-central1": 1 for m in HELD_READS}}
    RUN.clear()  # a fresh read: the same verdict, each job counted once (live, not noted again)
    assert reasons(provider, l4_news("c")) == [reason]


def test_a_job_the_run_waited_for_holds_nothing_after_it_ended(provider, emulator) -> None:
    """A job alone made and waited for until it ended is noted as ended: the next job's check no longer counts it
    (as a fresh read would not: it holds no quota)."""
    fake = FakeClock(then=emulator.state.advance)
    fake.drive(provider)
    emulator.state.set_phase_seconds(60)
    emulator.state.set_quota(L4, "us-central1", 1)
    first = l4_news("a") | {"waitForCompletion": True, "waitTimeoutSeconds": 3600}
    assert provider.create(provider.check({}, first).inputs).outs["state"] == "SUCCEEDED"
    assert reasons(provider, l4_news("b")) == []
    assert reads(emulator) == {"limits": 1, **{f"{m} us-central1": 1 for m in HELD_READS}}


def test_the_stacks_config_is_judged_in_the_provider_as_the_program_judges_it(provider) -> None:
    """The config `configure` is given (secrets decrypted, unmarked): the stack's jobs in its order, each at its
    placements (settings.quota.askers); an encrypted credential in it (decrypted here)
    is not refused as plain text, and a config that does not judge asks nothing (each job alone)."""
    job = {**l4_job("us-east1"), "fallbacks": [{"region": "us-central1"}]}
    token = "ghp_" + "a1" * 18  # as `pulumi config set --secret --path` would have stored it, decrypted
    job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["env"] = [{"name": "HF_TOKEN", "value": token}]
    jobs = {"b": l4_job(), "a": job}
    configured(provider, jobs)
    found = plan.asks_of(provider.stack_config)
    assert [a.name for a in found.askers] == ["a", "b"]
    assert [p.region for p in found.asker("a").placements] == ["us-east1", "us-central1"]  # type: ignore[union-attr]
    assert found.asker("b").placements[0].needs.units == {L4: 1}  # type: ignore[union-attr]
    configured(provider, {"a": {"jobSpec": {"workerPoolSpecs": "not a list"}}})
    assert plan.asks_of(provider.stack_config) == plan.NO_STACK
