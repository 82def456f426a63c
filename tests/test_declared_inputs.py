"""TrainingJob's inputs and outputs declared once (resources/job_model/declared.py): the args, the props the engine
gets, the provider's read, the validation, what a change does, the stack keys a refusal names and the outputs all derive
from the one table; the stack's `jobs.NAME.*` and a program's TrainingJobArgs refuse the same values in the same
words; each input's property is spelled in one module of resources/."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import NAMESPACE
from gcp_training_jobs.resources import provider_base
from gcp_training_jobs.resources.job_model import declared, inputs, runs
from gcp_training_jobs.resources.job_model.declared import INPUTS, OUTPUT_KEYS, Change, Input, Kind
from gcp_training_jobs.resources.settings import load_stack_file
from tests.helpers import ROOT

pulumi = pytest.importorskip("pulumi")

from gcp_training_jobs.cli.plan.mocks import mocked_pulumi  # noqa: E402
from gcp_training_jobs.resources import training_job  # noqa: E402
from gcp_training_jobs.resources.training_job import TrainingJob, TrainingJobArgs  # noqa: E402
from gcp_training_jobs.resources.training_job import provider as provider_module  # noqa: E402

JOB = {"jobSpec": {"workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-8"}, "replicaCount": "1",
                                        "containerSpec": {"imageUri": "us-docker.pkg.dev/my-proj/trainers/x:1"}}]},
       "region": "us-central1"}

RESOURCES = ROOT / "gcp_training_jobs" / "resources"


def test_the_sets_each_reader_uses_are_what_the_declaration_says() -> None:
    assert runs.REPLACING == tuple(i.wire for i in INPUTS if i.change is Change.REPLACES) == \
        ("project", "backend", "rerun")
    assert runs.IN_PLACE == tuple(i.wire for i in INPUTS if i.change is Change.IN_PLACE) == (
        "name", "waitForCompletion", "waitTimeoutSeconds", "guardrails", "protect", "fallbacks", "retries",
        "deleteRecordOnDelete", "cheapestFirst")
    assert declared.FLAGS == tuple(i.wire for i in INPUTS if i.kind is Kind.FLAG) == (
        "waitForCompletion", "protect", "deleteRecordOnDelete", "persistentResourceDeclared", "cheapestFirst")
    assert provider_base.JOB_KEYS == tuple(i.wire for i in INPUTS if i.stack_key) == (
        "job", "waitForCompletion", "waitTimeoutSeconds", "protect", "fallbacks", "retries", "rerun",
        "deleteRecordOnDelete")
    assert provider_module.OUTPUT_KEYS == OUTPUT_KEYS == tuple(TrainingJob.__annotations__)
    assert TrainingJob.__annotations__["trialCount"] == pulumi.Output[int]  # the SDK types the engine's 8.0 as 8


def test_every_declared_input_is_an_argument_or_set_by_the_resource_and_read_by_the_provider() -> None:
    args = {f.name: f for f in dataclasses.fields(TrainingJobArgs)}
    assert set(args) == {i.arg for i in INPUTS if i.arg is not None}
    assert {i.wire for i in INPUTS if i.arg is None} == {"name", "identity"}
    assert {i.arg for i in INPUTS if i.required} == {"project", "job"}
    assert all(given.description in (TrainingJobArgs.__doc__ or "") for given in INPUTS if given.arg)
    fields = {f.name for f in dataclasses.fields(inputs.Inputs)}
    assert {i.attribute for i in INPUTS if i.attribute} <= fields
    assert set(inputs._READ) == {i.attribute for i in INPUTS if i.attribute}


def test_a_new_input_in_the_declaration_appears_in_the_args_the_props_and_the_validation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclasses.dataclass
    class Grown(TrainingJobArgs):
        max_attempts: Any = dataclasses.field(default=None, metadata=declared.declare(
            "maxAttempts", Kind.COUNT, Change.IN_PLACE, "How many attempts at most.",
            allowed="a whole number from 1 to 5", rule=declared.Annotated[int, declared.Field(ge=1, le=5)]))

    grown = declared.inputs_of(Grown)
    assert grown[-2] == Input("maxAttempts", Kind.COUNT, Change.IN_PLACE, "How many attempts at most.",
                              allowed="a whole number from 1 to 5", rule=grown[-2].rule, arg="max_attempts")
    monkeypatch.setattr(training_job, "INPUTS", grown)
    monkeypatch.setattr(inputs, "INPUTS", grown)
    monkeypatch.setattr(training_job, "TrainingJobArgs", Grown)
    monkeypatch.setattr(inputs, "RULES", inputs.rules_of(grown))
    assert inputs.input_problems({"maxAttempts": 9}) == [("maxAttempts", "9: too large; allowed: at most 5")]
    assert inputs.input_problems({"maxAttempts": "two"}) == [
        ("maxAttempts", "'two'; allowed: a whole number from 1 to 5")]
    with pytest.raises(training_job.InvalidArgs, match="TrainingJob trained: max_attempts: 9: too large"):
        TrainingJob("trained", Grown(project="my-proj", job=JOB, max_attempts=9))
    assert _registered(Grown(project="my-proj", job=JOB, max_attempts=3))["maxAttempts"] == 3


def _registered(args: Any) -> dict[str, Any]:
    """The props a TrainingJob made with `args` hands the engine (made in a program run under Pulumi's mocks)."""
    from pulumi.runtime.stack import run_pulumi_func
    from pulumi.runtime.sync_await import _sync_await

    with mocked_pulumi("declared", {}) as monitor:
        _sync_await(run_pulumi_func(lambda: TrainingJob("trained", args)))
    made = monitor.recording.of_type("TrainingJob")
    assert len(made) == 1
    return {k: v for k, v in made[0].inputs.items() if k != "__provider"}


def test_the_props_an_existing_job_hands_the_engine_are_the_same_keys_and_values_as_before(
        ) -> None:
    """The props of a job as a stack makes it, against the dict TrainingJob built by hand before the declaration
    (its keys in their order, then every output unset): an upgrade replaces nothing."""
    args = TrainingJobArgs(project="my-proj", job=JOB, backend="vertex", wait_for_completion=False,
                           retries=2, rerun="2026-11-24", fallbacks=[{"region": "europe-west4"}])
    props = _registered(args)
    before = ["name", "project", "backend", "job", "waitForCompletion", "waitTimeoutSeconds", "guardrails", "protect",
              "fallbacks", "retries", "rerun", "deleteRecordOnDelete", "stackQuota", "persistentResourceDeclared",
              "identity", "jobId", "resourceName", "state", "backendState", "createTime", "startTime", "endTime",
              "errorMessage", "trainingOutput", "consoleUrl", "trialCount", "bestTrial", "costUsd", "placement",
              "retryCount", "waitFailure"]
    assert set(props) <= set(before)
    # the engine gets every set value as TrainingJob sent it before (None, the unset ones, travel as nothing)
    assert props == {"name": "trained", "project": "my-proj", "identity": "/gcp-training-jobs/declared/trained",
                     "backend": "vertex", "job": JOB, "rerun": "2026-11-24", "waitForCompletion": False,
                     "fallbacks": [{"region": "europe-west4"}], "retries": 2}


def _stack_problem(tmp_path: Path, key: str, value: Any) -> str:
    """What the stack's settings say of `jobs.gpu.KEY: value` (the message after the key)."""
    job = {"jobSpec": JOB["jobSpec"], key: value}
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(yaml.safe_dump({"config": {"gcp:project": "my-ml-test", f"{NAMESPACE}:jobs": {"gpu": job}}}),
                    encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_stack_file(path, root=ROOT)
    found = [p.message for p in caught.value.problems if p.path == f"{NAMESPACE}:jobs.gpu.{key}"]
    assert len(found) == 1, [str(p) for p in caught.value.problems]
    return found[0]


def _args_problem(arg: str, value: Any) -> str:
    """What TrainingJob(...) says of `arg=value` (InvalidArgs, before anything is registered)."""
    with pytest.raises(training_job.InvalidArgs) as caught:
        TrainingJob("trained", project="my-proj", job=JOB, **{arg: value})
    text = str(caught.value)
    prefix = f"TrainingJob trained: {arg}: "
    assert text.startswith(prefix), text
    return text.removeprefix(prefix)


def test_a_64_character_rerun_token_is_refused_by_the_stack_and_by_the_args_in_the_same_words(tmp_path: Path) -> None:
    token = "r" * 64
    said = _stack_problem(tmp_path, "rerun", token)
    assert said == _args_problem("rerun", token)
    assert said.endswith("too long; allowed: at most 63 characters")
    assert inputs.input_problems({"rerun": "r" * 63}) == []


@pytest.mark.parametrize(("key", "arg", "value", "words"), [
    ("retries", "retries", 11, "11: too large; allowed: at most 10"),
    ("waitTimeoutSeconds", "wait_timeout_seconds", 0,
     "0: too small; allowed: a finite number of seconds > 0, e.g. 3600"),
    ("fallbacks", "fallbacks", [{"region": "europe-west4"}] * 11, "too many items; allowed: at most 10 items"),
])
def test_the_stack_and_the_args_refuse_each_bound_in_the_same_words(tmp_path: Path, key: str, arg: str, value: Any,
                                                                     words: str) -> None:
    said = _stack_problem(tmp_path, key, value)
    assert said == _args_problem(arg, value)
    assert said.endswith(words)


#: The properties the issue holds to one module of resources/ each.
ONE_HOME = ("deleteRecordOnDelete", "waitTimeoutSeconds", "rerun")


def _texts(path: Path) -> list[str]:
    """Every string constant of a module (docstrings and f-strings' parts included)."""
    return [node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


@pytest.mark.parametrize("name", ONE_HOME)
def test_each_input_is_spelled_in_one_module_of_resources(name: str) -> None:
    word = re.compile(rf"\b{name}\b")
    homes = sorted(str(path.relative_to(RESOURCES)) for path in RESOURCES.rglob("*.py")
                   if any(word.search(text) for text in _texts(path))
                   or re.search(rf"[\"']{name}[\"']", path.read_text(encoding="utf-8")))
    assert homes == ["job_model/declared.py"], homes
