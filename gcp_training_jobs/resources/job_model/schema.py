"""The provider package's Pulumi schema, generated from the one declaration of TrainingJob's inputs and outputs
(`declared`): each property's wire name, type, description and whether it replaces the job, so that no other module
spells them. The schema is what `pulumi package add` reads to make a consumer's SDK (TypeScript, Go, C#, Java,
Python) and what a Pulumi YAML program is checked against.

The package's inputs are TrainingJobArgs' fields the program gives (not the data a stack file computes: its quota
plan, its budget, its persistent resources: `Change.READ`), and the parts of the `job` input on their own (the job's
vocabulary, `trainingInput`, `jobSpec` or `tuningJob`, with its `region` and `labels`), which the provider folds into
`job` (`fold_job`) so that a program writes a job as a stack file's `jobs.NAME` does. The resource's name and its
identity are the provider's to set (from the URN), as `TrainingJob` sets them in a Python program.

Importing this loads no Pulumi.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Mapping
from functools import cache
from typing import Any

from gcp_training_jobs.jobspec.core.names import JOB_SPEC, NAMESPACE, PACKAGE_JOB_TYPE, TRAINING_INPUT, TUNING_JOB
from gcp_training_jobs.jobspec.core.version import __version__
from gcp_training_jobs.resources.job_model import declared
from gcp_training_jobs.resources.job_model.declared import INPUTS, JOB, OUTPUT_KEYS, Change, Input, Kind

#: The package's resource: its type token (names.PACKAGE_JOB_TYPE).
TYPE_TOKEN = PACKAGE_JOB_TYPE

_ANY = {"$ref": "pulumi.json#/Any"}
_OBJECT = {"type": "object", "additionalProperties": _ANY}
_TYPES: dict[Kind, dict[str, Any]] = {
    Kind.TEXT: {"type": "string"},
    Kind.BACKEND: {"type": "string"},
    Kind.JOB: _OBJECT,
    Kind.FLAG: {"type": "boolean"},
    Kind.SECONDS: {"type": "number"},
    Kind.COUNT: {"type": "integer"},
    Kind.LIST: {"type": "array", "items": _ANY},
    Kind.MAPPING: _OBJECT,
    Kind.DATA: _ANY,
}

#: The parts of a `job` a program may give on their own, as a stack file's `jobs.NAME` holds them: one vocabulary
#: (FORMS), where it runs and its labels (inputs.region_of reads the region beside jobSpec / tuningJob; ml v1's is
#: trainingInput.region).
JOB_PARTS: dict[str, tuple[dict[str, Any], str]] = {
    TRAINING_INPUT: (_OBJECT, "AI Platform Training's trainingInput (a gcloud config.yaml Job's), its region inside."),
    JOB_SPEC: (_OBJECT, "A Vertex AI CustomJobSpec, as `gcloud ai custom-jobs create --config` reads it."),
    TUNING_JOB: (_OBJECT, "A Vertex AI tuning config (studySpec, trialJobSpec, trial counts), as `gcloud ai "
                          "hp-tuning-jobs create --config` reads it."),
    "region": ({"type": "string"}, "Where a jobSpec or tuningJob runs (a Vertex AI region, e.g. us-central1)."),
    "labels": ({"type": "object", "additionalProperties": {"type": "string"}}, "The job's labels."),
}


def package_inputs() -> tuple[Input, ...]:
    """The inputs a program gives the package's TrainingJob: TrainingJobArgs' fields, but the data a stack file
    computes for its jobs (Change.READ)."""
    return tuple(i for i in INPUTS if i.arg is not None and i.change is not Change.READ)


def fold_job(props: Mapping[str, Any]) -> dict[str, Any]:
    """The props with the job's parts given on their own (JOB_PARTS) folded into the `job` input, as
    `job_model.inputs` reads it; a `job` given whole is kept, its parts beside it laid over it."""
    parts = {key: props[key] for key in JOB_PARTS if props.get(key) is not None}
    folded = {key: value for key, value in props.items() if key not in JOB_PARTS}
    if parts:
        whole = props.get(JOB.wire)
        folded[JOB.wire] = {**(whole if isinstance(whole, Mapping) else {}), **parts}
    return folded


@cache
def output_descriptions() -> dict[str, str]:
    """Each output's description: the docstring under its annotation in declared.TrainingJobOutputs."""
    tree = ast.parse(inspect.getsource(declared.TrainingJobOutputs))
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    found: dict[str, str] = {}
    for first, second in zip(body, body[1:], strict=False):
        if (isinstance(first, ast.AnnAssign) and isinstance(first.target, ast.Name) and isinstance(second, ast.Expr)
                and isinstance(second.value, ast.Constant) and isinstance(second.value.value, str)):
            found[first.target.id] = " ".join(second.value.value.split())
    return found


def _output_type(annotation: str) -> dict[str, Any]:
    inner = annotation.removeprefix("Output_[").removesuffix("]").replace(" | None", "")
    return {"str": {"type": "string"}, "int": {"type": "integer"}, "float": {"type": "number"},
            "bool": {"type": "boolean"}}.get(inner, _OBJECT)


def _input_spec(declared_input: Input) -> dict[str, Any]:
    spec = {**_TYPES[declared_input.kind], "description": declared_input.description}
    if declared_input.kind is Kind.BACKEND:
        spec["default"] = declared.TrainingJobArgs.backend
    if declared_input.change is Change.REPLACES:
        spec["replaceOnChanges"] = True
    return spec


def schema() -> dict[str, Any]:
    """The package's schema (Pulumi package schema JSON), from the declaration."""
    annotations = declared.TrainingJobOutputs.__annotations__
    described = output_descriptions()
    inputs = {i.wire: _input_spec(i) for i in package_inputs()}
    inputs |= {key: {**kind, "description": text} for key, (kind, text) in JOB_PARTS.items()}
    outputs = {key: {**_output_type(str(annotations[key])), "description": described.get(key, "")}
               for key in OUTPUT_KEYS}
    return {
        "name": NAMESPACE,
        "displayName": "GCP training jobs",
        "version": __version__,
        "description": "GPU and TPU training jobs on Vertex AI and AI Platform Training, as resources.",
        "keywords": ["category/cloud", "kind/component"],
        "config": {"variables": {
            "apiEndpoint": {"type": "string", "description": "Where the Google APIs are reached (an emulator's "
                            "http://127.0.0.1:PORT/ in tests; default: Google's)."},
            "guardrails": {**_OBJECT, "description": "The stack's guardrails (camelCase keys), held on every job "
                           "whose own `guardrails` input is not set."},
        }},
        "resources": {TYPE_TOKEN: {
            "description": (declared.TrainingJobArgs.__doc__ or "").split("\n\n")[0].strip(),
            "inputProperties": inputs,
            "requiredInputs": [i.wire for i in package_inputs() if i.required and i.wire != JOB.wire],
            "properties": {**inputs, **outputs},
            "required": [],
        }},
        "meta": {"moduleFormat": "(.*)"},
    }
