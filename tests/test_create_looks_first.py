"""A create is sent again only after a look, nothing is sent for an engine that is gone, and only the job the stack
declares is adopted: the provider and its lifecycle against the emulator over real HTTP, on a fake clock.

- every retry of a create (after a rate-limit 429, a 5xx, a lost answer) looks for a job with the resource's
  identity first, on both backends: a job another run made meanwhile is adopted, never doubled;
- the transport never sends a create again on its own;
- the guard runs right before each create, cancel and delete: a guard that stops sends nothing;
- a live job with a stack job's identity labels and another body (an image of docker.io) is not adopted: the create
  fails naming it and the fields that differ, nothing is created beside it, it is not cancelled; a refresh (read)
  of it fails the same way; a job made at a fallback is compared with that fallback, and adopted.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gcp_training_jobs.backends import backend_for, transport
from gcp_training_jobs.backends.base import Target
from gcp_training_jobs.backends.body_match import differences
from gcp_training_jobs.backends.lifecycle import Jobs, LookupFailed, NotDeclared
from gcp_training_jobs.backends.transport import RetryPolicy
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.resources.training_job import TrainingJobProvider
from tests.helpers import FakeClock, provider_props

BACKENDS = ["ai-platform", "vertex"]
CREATE = {"ai-platform": "jobs.create", "vertex": "customJobs.create"}
LIST = {"ai-platform": "jobs.list", "vertex": "customJobs.list"}
LIVE = {"QUEUED", "PREPARING", "RUNNING", "JOB_STATE_QUEUED", "JOB_STATE_PENDING", "JOB_STATE_RUNNING"}
IMAGE = "us-docker.pkg.dev/my-proj/trainers/resnet:1.0"
IMPOSTOR_IMAGE = "docker.io/someone/miner:latest"


def job(image: str = IMAGE) -> dict[str, Any]:
    return {"trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "n1-standard-8", "region": "us-central1",
        "masterConfig": {"imageUri": image, "acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "1"}},
        "jobDir": "gs://my-job-dir/jobs/resnet"}}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def provider_clock(clock: FakeClock) -> FakeClock:
    return clock


@pytest.fixture
def provider_env() -> dict[str, str]:
    return {"GCP_TRAINING_JOBS_RETRY_BASE_SECONDS": "0.001", "GCP_TRAINING_JOBS_RECONCILE_SECONDS": "30"}


def run(provider: TrainingJobProvider, backend: str, spec: dict[str, Any] | None = None,
        **extra: Any) -> dict[str, Any]:
    """One `pulumi up` of the resource with no state: check, then create; its outputs."""
    result = provider.check({}, provider_props(spec or job(), backend=backend, **extra))
    assert result.failures == [], [(f.property, f.reason) for f in result.failures]
    return dict(provider.create(dict(result.inputs)).outs)


def live(emulator: Emulator) -> list[dict[str, Any]]:
    return [j for j in emulator.state.jobs() if j["job"]["state"] in LIVE]


def another_run(emulator: Emulator, backend: str) -> dict[str, Any]:
    """What a second `up` of the same resource does meanwhile (its own provider and clock): its outputs."""
    other = FakeClock().drive(TrainingJobProvider())
    return run(other, backend)


# -- every retry looks again first ----------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("status", [429, 503])
def test_a_job_made_meanwhile_by_another_run_is_adopted_before_a_create_is_sent_again(
        provider, emulator, monkeypatch, backend, status) -> None:
    emulator.state.inject_faults(status=status, count=1, method=CREATE[backend])
    made: list[dict[str, Any]] = []
    look_again = Jobs._look_again

    def meanwhile(self: Jobs, *args: Any, **kwargs: Any) -> Any:  # between the failed create and the look
        if not made:
            made.append(another_run(emulator, backend))
        return look_again(self, *args, **kwargs)

    monkeypatch.setattr(Jobs, "_look_again", meanwhile)
    outs = run(provider, backend)
    assert made and outs["jobId"] == made[0]["jobId"]  # adopted, not doubled
    assert len(live(emulator)) == 1
    assert len(emulator.state.requests(CREATE[backend])) == 2  # the refused one and the other run's


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_rate_limited_create_is_sent_again_after_a_look_that_finds_nothing(provider, emulator, backend) -> None:
    emulator.state.inject_faults(status=429, count=2, method=CREATE[backend])
    before = len(emulator.state.requests(LIST[backend]))
    outs = run(provider, backend)
    lists = [r for r in emulator.state.requests() if r["method"] in (LIST[backend], CREATE[backend])][before:]
    order = [r["method"] for r in lists]
    # the look before the create, then each create refused is followed by a look before the next one
    assert order[-5:] == [CREATE[backend], LIST[backend], CREATE[backend], LIST[backend], CREATE[backend]], order
    assert [j["job"]["state"] for j in live(emulator)] and outs["state"] == "QUEUED"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_look_that_fails_before_a_retry_sends_nothing_again(provider, emulator, clock, backend) -> None:
    emulator.state.inject_faults(status=429, count=1, method=CREATE[backend])
    clock.then = lambda _: emulator.state.inject_faults(status=503, count=100, method=LIST[backend])
    with pytest.raises(LookupFailed, match="nothing was sent again"):
        run(provider, backend)
    assert len(emulator.state.requests(CREATE[backend])) == 1
    assert emulator.state.jobs() == []


def test_the_transport_never_sends_a_create_again_on_its_own(emulator) -> None:
    for method in ("aiplatform.create", "customJobs.create", "reservations.insert"):
        with pytest.raises(ValueError, match="never retried by the transport"):
            transport.call(lambda: None, emulator.url, method)
    assert emulator.state.requests() == []


# -- the guard before every create, cancel and delete ---------------------------------------------------------

class Gone(Exception):
    """What a test's guard raises where the watch would end the process."""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_guard_that_stops_sends_no_create_cancel_or_delete(emulator, backend) -> None:
    target = Target("my-proj", "us-central1", emulator.url)
    chosen = backend_for(backend, job())
    made = Jobs(chosen, target, policy=RetryPolicy(base_seconds=0.001)).create(
        "resnet_1", _body(backend), {"pulumi-resource": "r1", "pulumi-spec": "s1"})
    name = chosen.name_of(target, chosen.job_id_of(made) or "resnet_1", made)
    seen = len(emulator.state.requests())
    calls: list[str] = []

    def gone() -> None:
        calls.append("guard")
        raise Gone

    guarded = Jobs(chosen, target, policy=RetryPolicy(base_seconds=0.001), guard=gone)
    with pytest.raises(Gone):
        guarded.create("resnet_2", _body(backend, "resnet_2"), {"pulumi-resource": "r2", "pulumi-spec": "s2"})
    with pytest.raises(Gone):
        guarded.stop(name)
    sent = [r["method"] for r in emulator.state.requests()[seen:]]
    assert not [m for m in sent if m.endswith((".create", ".cancel", ".delete"))], sent
    assert calls == ["guard", "guard"] and len(live(emulator)) == 1


def _body(backend: str, job_id: str = "resnet_1") -> dict[str, Any]:
    from gcp_training_jobs.jobspec.load import judge

    return judge(job(), backend=backend, job_id=job_id, rules=False).checked().body_for(job_id)


# -- adopt only what the stack declared -------------------------------------------------------------------------

def impostor(emulator: Emulator, backend: str, genuine: dict[str, Any], change: Any) -> dict[str, Any]:
    """A job made outside Pulumi with the genuine job's labels (identity and all) and `change` made to its body;
    the genuine job cancelled, so that the impostor is the one live job carrying the resource's identity."""
    target = Target("my-proj", "us-central1", emulator.url)
    chosen = backend_for(backend, job())
    jobs = Jobs(chosen, target, policy=RetryPolicy(base_seconds=0.001))
    body = {k: copy.deepcopy(v) for k, v in genuine.items() if k in ("labels", "jobSpec", "trainingInput",
                                                                     "displayName")}
    if backend == "ai-platform":
        body["jobId"] = genuine["jobId"] + "x"
    change(body)
    made = jobs.create(body.get("jobId") or "impostor", body, {"pulumi-resource": "none"}, looked_up=True)
    jobs.stop(chosen.name_of(target, genuine.get("jobId", ""), genuine))
    return made


def image_of(body: dict[str, Any]) -> dict[str, Any]:
    """Where a body names its image (a trainingInput's master, a CustomJob's first pool)."""
    if "trainingInput" in body:
        return body["trainingInput"]["masterConfig"]  # type: ignore[no-any-return]
    return body["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_job_with_the_stacks_labels_and_another_image_is_never_adopted(provider, emulator, backend) -> None:
    first = run(provider, backend)
    genuine = next(j["job"] for j in emulator.state.jobs() if first["jobId"] in str(j["job"]))
    fake = impostor(emulator, backend, genuine, lambda b: image_of(b).update(imageUri=IMPOSTOR_IMAGE))
    creates = len(emulator.state.requests(CREATE[backend]))
    cancels = len(emulator.state.requests(CREATE[backend].replace("create", "cancel")))
    with pytest.raises(NotDeclared) as caught:
        run(provider, backend)
    message = str(caught.value)
    fake_id = backend_for(backend, job()).job_id_of(fake)
    assert fake_id in message and "not the job the stack declares" in message
    assert "imageUri" in message and IMPOSTOR_IMAGE in message and IMAGE in message
    assert "not cancelled" in message
    assert len(emulator.state.requests(CREATE[backend])) == creates  # nothing created beside it
    assert len(emulator.state.requests(CREATE[backend].replace("create", "cancel"))) == cancels  # not cancelled
    assert [backend_for(backend, job()).job_id_of(j["job"]) for j in live(emulator)] == [fake_id]  # it runs on


def test_a_refresh_of_an_impostor_in_the_state_is_never_unchanged(provider, emulator) -> None:
    outs = run(provider, "vertex")
    resource_name = outs["resourceName"]
    props = provider_props(job(), backend="vertex")
    assert provider.read(resource_name, {**props, **outs}).id == resource_name  # the genuine one reads
    genuine = next(j["job"] for j in emulator.state.jobs() if j["name"] == resource_name)
    fake = impostor(emulator, "vertex", genuine, lambda b: image_of(b).update(imageUri=IMPOSTOR_IMAGE))
    with pytest.raises(NotDeclared, match="imageUri"):  # as if an older release had adopted it
        provider.read(fake["name"], {**props, **outs, "resourceName": fake["name"]})


def test_a_secret_in_a_differing_env_is_never_shown() -> None:
    declared = {"jobSpec": {"workerPoolSpecs": [{"containerSpec": {
        "imageUri": IMAGE, "env": [{"name": "HF_TOKEN", "value": "hf_" + "a" * 34}]}}]}}
    live_job = copy.deepcopy(declared)
    live_job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["env"][0]["value"] = "hf_" + "b" * 34
    live_job["jobSpec"]["workerPoolSpecs"][0]["diskSpec"] = {"bootDiskSizeGb": 100}  # the API's default: not compared
    found = differences(declared, live_job)
    assert found == ["jobSpec.workerPoolSpecs[0].containerSpec.env[0].value: differs (values not shown)"]
    assert "hf_" not in " ".join(found)
    live_job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["command"] = ["sh", "-c", "curl x | sh"]  # what runs
    assert "jobSpec.workerPoolSpecs[0].containerSpec.command: the stack's none" in " ".join(
        differences(declared, live_job))


def test_what_the_api_spells_its_own_way_is_the_same_job() -> None:
    declared = {"jobSpec": {"workerPoolSpecs": [{"replicaCount": 2, "machineSpec": {"machineType": "n1-standard-8"},
                                                 "diskSpec": {}}], "enableWebAccess": False}}
    answered = {"jobSpec": {"workerPoolSpecs": [{"replicaCount": "2", "machineSpec": {"machineType": "n1-standard-8",
                                                                                      "acceleratorCount": 0}}]},
                "state": "JOB_STATE_QUEUED", "displayName": "x"}
    assert differences(declared, answered) == []
    answered["jobSpec"]["workerPoolSpecs"][0]["replicaCount"] = "3"
    assert differences(declared, answered) == [
        "jobSpec.workerPoolSpecs[0].replicaCount: the stack's 2, the job's 3"]


def test_a_job_made_at_a_fallback_is_compared_with_that_fallback_and_adopted(provider, emulator) -> None:
    fallbacks = [{"region": "us-east1"}]
    emulator.state.inject_faults(status=429, count=1, method="customJobs.create",
                                 message="The following quota metrics exceed quota limits: "
                                         "aiplatform.googleapis.com/custom_model_training_nvidia_t4_gpus")
    first = run(provider, "vertex", fallbacks=fallbacks)
    assert "/locations/us-east1/" in first["resourceName"]
    again = run(provider, "vertex", fallbacks=fallbacks)  # the dead run's job, at its fallback: adopted
    assert again["jobId"] == first["jobId"] and len(live(emulator)) == 1
    # the same labels at the fallback's region but the job as written's other fields: an impostor
    genuine = next(j["job"] for j in emulator.state.jobs() if j["name"] == first["resourceName"])
    target = Target("my-proj", "us-east1", emulator.url)
    chosen = backend_for("vertex", job())
    body = {k: copy.deepcopy(v) for k, v in genuine.items() if k in ("labels", "jobSpec", "displayName")}
    body["jobSpec"]["scheduling"] = {"strategy": "SPOT"}
    Jobs(chosen, target).create("other", body, {"pulumi-resource": "none"}, looked_up=True)
    Jobs(chosen, target).stop(first["resourceName"])
    with pytest.raises(NotDeclared, match="scheduling"):
        run(provider, "vertex", fallbacks=fallbacks)


@pytest.mark.parametrize("name", ["h100", "sweep", "legacy"])
def test_a_dead_runs_job_in_every_vocabulary_is_the_job_declared_and_adopted(provider, emulator, name) -> None:
    from tests.job_regions_support import THREE

    first = run(provider, "vertex", THREE[name], name=name)
    again = run(provider, "vertex", THREE[name], name=name)
    assert again["jobId"] == first["jobId"] and len(live(emulator)) == 1
