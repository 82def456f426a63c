"""Messages: pydantic's wording never reaches the user, a problem common to every pool is reported once, an
empty file is unreadable (exit 2), and a retired GPU comes with a concrete replacement."""

from __future__ import annotations

import enum
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gcp_training_jobs.jobspec.catalog.replacements import replacement
from gcp_training_jobs.jobspec.catalog.vertex_machines import FIXED_ACCELERATOR_MACHINES, N1_GPU_COUNTS
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.problems import Problem, collapse_repeated, from_validation_error
from gcp_training_jobs.jobspec.io.documents import parse_yaml
from gcp_training_jobs.jobspec.load import judge_job
from gcp_training_jobs.jobspec.vocab.training_input import parse_job

ROOT = Path(__file__).resolve().parents[1]

#: Phrases of pydantic's own messages (pydantic_core's error messages), none of which may be printed.
PYDANTIC = ("Input should", "Value error", "valid dictionary", "Field required", "Extra inputs", "unable to parse",
            "unable to interpret", "Assertion failed", "String should", "List should")


def problems_of_yaml(text: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        parse_job(parse_yaml(text, "config.yaml"))
    return [str(p) for p in caught.value.problems]


# --- every pydantic error type a YAML job can trigger -------------------------------------------------------

YAML_CASES = [
    ("trainingInput: 5", "trainingInput: 5: a number, not a mapping; allowed: a mapping of its fields (scaleTier, "
     "masterType, workerType, parameterServerType, evaluatorType, masterConfig, workerConfig, parameterServerConfig, "
     "...)"),
    ("trainingInput: {masterConfig: [1]}", "trainingInput.masterConfig: [1]: a list, not a mapping; allowed: a "
     "mapping of its fields (acceleratorConfig, imageUri, tpuTfVersion, containerCommand, containerArgs, "
     "diskConfig)"),
    ("labels: [a]\ntrainingInput: {}", "labels: ['a']: a list, not a mapping; allowed: a mapping of KEY: VALUE lines"),
    ("trainingInput: {packageUris: gs://b/t.tgz}", "trainingInput.packageUris: 'gs://b/t.tgz': text, not a list; "
     "allowed: a list ([a, b], or one '- item' line per entry)"),
    ("trainingInput: {region: 5}", "trainingInput.region: 5: a number, not text; allowed: text (quote it: \"5\")"),
    ("trainingInput: {region: [us-central1]}", "trainingInput.region: ['us-central1']: a list, not text; allowed: "
     "text"),
    ("labels: {team: {a: b}}\ntrainingInput: {}", "labels.team: {'a': 'b'}: a mapping, not text; allowed: text"),
    ("trainingInput: {args: [--epochs, 5]}", "trainingInput.args[1]: 5: a number, not text; allowed: text (quote "
     "it: \"5\")"),
    ("trainingInput: {workerCount: many}", "trainingInput.workerCount: 'many': text, not a whole number; allowed: "
     "a whole number (e.g. 4)"),
    ("trainingInput: {workerCount: 1.5}", "trainingInput.workerCount: '1.5': text, not a whole number; allowed: a "
     "whole number (e.g. 4)"),
    ("trainingInput: {workerCount: -1}", "trainingInput.workerCount: -1: too small; allowed: 0 or more"),
    ("trainingInput: {enableWebAccess: maybe}", "trainingInput.enableWebAccess: 'maybe': text, not a boolean; "
     "allowed: true or false"),
    ("trainingInput: {hyperparameters: {params: [{minValue: abc}]}}", "trainingInput.hyperparameters.params[0]."
     "minValue: 'abc': text, not a number; allowed: a number (e.g. 0.01)"),
    ("trainingInput: {hyperparameters: {params: [{minValue: true}]}}", "trainingInput.hyperparameters.params[0]."
     "minValue: True: a boolean is not a number; allowed: a number (e.g. 0.01)"),
    ("trainingInput: {hyperparameters: {params: [{maxValue: .inf}]}}", "trainingInput.hyperparameters.params[0]."
     "maxValue: '.inf': text, not a number; allowed: a number (e.g. 0.01)"),
    ("trainingInput: {hyperparameters: {params: 3}}", "trainingInput.hyperparameters.params: 3: a number, not a "
     "list; allowed: a list ([a, b], or one '- item' line per entry)"),
    ("trainingInput: {masterConfg: {}}", "trainingInput.masterConfg: unknown field 'masterConfg' (did you mean "
     "masterConfig?); allowed:"),
    ("jobId: j", "trainingInput: required field is missing"),
]


@pytest.mark.parametrize(("text", "expected"), YAML_CASES, ids=[c[0] for c in YAML_CASES])
def test_shape_problems_name_the_field_and_what_is_allowed_in_our_words(text: str, expected: str) -> None:
    problems = problems_of_yaml(text)
    assert any(p.startswith(expected) for p in problems), problems
    assert not [p for p in problems if any(phrase in p for phrase in PYDANTIC)], problems


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Probe(BaseModel):
    """Constraints the stack settings use (literals, bounds, lengths, patterns), to reach every error type."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["ai-platform", "vertex"] | None = None
    colour: Colour | None = None
    days: int | None = Field(default=None, ge=0, le=36500)
    timeout: float | None = Field(default=None, gt=0, lt=100)
    tags: list[str] | None = Field(default=None, min_length=1, max_length=2)
    name: str | None = Field(default=None, min_length=3, max_length=5, pattern=r"^[a-z]+$")


@pytest.mark.parametrize(("data", "expected"), [
    ({"backend": "vertx"}, "backend: 'vertx': not one of the allowed values (did you mean vertex?); allowed: "
     "ai-platform, vertex"),
    ({"colour": "green"}, "colour: 'green': not one of the allowed values; allowed: red, blue"),
    ({"days": -1}, "days: -1: too small; allowed: 0 or more"),
    ({"days": 40000}, "days: 40000: too large; allowed: at most 36500"),
    ({"timeout": 0}, "timeout: 0: too small; allowed: more than 0"),
    ({"timeout": 100}, "timeout: 100: too large; allowed: less than 100"),
    ({"tags": []}, "tags: []: too few items; allowed: at least 1 items"),
    ({"tags": ["a", "b", "c"]}, "tags: ['a', 'b', 'c']: too many items; allowed: at most 2 items"),
    ({"name": "ab"}, "name: 'ab': too short; allowed: at least 3 characters"),
    ({"name": "abcdef"}, "name: 'abcdef': too long; allowed: at most 5 characters"),
    ({"name": "AB1"}, "name: 'AB1': does not match the expected form; allowed: text matching ^[a-z]+$"),
    ({"days": "x"}, "days: 'x': text, not a whole number; allowed: a whole number (e.g. 4)"),
    ({"timeout": "x"}, "timeout: 'x': text, not a number; allowed: a number (e.g. 0.01)"),
])
def test_settings_style_constraints_read_the_same_way(data: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Probe.model_validate(data)
    (problem,) = from_validation_error(caught.value, Probe)
    assert str(problem) == expected
    assert not any(phrase in str(problem) for phrase in PYDANTIC)


# --- a problem common to every pool is reported once ---------------------------------------------------------

def test_the_same_message_for_every_pool_is_one_problem() -> None:
    message = "1.12: Vertex AI has no prebuilt training container for this runtime; allowed: 2.11"
    pools = [Problem(f"jobSpec.workerPoolSpecs[{i}].pythonPackageSpec.executorImageUri", message, "c.yaml")
             for i in range(3)]
    other = Problem("jobSpec.workerPoolSpecs[1].machineSpec.machineType", "'n9' is not a machine type; allowed: ...",
                    "c.yaml")
    assert collapse_repeated([pools[0], other, pools[1], pools[2]]) == [
        Problem("jobSpec.workerPoolSpecs[0,1,2].pythonPackageSpec.executorImageUri", message, "c.yaml"), other,
    ]


def test_paths_that_differ_beyond_one_index_are_listed_and_files_stay_apart() -> None:
    message = "has no Vertex AI equivalent; allowed: unset"
    problems = [Problem("trainingInput.masterConfig.tpuTfVersion", message, "a.yaml"),
                Problem("trainingInput.workerConfig.tpuTfVersion", message, "a.yaml"),
                Problem("trainingInput.workerConfig.tpuTfVersion", message, "b.yaml"),
                Problem("trainingInput.workerConfig.tpuTfVersion", message, "b.yaml")]
    assert collapse_repeated(problems) == [
        Problem("trainingInput.masterConfig.tpuTfVersion, trainingInput.workerConfig.tpuTfVersion", message, "a.yaml"),
        Problem("trainingInput.workerConfig.tpuTfVersion", message, "b.yaml"),
    ]
    nested = [Problem("p[0].q[1]", message), Problem("p[1].q[0]", message)]
    assert collapse_repeated(nested) == [Problem("p[0].q[1], p[1].q[0]", message)]


# --- an empty file exits 2 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("content", ["", "\n\n", "# only a comment\n", "---\n", "null\n"])
@pytest.mark.slow
def test_an_empty_file_is_unreadable_not_invalid(tmp_path: Path, content: str) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text(content)
    for command in ("validate", "render"):
        done = subprocess.run([sys.executable, "-m", "components", command, str(empty)], cwd=ROOT,
                              capture_output=True, text=True, timeout=60,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert done.stderr.strip() == f"{empty}: empty; allowed: a YAML mapping (a job config with trainingInput, " \
                                      "or a stack file)"


# --- retired GPUs: a concrete replacement --------------------------------------------------------------------

def _instead(training_input: dict) -> str:
    """The `; instead: ...` a retired GPU's refusal ends with, on the real path (judge_job on Vertex AI)."""
    data = {"trainingInput": {"region": "us-central1", **training_input,
                              "masterConfig": {**training_input.get("masterConfig", {}), "imageUri": "gcr.io/p/i:1"}}}
    (problem,) = judge_job(data, backend="vertex").problems
    return problem.message[problem.message.index("; instead: "):]


@pytest.mark.parametrize(("training_input", "instead"), [
    ({"scaleTier": "BASIC_GPU"},
     "CUSTOM with n1-standard-4 and 1 NVIDIA_TESLA_T4 (or g2-standard-4, 1 NVIDIA_L4 built in)"),
    ({"scaleTier": "CUSTOM", "masterType": "standard_gpu"},
     "CUSTOM with n1-standard-4 and 1 NVIDIA_TESLA_T4 (or g2-standard-4, 1 NVIDIA_L4 built in)"),
    ({"scaleTier": "CUSTOM", "masterType": "complex_model_m_gpu"},
     "CUSTOM with n1-highcpu-16 and 4 NVIDIA_TESLA_T4 (or g2-standard-48, 4 NVIDIA_L4 built in)"),
    ({"scaleTier": "CUSTOM", "masterType": "complex_model_l_gpu"},
     "CUSTOM with n1-highcpu-32 and 4 NVIDIA_TESLA_T4 (n1-highcpu-32 takes at most 4 NVIDIA_TESLA_T4) "
     "(or g2-standard-48, 4 NVIDIA_L4 built in)"),
    ({"scaleTier": "CUSTOM", "masterType": "standard_p100"},
     "CUSTOM with n1-standard-4 and 1 NVIDIA_TESLA_T4 (or g2-standard-4, 1 NVIDIA_L4 built in)"),
    ({"scaleTier": "CUSTOM", "masterType": "n1-highmem-8",  # an attached K80 keeps its machine
      "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_K80", "count": 2}}},
     "CUSTOM with n1-highmem-8 and 2 NVIDIA_TESLA_T4 (or g2-standard-24, 2 NVIDIA_L4 built in)"),
])
def test_a_retired_gpu_gets_a_concrete_replacement(training_input: dict, instead: str) -> None:
    assert _instead(training_input) == f"; instead: {instead}"


def test_no_replacement_where_nothing_is_retired() -> None:
    assert replacement("n1-standard-4", "NVIDIA_TESLA_T4", 1) is None  # not retired
    assert replacement("a2-highgpu-1g", "NVIDIA_TESLA_K80", 1) is None  # no N1 machine to keep


def test_every_replacement_is_a_combination_vertex_takes() -> None:
    """Every retired GPU's replacement, for every N1 type that took it, is a combination Vertex AI takes."""
    for machine in N1_GPU_COUNTS:
        for retired in ("NVIDIA_TESLA_K80", "NVIDIA_TESLA_P100"):
            for count in (1, 2, 4, 8):
                found = replacement(machine, retired, count)
                if found is None:
                    continue
                assert found.accelerator_count in N1_GPU_COUNTS[found.machine_type][found.accelerator_type]
                assert found.alternative is not None, (machine, retired, count)
                fixed = FIXED_ACCELERATOR_MACHINES[found.alternative]
                assert (fixed.accelerator, fixed.count) == ("NVIDIA_L4", found.accelerator_count)
