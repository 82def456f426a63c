"""Messages read once: each refusal the user meets reads as the project's own line (where, field, what is wrong,
what is allowed), never a library's. The provider's check failures carry no property, so the engine shows their
reason alone (`resource 'NAME' has a problem: REASON`), never its dump of the input's value; the protect message
names both keys and the `pulumi up` that must record a change; YAML slips, bucket names and the console command's
usage line in plain words."""

from __future__ import annotations

import json

from pulumi.dynamic import Config, ConfigureRequest

from tests.helpers import props, spec_props, t4_job


def _configured(provider, jobs: dict) -> None:
    provider.configure(ConfigureRequest(Config({"gcp-training-jobs:jobs": json.dumps(jobs)}, "gcp-training-jobs")))


def test_a_program_jobs_refusal_names_the_resource_and_the_field_with_no_property(provider) -> None:
    job = t4_job(count=3)
    job["trainingInput"]["jobDir"] = "/tmp/out"
    failures = provider.check({}, props("ai-platform", job)).failures
    assert failures and all(f.property == "" for f in failures)  # the engine then prints no `property P value {V}`
    reasons = {f.reason for f in failures}
    assert ("TrainingJob resnet, job.trainingInput.jobDir: '/tmp/out' is not a Cloud Storage URI; allowed: "
            "gs://BUCKET/PATH") in reasons
    (count,) = reasons - {next(r for r in reasons if "jobDir" in r)}
    assert count.startswith("TrainingJob resnet, job.trainingInput.masterConfig.acceleratorConfig.count, ")
    assert count.endswith(": 3 NVIDIA_TESLA_T4 on n1-standard-8; allowed: 1, 2, 4")


def test_a_stack_jobs_refusal_names_its_stack_key(provider) -> None:
    _configured(provider, {"resnet": {"trainingInput": {}}})
    job = t4_job()
    job["trainingInput"]["jobDir"] = "/tmp/out"
    (failure,) = provider.check({}, props("ai-platform", job)).failures
    assert (failure.property, failure.reason) == (
        "", "gcp-training-jobs:jobs.resnet.trainingInput.jobDir: '/tmp/out' is not a Cloud Storage URI; allowed: "
            "gs://BUCKET/PATH")
    (failure,) = provider.check({}, props("ai-platform", job, name="other", identity="o/p/s/other")).failures
    assert failure.reason.startswith("TrainingJob other, job.trainingInput.jobDir: ")  # not one of the stack's


def test_inputs_guardrails_and_the_environment_are_named_where_they_are_set(provider, monkeypatch) -> None:
    failures = provider.check({}, props("ai-platform", waitTimeoutSeconds=-5, project="")).failures
    assert [f.reason.split(": ")[0] for f in failures] == ["TrainingJob resnet, project",
                                                           "TrainingJob resnet, waitTimeoutSeconds"]
    _configured(provider, {"l4": {}})
    (failure,) = provider.check({}, spec_props(guardrails={"maxAcceleratorsPerJob": "many"})).failures
    assert failure.reason.startswith("gcp-training-jobs:guardrails.maxAcceleratorsPerJob (job l4): ")
    monkeypatch.setenv("GCP_TRAINING_JOBS_RECONCILE_SECONDS", "lots")
    (failure,) = provider.check({}, spec_props()).failures
    assert failure.property == "" and failure.reason.startswith("environment GCP_TRAINING_JOBS_RECONCILE_SECONDS: ")
