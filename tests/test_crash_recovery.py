"""At most one live job per resource, whatever dies when: the provider against the emulator over real HTTP.

A "run" here is what one `pulumi up` does for a resource: check, then create. A run that died after its
create reached the API leaves a live job and no state; the next run must find and adopt it. A create whose
answer is unknown is never sent again blindly, on either backend.

Nothing here is timed: the provider's lifecycle runs on a fake clock (its retries and reconcile window are
counted in sleeps), and a create that lands late is held by the emulator until the test lets it go.
"""

from __future__ import annotations

from typing import Any

import pytest

from gcp_training_jobs.backends import transport
from gcp_training_jobs.backends.lifecycle import CreateOutcomeUnknown, Jobs, LookupFailed
from gcp_training_jobs.backends.transport import RetryPolicy
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.resources.training_job import TrainingJobProvider
from tests.conftest_emulator import HeldDelays
from tests.helpers import FakeClock, provider_props

BACKENDS = ["ai-platform", "vertex"]
CREATE = {"ai-platform": "jobs.create", "vertex": "customJobs.create"}
LIST = {"ai-platform": "jobs.list", "vertex": "customJobs.list"}
GET = {"ai-platform": "jobs.get", "vertex": "customJobs.get"}
LIVE = {"QUEUED", "PREPARING", "RUNNING", "JOB_STATE_QUEUED", "JOB_STATE_PENDING", "JOB_STATE_RUNNING"}
#: The reconcile window, in the fake clock's seconds; the retries' first back-off.
PATIENCE, BASE = 30.0, 0.001
#: The client's HTTP timeout: a held create times out after it (real time, but it only decides how long the
#: test waits; any call the emulator is not holding answers well within it, even on a busy machine).
HTTP_TIMEOUT = "1.0"


def job(count: int = 1, **labels: str) -> dict[str, Any]:
    """A container job both backends take (its code is in the image)."""
    spec: dict[str, Any] = {"trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "n1-standard-8", "region": "us-central1",
        "masterConfig": {"imageUri": "us-docker.pkg.dev/my-proj/trainers/resnet:1.0",
                         "acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": str(count)}},
        "jobDir": "gs://my-job-dir/jobs/resnet",
    }}
    if labels:
        spec["labels"] = labels
    return spec


def props(backend: str, spec: dict[str, Any] | None = None, identity: str = "org/proj/dev/resnet") -> dict[str, Any]:
    return provider_props(spec or job(), backend=backend, identity=identity)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def provider_clock(clock: FakeClock) -> FakeClock:
    """The provider's lifecycle on the fake clock."""
    return clock


@pytest.fixture
def provider_env() -> dict[str, str]:
    return {"GCP_TRAINING_JOBS_RETRY_BASE_SECONDS": str(BASE), "GCP_TRAINING_JOBS_RECONCILE_SECONDS": str(PATIENCE)}


def run(provider: TrainingJobProvider, backend: str, spec: dict[str, Any] | None = None,
        identity: str = "org/proj/dev/resnet") -> dict[str, Any]:
    """One `pulumi up` of the resource with no state: check, then create; its outputs."""
    result = provider.check({}, props(backend, spec, identity))
    assert result.failures == [], [(f.property, f.reason) for f in result.failures]
    return dict(provider.create(dict(result.inputs)).outs)


def live(emulator: Emulator) -> list[dict[str, Any]]:
    return [j for j in emulator.state.jobs() if j["job"]["state"] in LIVE]


def assert_backed_off_for(sleeps: list[float], patience: float) -> None:
    """The reconcile's sleeps, each lookup after the first: doubling from the retries' base (capped), the last
    cut to what was left of the window, and together exactly the window."""
    policy = RetryPolicy(base_seconds=BASE)
    assert sleeps[0] == BASE and len(sleeps) >= 3, sleeps
    for before, after in zip(sleeps[:-2], sleeps[1:-1], strict=True):
        assert after == min(policy.cap_seconds, before * 2), sleeps
    assert 0 < sleeps[-1] <= min(policy.cap_seconds, sleeps[-2] * 2), sleeps
    assert sum(sleeps) == pytest.approx(patience)


def clear_faults(emulator: Emulator, method: str) -> None:
    while emulator.state.pending_faults():
        emulator.state.take_faults(method)


# -- a run that died ---------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_a_live_job_left_by_a_dead_run_is_adopted_not_doubled(provider, emulator, backend) -> None:
    dead = run(provider, backend)  # its create reached the API; its state was never written
    again = run(provider, backend)
    assert len(emulator.state.jobs()) == 1
    assert len(emulator.state.requests(CREATE[backend])) == 1
    assert (again["jobId"], again["resourceName"]) == (dead["jobId"], dead["resourceName"])
    assert again["state"] == "QUEUED"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_finished_job_of_an_earlier_incarnation_is_never_adopted(provider, emulator, backend) -> None:
    first = run(provider, backend)
    emulator.state.set_phase_seconds(0)  # it runs to the end
    assert live(emulator) == []
    emulator.state.set_phase_seconds(1e9)
    second = run(provider, backend)
    assert second["jobId"] != first["jobId"]
    assert len(emulator.state.requests(CREATE[backend])) == 2
    assert len(live(emulator)) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_only_a_job_of_the_same_resource_and_spec_is_adopted(provider, emulator, backend) -> None:
    mine = run(provider, backend)
    other_resource = run(provider, backend, identity="org/proj/dev/other")
    other_spec = run(provider, backend, job(count=2))
    assert len({mine["jobId"], other_resource["jobId"], other_spec["jobId"]}) == 3
    assert len(live(emulator)) == 3


def test_a_vertex_label_change_is_a_new_job_not_an_adoption(provider, emulator) -> None:
    first = run(provider, "vertex")
    relabelled = run(provider, "vertex", job(team="vision"))
    assert relabelled["jobId"] != first["jobId"] and len(live(emulator)) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_failing_lookup_before_create_creates_nothing(provider, emulator, backend) -> None:
    emulator.state.inject_faults(status=503, count=100, method=LIST[backend])
    with pytest.raises(LookupFailed, match="nothing was created: run `pulumi up` again"):
        run(provider, backend)
    assert emulator.state.requests(CREATE[backend]) == []


# -- a create whose outcome is unknown ----------------------------------------------------------------

def label_lookups(emulator: Emulator) -> list[dict[str, Any]]:
    """The lookups of this resource's job by its identity labels (not the check's read of what the region's live jobs
    hold, a list of its own, once per run)."""
    return [r for r in emulator.state.requests("customJobs.list")
            if "pulumi-resource" in str((r.get("query") or {}).get("filter", ""))]


@pytest.mark.parametrize("status", [500, 503])
def test_a_vertex_create_answered_5xx_is_never_sent_again(provider, emulator, clock, status) -> None:
    emulator.state.inject_faults(status=status, count=1, method="customJobs.create")
    with pytest.raises(CreateOutcomeUnknown) as caught:
        run(provider, "vertex")
    message = str(caught.value)
    assert "outcome is unknown" in message and f"HTTP {status}" in message
    assert f"for {PATIENCE:g}s (not found yet)" in message
    assert "It was not sent again; the next `pulumi up` will look for it again" in message
    assert "pulumi-resource=" in message and "pulumi-spec=" in message
    assert len(emulator.state.requests("customJobs.create")) == 1
    # Looked for it with backoff for the whole window, by the provider's clock: once before the create,
    # then once at the start of the window and once after each sleep.
    assert_backed_off_for(clock.sleeps, PATIENCE)
    assert len(label_lookups(emulator)) == 1 + 1 + len(clock.sleeps)
    run(provider, "vertex")  # the next run: nothing was made, so it creates the job
    assert len(emulator.state.jobs()) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lookup_that_keeps_failing_fails_the_create_loudly_and_the_next_run_adopts(
        provider, emulator, monkeypatch, clock, backend) -> None:
    """The answer of the create is lost (the job exists), then every lookup fails, each retried, for the whole
    reconcile window."""
    emulator.state.drop_next_response(method=CREATE[backend])
    lookup = GET[backend] if backend == "ai-platform" else LIST[backend]  # by id where ids are the caller's
    original = transport.execute_once
    before: list[int] = []  # the lookups made before the create (the label lookup on Vertex)

    def create_then_break_lookups(request: Any, endpoint: str, method: str) -> Any:
        try:
            return original(request, endpoint, method)
        finally:
            if method.endswith(".create"):
                before.append(len(emulator.state.requests(lookup)))
                emulator.state.inject_faults(status=503, count=10_000, method=lookup)

    monkeypatch.setattr(transport, "execute_once", create_then_break_lookups)
    inputs = dict(provider.check({}, props(backend)).inputs)
    with pytest.raises(CreateOutcomeUnknown, match="the lookup failed: .*HTTP 503"):
        provider.create(inputs)
    failed_lookups = len(emulator.state.requests(lookup)) - before[0]
    attempts = RetryPolicy().attempts
    assert failed_lookups % attempts == 0 and failed_lookups // attempts >= 3  # each retried; several rounds
    assert clock.now >= PATIENCE  # it gave up when the window had passed by the provider's clock, not before
    assert len(clock.sleeps) == failed_lookups - 1  # a sleep between any two lookups, none after the last
    (made,) = emulator.state.jobs()  # the job exists; the run failed loudly
    clear_faults(emulator, lookup)
    monkeypatch.setattr(transport, "execute_once", original)
    again = run(provider, backend)
    assert again["resourceName"] == made["name"]
    assert len(emulator.state.jobs()) == 1
    assert len(emulator.state.requests(CREATE[backend])) == 1


def test_a_slow_vertex_create_past_the_client_timeout_is_adopted_once_it_lands(
        provider, emulator, monkeypatch, clock, held_delays: HeldDelays):
    """The server finishes the create after the client gave up: the label lookup finds nothing at first,
    then the job; it is adopted, never created again."""
    monkeypatch.setenv("GCP_TRAINING_JOBS_HTTP_TIMEOUT_SECONDS", HTTP_TIMEOUT)
    emulator.state.inject_delay(2.0, count=1, method="customJobs.create")
    clock.then = lambda _: held_delays.release()  # the create lands while the reconcile sleeps the first time
    outs = run(provider, "vertex")
    (made,) = emulator.state.jobs()
    assert held_delays.seconds == [2.0]
    assert outs["resourceName"] == made["name"]
    assert len(emulator.state.requests("customJobs.create")) == 1
    # Before the create; after it timed out (not there yet); after the sleep it landed in (adopted).
    assert len(label_lookups(emulator)) == 3
    assert clock.sleeps == [BASE]


def test_a_vertex_create_still_unknown_when_patience_ends_is_adopted_by_the_next_run(
        provider, emulator, monkeypatch, clock, held_delays: HeldDelays):
    monkeypatch.setenv("GCP_TRAINING_JOBS_HTTP_TIMEOUT_SECONDS", HTTP_TIMEOUT)
    emulator.state.inject_delay(2.0, count=1, method="customJobs.create")
    with pytest.raises(CreateOutcomeUnknown, match="not found yet"):
        run(provider, "vertex")  # the create is held past the whole window
    assert emulator.state.jobs() == []
    assert_backed_off_for(clock.sleeps, PATIENCE)
    held_delays.release()  # the server finishes it after all
    assert len(emulator.state.jobs()) == 1
    outs = run(provider, "vertex")
    (made,) = emulator.state.jobs()
    assert outs["resourceName"] == made["name"]
    assert len(emulator.state.requests("customJobs.create")) == 1


def test_a_slow_ml_create_is_resent_under_its_own_id_only(provider, emulator, monkeypatch,
                                                          held_delays: HeldDelays) -> None:
    """ml v1 ids are the caller's: after a timeout the job is looked up by its id and the create re-sent
    with the same id, which can never make a second job (the late first copy meets a 409)."""
    monkeypatch.setenv("GCP_TRAINING_JOBS_HTTP_TIMEOUT_SECONDS", HTTP_TIMEOUT)
    emulator.state.inject_delay(1.5, count=1, method="jobs.create")
    outs = run(provider, "ai-platform")
    creates = emulator.state.requests("jobs.create")
    assert len(creates) == 2
    assert len(emulator.state.requests("jobs.get")) == 1  # looked up by its id between the two: absent
    held_delays.release()  # the late first copy reaches the emulator's handler now
    assert held_delays.seconds == [1.5]
    (made,) = emulator.state.jobs()
    assert made["job"]["jobId"] == outs["jobId"]


def test_several_live_jobs_of_one_resource_are_reported_and_one_adopted(provider, emulator, monkeypatch) -> None:
    logged: list[str] = []
    monkeypatch.setattr("gcp_training_jobs.resources.training_job.pulumi.log.info",
                        lambda msg, *_, **__: logged.append(msg))
    real, blind = Jobs.find_all, {"on": True}  # the lookup before a create (find_live reads find_all too)
    monkeypatch.setattr(Jobs, "find_all", lambda self, labels: [] if blind["on"] else real(self, labels))
    first, second = run(provider, "vertex"), run(provider, "vertex")  # a duplicate, as older versions made
    blind["on"] = False
    adopted = run(provider, "vertex")
    assert adopted["jobId"] == first["jobId"]  # the oldest
    assert any(second["jobId"] in line and "cancel them" in line for line in logged), logged
    assert len(emulator.state.jobs()) == 2


def test_import_is_refused_with_the_way_that_works() -> None:
    """The engine reads an imported dynamic resource without its pickled provider; say so, not KeyError."""
    import pulumi

    from gcp_training_jobs.resources.training_job import TrainingJob

    with pytest.raises(pulumi.RunError, match=r"import_ cannot work .*KeyError '__provider'.*adopted by its labels"):
        TrainingJob("resnet", project="my-proj", job=job(), opts=pulumi.ResourceOptions(import_="projects/p/jobs/x"))
