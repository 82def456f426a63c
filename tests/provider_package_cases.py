"""The provider package (`gcp-training-jobs:index:TrainingJob`) in-process, over real HTTP to the emulator: its schema
is the declaration's, and check, diff, create, read (an import) and delete are TrainingJobProvider's, with the
engine's values (secrets where they stand, unknowns) read and written by the package. The engine's side is
tests/test_e2e_provider_package.py."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pulumi.provider.experimental import provider as rpc
from pulumi.provider.experimental.property_value import PropertyValue

from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.resources.job_model.declared import INPUTS, OUTPUT_KEYS, Change
from gcp_training_jobs.resources.job_model.schema import JOB_PARTS, TYPE_TOKEN, output_descriptions, schema
from gcp_training_jobs.resources.package import values
from gcp_training_jobs.resources.package.provider import TrainingJobPackage
from tests.helpers import l4_spot

URN = f"urn:pulumi:dev::team-project::{TYPE_TOKEN}::train"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token's shape


def run(coro: Any) -> Any:
    """The coroutine run on a loop of its own (asyncio.run would unset the thread's loop other modules' tests use)."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()


def pv(data: dict[str, Any], secret: frozenset[values.Path] = frozenset()) -> dict[str, PropertyValue]:
    return values.write(data, secret)


@pytest.fixture
def package(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> TrainingJobPackage:
    monkeypatch.setenv("GCP_TRAINING_JOBS_RETRY_BASE_SECONDS", "0.001")
    made = TrainingJobPackage()
    run(made.configure(rpc.ConfigureRequest({"gcp-training-jobs:config:apiEndpoint": emulator.url}, {}, True, True)))
    return made


def test_a_stack_file_still_listing_its_jobs_configures_the_package_and_names_nothing_by_it(
        emulator: Emulator) -> None:
    """The engine hands the package the whole `gcp-training-jobs:*` config, the stack file's `jobs` too (a stack moved
    to the package by its program): configure takes it, and a refusal names the resource's property, not that key."""
    made = TrainingJobPackage()
    jobs = json.dumps({"train": l4_spot()})
    run(made.configure(rpc.ConfigureRequest({"gcp-training-jobs:config:apiEndpoint": emulator.url,
                                             "gcp-training-jobs:config:jobs": jobs}, {}, True, True)))
    assert getattr(made.jobs, "stack_jobs", frozenset()) == frozenset()
    bad = given(jobSpec={"workerPoolSpecs": []})
    checked = run(made.check(rpc.CheckRequest(URN, {}, pv(bad), b"")))
    assert checked.failures and not any("gcp-training-jobs:jobs" in f.reason for f in checked.failures)


def test_the_stack_provider_configures_the_package_as_the_dynamic_provider_is_configured(
        emulator: Emulator) -> None:
    """A stack file's program configures the package's explicit provider with the stack's config (as the dynamic
    provider's `configure` is handed it: each key's text) and its organization: the stack's jobs and config are the
    provider's (its plan's), a refusal names the stack's key, and the identity carries the organization."""
    made = TrainingJobPackage()
    stack = {"gcp:project": "team-project", "gcp:region": "us-central1",
             "gcp-training-jobs:apiEndpoint": emulator.url, "gcp-training-jobs:jobs": json.dumps({"train": l4_spot()})}
    run(made.configure(rpc.ConfigureRequest({}, pv({"stackConfig": stack, "organization": "acme"}), True, True)))
    assert made.jobs.stack_jobs == frozenset({"train"}) and made.organization == "acme"
    assert dict(made.jobs.stack_config) == stack and made.jobs.endpoint == emulator.url
    bad = given(jobSpec={"workerPoolSpecs": []})
    checked = run(made.check(rpc.CheckRequest(URN, {}, pv(bad), b"")))
    assert any("gcp-training-jobs:jobs.train" in f.reason for f in checked.failures), checked.failures
    good = run(made.check(rpc.CheckRequest(URN, {}, pv(given()), b"")))
    assert values.read(good.inputs).data["identity"] == "acme/team-project/dev/train"  # organization/project/stack/name


def test_a_state_the_dynamic_resource_wrote_loses_its_pickle_by_an_update_in_place(
        package: TrainingJobPackage) -> None:
    """A job moved here by its alias keeps the dynamic resource's outputs, pickle and all, while its diff finds
    nothing: the package's diff names `__provider`, so the engine updates it in place and the pickle goes."""
    checked = run(package.check(rpc.CheckRequest(URN, {}, pv(given()), b"")))
    made = run(package.create(rpc.CreateRequest(URN, checked.inputs, 60, False)))
    moved = {**made.properties, "__provider": PropertyValue("cGlja2xl").with_secret(True)}
    diff = run(package.diff(rpc.DiffRequest(URN, made.resource_id, moved, checked.inputs, [])))
    assert diff.changes and diff.replaces == [] and set(diff.detailed_diff) == {"__provider"}
    assert diff.detailed_diff["__provider"].kind is rpc.PropertyDiffKind.DELETE


def given(job: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    """A program's properties: the job's parts on their own, as a YAML program writes them."""
    job = job or l4_spot()
    return {"project": "team-project", "jobSpec": job["jobSpec"], "region": job["region"], **more}


def test_the_schema_is_the_declaration() -> None:
    made = schema()
    resource = made["resources"][TYPE_TOKEN]
    program_inputs = {i.wire for i in INPUTS if i.arg is not None and i.change is not Change.READ}
    assert set(resource["inputProperties"]) == program_inputs | set(JOB_PARTS)
    for declared in INPUTS:
        if declared.wire in program_inputs:
            spec = resource["inputProperties"][declared.wire]
            assert spec["description"] == declared.description
            assert spec.get("replaceOnChanges", False) is (declared.change is Change.REPLACES)
    assert set(resource["properties"]) >= set(OUTPUT_KEYS)
    assert resource["properties"]["trialCount"]["type"] == "integer"
    assert resource["properties"]["costUsd"]["type"] == "number"
    assert output_descriptions()["state"].startswith("QUEUED, PREPARING, RUNNING")
    assert resource["requiredInputs"] == ["project"]
    json.dumps(made)  # what the engine is sent


def test_check_folds_the_job_sets_name_and_identity_and_judges_with_the_judges_words(
        package: TrainingJobPackage) -> None:
    good = run(package.check(rpc.CheckRequest(URN, {}, pv(given()), b"")))
    assert good.failures == []
    inputs = values.read(good.inputs).data
    assert inputs["job"]["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["machineType"] == "g2-standard-8"
    assert (inputs["name"], inputs["identity"]) == ("train", "organization/team-project/dev/train")
    assert "jobSpec" not in inputs
    bad = l4_spot(count=3)  # g2-standard-8 has one L4
    refused = run(package.check(rpc.CheckRequest(URN, {}, pv(given(bad)), b"")))
    reasons = " ".join(f.reason for f in refused.failures)
    assert "acceleratorCount" in reasons and "g2-standard-8" in reasons, reasons


def test_a_credential_is_secret_where_it_stands_and_the_diff_names_the_changed_field(
        package: TrainingJobPackage, emulator: Emulator) -> None:
    job = l4_spot()
    job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"] += [f"--token={TOKEN}"]
    checked = run(package.check(rpc.CheckRequest(URN, {}, pv(given(job)), b"")))
    assert checked.failures == []
    args = checked.inputs["job"].value["jobSpec"].value["workerPoolSpecs"].value[0].value["containerSpec"] \
        .value["args"].value
    assert [a.is_secret for a in args] == [False, True]
    assert not checked.inputs["job"].is_secret and not checked.inputs["project"].is_secret
    made = run(package.create(rpc.CreateRequest(URN, checked.inputs, 60, False)))
    assert made.resource_id.startswith("projects/team-project/locations/us-central1/customJobs/")
    assert values.read(made.properties).data["state"] == "QUEUED"
    stored = made.properties["job"].value["jobSpec"].value["workerPoolSpecs"].value[0].value["containerSpec"]
    assert stored.value["args"].value[1].is_secret
    assert len(emulator.state.requests("customJobs.create")) == 1
    (live,) = emulator.state.jobs()  # Google is given the plain value: the secret is the state's and the diff's
    assert live["job"]["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"][1] == f"--token={TOKEN}"
    job2 = json.loads(json.dumps(job))
    job2["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"][0] = "--model-dir=gs://my-job-dir/jobs/l4b"
    news = run(package.check(rpc.CheckRequest(URN, checked.inputs, pv(given(job2)), b""))).inputs
    diff = run(package.diff(rpc.DiffRequest(URN, made.resource_id, made.properties, news, [])))
    assert diff.changes and diff.replaces == ["job"]
    assert set(diff.detailed_diff) == {"job.jobSpec.workerPoolSpecs[0].containerSpec.args[0]"}
    same = run(package.diff(rpc.DiffRequest(URN, made.resource_id, made.properties, checked.inputs, [])))
    assert not same.changes and same.detailed_diff == {}


def test_read_imports_a_job_made_outside_by_its_resource_name(package: TrainingJobPackage) -> None:
    checked = run(package.check(rpc.CheckRequest(URN, {}, pv(given()), b"")))
    made = run(package.create(rpc.CreateRequest(URN, checked.inputs, 60, False)))
    imported = run(package.read(rpc.ReadRequest(URN, made.resource_id, {}, {})))
    assert imported.resource_id == made.resource_id
    outs, ins = values.read(imported.properties).data, values.read(imported.inputs).data
    assert outs["state"] == "QUEUED" and outs["resourceName"] == made.resource_id
    assert ins["project"] == "team-project" and ins["backend"] == "vertex"
    assert ins["job"]["region"] == "us-central1" and "labels" not in ins["job"]  # only this project's labels on it
    assert ins["job"]["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["machineType"] == "g2-standard-8"
    # declared as imported, the job is the same job: no change
    declared = run(package.check(rpc.CheckRequest(URN, imported.inputs, imported.inputs, b""))).inputs
    assert not run(package.diff(rpc.DiffRequest(URN, made.resource_id, imported.properties, declared, []))).changes
    missing = run(package.read(rpc.ReadRequest(URN, made.resource_id.rsplit("/", 1)[0] + "/404", {}, {})))
    assert missing.resource_id is None
    with pytest.raises(ValueError, match="allowed: a job's resource name"):
        run(package.read(rpc.ReadRequest(URN, "not-a-name", {}, {})))
    run(package.delete(rpc.DeleteRequest(URN, made.resource_id, made.properties, 60)))
