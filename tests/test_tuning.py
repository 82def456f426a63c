"""Hyperparameter tuning: every rule on trainingInput.hyperparameters with a failing example and its message,
the forms that pass (the resume form among them), and the translation to a Vertex HyperparameterTuningJob."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gcp_training_jobs.emulator.discovery import validate_body
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.io.documents import parse_yaml
from gcp_training_jobs.jobspec.load import load_job, render_body
from gcp_training_jobs.jobspec.render.tuning import EARLY_STOPPING, study_spec, tuning_job_body
from gcp_training_jobs.jobspec.vocab.training_input import HyperparameterSpec
from tests.helpers import assert_ml_body_valid, gpu_job

HP = "trainingInput.hyperparameters"

GOOD: dict[str, Any] = {
    "goal": "MAXIMIZE",
    "hyperparameterMetricTag": "val_accuracy",
    "maxTrials": 20,
    "maxParallelTrials": 4,
    "maxFailedTrials": 2,
    "enableTrialEarlyStopping": True,
    "params": [
        {"parameterName": "learning_rate", "type": "DOUBLE", "minValue": 0.0001, "maxValue": 0.1,
         "scaleType": "UNIT_LOG_SCALE"},
        {"parameterName": "layers", "type": "INTEGER", "minValue": 1, "maxValue": 8, "scaleType": "UNIT_LINEAR_SCALE"},
        {"parameterName": "activation", "type": "CATEGORICAL", "categoricalValues": ["relu", "tanh"]},
        {"parameterName": "batch_size", "type": "DISCRETE", "discreteValues": [32, 64, 128],
         "scaleType": "UNIT_REVERSE_LOG_SCALE"},
    ],
}


def tuning_job(hp: dict[str, Any]) -> dict[str, Any]:
    job = gpu_job("n1-standard-8", "NVIDIA_TESLA_T4", 1)
    job["trainingInput"]["hyperparameters"] = hp
    return job


def problems_of(hp: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_job(tuning_job(hp))
    return [str(p) for p in caught.value.problems]


def with_param(index: int, **changes: Any) -> dict[str, Any]:
    hp = copy.deepcopy(GOOD)
    for key, value in changes.items():
        if value is None:
            hp["params"][index].pop(key, None)
        else:
            hp["params"][index][key] = value
    return hp


def with_hp(**changes: Any) -> dict[str, Any]:
    hp = copy.deepcopy(GOOD)
    for key, value in changes.items():
        if value is None:
            hp.pop(key, None)
        else:
            hp[key] = value
    return hp


# --- what passes -------------------------------------------------------------------------------------

def test_a_full_tuning_block_passes_and_is_sent_to_ml_v1_as_written() -> None:
    job = load_job(tuning_job(GOOD))
    body = render_body(job, "ai-platform", "tune_1")
    assert body["trainingInput"]["hyperparameters"]["params"][0]["parameterName"] == "learning_rate"
    assert body["trainingInput"]["hyperparameters"]["maxTrials"] == 20
    assert_ml_body_valid(body)


def test_the_documented_resume_form_has_no_goal_and_no_params() -> None:
    resume = {"enableTrialEarlyStopping": True, "maxTrials": 30, "maxParallelTrials": 1,
              "resumePreviousJobId": "first_tuning_job"}
    job = load_job(tuning_job(resume))
    assert job.training_input.hyperparameters is not None
    assert job.training_input.hyperparameters.resume_previous_job_id == "first_tuning_job"
    assert_ml_body_valid(render_body(job, "ai-platform", "tune_2"))


def test_a_gcloud_config_as_yaml_passes_with_decimals_as_written() -> None:
    text = """
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-standard-4
  hyperparameters:
    goal: MAXIMIZE
    maxTrials: 90
    maxParallelTrials: 8
    algorithm: GRID_SEARCH
    hyperparameterMetricTag: val_accuracy
    resumePreviousJobId: null
    params:
    - parameterName: neurons_num
      type: DISCRETE
      discreteValues: [50, 75, 100, 125, 150]
    - parameterName: dropout
      type: DISCRETE
      discreteValues: [0.1, 0.25, 0.5]
    - parameterName: optimizer
      type: CATEGORICAL
      categoricalValues: ["RMSprop", "Adam"]
"""
    job = load_job(parse_yaml(text, "hptuning_config.yaml"), default_region="us-central1", partial=True)
    assert job.training_input.hyperparameters is not None
    assert job.training_input.hyperparameters.params is not None
    assert job.training_input.hyperparameters.params[1].discrete_values == [0.1, 0.25, 0.5]


def test_goal_type_unspecified_and_scale_none_are_the_api_s_own_values() -> None:
    """The enums' own unset values load (no SpecError) and are kept as written."""
    unspecified = load_job(tuning_job(with_hp(goal="GOAL_TYPE_UNSPECIFIED", algorithm="ALGORITHM_UNSPECIFIED")))
    hp = unspecified.training_input.hyperparameters
    assert hp is not None and (hp.goal, hp.algorithm) == ("GOAL_TYPE_UNSPECIFIED", "ALGORITHM_UNSPECIFIED")
    unscaled = load_job(tuning_job(with_param(2, scaleType="NONE"))).training_input.hyperparameters
    assert unscaled is not None and unscaled.params is not None and unscaled.params[2].scale_type == "NONE"


# --- every rule, with a failing example ------------------------------------------------------------------

CASES = [
    # goal
    (with_hp(goal="MAXIMISE"),
     f"{HP}.goal: 'MAXIMISE' is not a goal (did you mean MAXIMIZE?); allowed: MAXIMIZE, MINIMIZE"),
    (with_hp(goal="minimize"),
     f"{HP}.goal: 'minimize' is not a goal (did you mean MINIMIZE?); allowed: MAXIMIZE, MINIMIZE"),
    (with_hp(goal=None),
     f"{HP}.goal: required (unless resumePreviousJobId continues an earlier study); allowed: MAXIMIZE, MINIMIZE"),
    # metric tag
    (with_hp(hyperparameterMetricTag=" "),
     f"{HP}.hyperparameterMetricTag: is empty; allowed: the summary tag the trainer reports (unset: "
     "training/hptuning/metric)"),
    # counts
    (with_hp(maxTrials=0), f"{HP}.maxTrials: 0 is too small; allowed: 1 or more (unset means 1)"),
    (with_hp(maxParallelTrials=-2), f"{HP}.maxParallelTrials: -2 is too small; allowed: 1 or more (unset means 1)"),
    (with_hp(maxFailedTrials=-1),
     f"{HP}.maxFailedTrials: -1 is too small; allowed: 0 or more (0 or unset: the service decides when the job "
     "fails)"),
    (with_hp(maxTrials=2**31), f"{HP}.maxTrials: 2147483648 is too large; allowed: at most 2,147,483,647 (int32)"),
    # algorithm
    (with_hp(algorithm="GRID"),
     f"{HP}.algorithm: 'GRID' is not a search algorithm (did you mean GRID_SEARCH?); allowed: "
     "ALGORITHM_UNSPECIFIED, GRID_SEARCH, RANDOM_SEARCH"),
    (with_hp(algorithm="GRID_SEARCH"),
     f"{HP}.params[0].type: DOUBLE with algorithm GRID_SEARCH; allowed: INTEGER, CATEGORICAL or DISCRETE (a grid "
     "needs finitely many values), or another algorithm"),
    # params and names
    (with_hp(params=None),
     f"{HP}.params: required: at least one parameter to tune (unless resumePreviousJobId continues an earlier "
     "study); allowed: a list of {parameterName, type, ...}"),
    (with_hp(params=[]),
     f"{HP}.params: required: at least one parameter to tune (unless resumePreviousJobId continues an earlier "
     "study); allowed: a list of {parameterName, type, ...}"),
    (with_param(1, parameterName=None),
     f"{HP}.params[1].parameterName: required; allowed: the name the trainer takes as --NAME=VALUE, unique "
     "within params"),
    (with_param(2, parameterName="learning_rate"),
     f"{HP}.params[2].parameterName: 'learning_rate' is already the name of params[0]; allowed: a name unique "
     "within params"),
    # resume
    (with_hp(resumePreviousJobId="first-tuning-job"),
     f"{HP}.resumePreviousJobId: 'first-tuning-job' is not a job id; allowed: the id of an earlier hyperparameter "
     "tuning job (letters, digits and underscores, starting with a letter)"),
    # type and scale type
    (with_param(0, type=None), f"{HP}.params[0].type: required; allowed: DOUBLE, INTEGER, CATEGORICAL, DISCRETE"),
    (with_param(0, type="FLOAT"),
     f"{HP}.params[0].type: 'FLOAT' is not a parameter type (did you mean DOUBLE?); allowed: DOUBLE, INTEGER, "
     "CATEGORICAL, DISCRETE"),
    (with_param(0, type="PARAMETER_TYPE_UNSPECIFIED"),
     f"{HP}.params[0].type: 'PARAMETER_TYPE_UNSPECIFIED' is not a parameter type; allowed: DOUBLE, INTEGER, "
     "CATEGORICAL, DISCRETE"),
    (with_param(0, scaleType="LOG"),
     f"{HP}.params[0].scaleType: 'LOG' is not a scale type (did you mean UNIT_LOG_SCALE?); allowed: NONE, "
     "UNIT_LINEAR_SCALE, UNIT_LOG_SCALE, UNIT_REVERSE_LOG_SCALE"),
    # DOUBLE / INTEGER
    (with_param(0, minValue=None), f"{HP}.params[0].minValue: required for type DOUBLE; allowed: a number"),
    (with_param(1, maxValue=None), f"{HP}.params[1].maxValue: required for type INTEGER; allowed: a whole number"),
    (with_param(1, minValue="1.5"),
     f"{HP}.params[1].minValue: 1.5 is not a whole number; allowed: whole numbers for type INTEGER (or type "
     "DOUBLE)"),
    (with_param(0, minValue=0.5, maxValue=0.1),
     f"{HP}.params[0].minValue: 0.5 is not below maxValue 0.1; allowed: minValue < maxValue"),
    (with_param(1, minValue=4, maxValue=4),
     f"{HP}.params[1].minValue: 4 is not below maxValue 4; allowed: minValue < maxValue"),
    (with_param(0, minValue=0),
     f"{HP}.params[0].minValue: 0 with scaleType UNIT_LOG_SCALE; allowed: minValue > 0 (a log scale needs a "
     "strictly positive range), or scaleType UNIT_LINEAR_SCALE"),
    (with_param(0, categoricalValues=["a"]),
     f"{HP}.params[0].categoricalValues: is set but type is DOUBLE; allowed only with type CATEGORICAL"),
    (with_param(1, discreteValues=[1, 2]),
     f"{HP}.params[1].discreteValues: is set but type is INTEGER; allowed only with type DISCRETE"),
    # CATEGORICAL
    (with_param(2, categoricalValues=None),
     f"{HP}.params[2].categoricalValues: required for type CATEGORICAL; allowed: a list of at least one category "
     "(text)"),
    (with_param(2, categoricalValues=["relu", "tanh", "relu"]),
     f"{HP}.params[2].categoricalValues[2]: 'relu' repeats categoricalValues[0]; allowed: distinct categories"),
    (with_param(2, minValue=1),
     f"{HP}.params[2].minValue: is set but type is CATEGORICAL; allowed: unset (the categories are "
     "categoricalValues)"),
    (with_param(2, discreteValues=[1]),
     f"{HP}.params[2].discreteValues: is set but type is CATEGORICAL; allowed only with type DISCRETE"),
    (with_param(2, scaleType="UNIT_LINEAR_SCALE"),
     f"{HP}.params[2].scaleType: UNIT_LINEAR_SCALE is set but type is CATEGORICAL; allowed: unset (categories "
     "have no scale)"),
    # DISCRETE
    (with_param(3, discreteValues=None),
     f"{HP}.params[3].discreteValues: required for type DISCRETE; allowed: a list of at least one number, strictly "
     "increasing (e.g. [1.5, 2.5, 4.0])"),
    (with_param(3, discreteValues=[32, 128, 64]),
     f"{HP}.params[3].discreteValues[2]: 64 does not follow 128; allowed: strictly increasing values (e.g. "
     "[1.5, 2.5, 4.0])"),
    (with_param(3, discreteValues=[32, 32]),
     f"{HP}.params[3].discreteValues[1]: 32 does not follow 32; allowed: strictly increasing values (e.g. "
     "[1.5, 2.5, 4.0])"),
    (with_param(3, discreteValues=list(range(1, 1002))),
     f"{HP}.params[3].discreteValues: 1,001 values; allowed: at most 1,000"),
    (with_param(3, discreteValues=[0, 1]),
     f"{HP}.params[3].discreteValues: 0 with scaleType UNIT_REVERSE_LOG_SCALE; allowed: values > 0 (a log scale "
     "needs a strictly positive range), or scaleType UNIT_LINEAR_SCALE"),
    (with_param(3, maxValue=128),
     f"{HP}.params[3].maxValue: is set but type is DISCRETE, which ignores it; allowed: unset (the feasible "
     "points are discreteValues)"),
    (with_param(3, categoricalValues=["x"]),
     f"{HP}.params[3].categoricalValues: is set but type is DISCRETE; allowed only with type CATEGORICAL"),
    # shapes (the model; pydantic's wording never shows)
    (with_param(0, minValue=True),
     f"{HP}.params[0].minValue: True: a boolean is not a number; allowed: a number (e.g. 0.01)"),
    (with_param(0, maxValue="high"),
     f"{HP}.params[0].maxValue: 'high': text, not a number; allowed: a number (e.g. 0.01)"),
    (with_param(0, maxValue="1e999"),
     f"{HP}.params[0].maxValue: '1e999': not a finite number; allowed: a finite number (e.g. 0.01)"),
    (with_param(2, categoricalValues=[32, "64"]),
     f"{HP}.params[2].categoricalValues[0]: 32: a number, not text; allowed: text (quote it: \"32\")"),
    (with_hp(enableTrialEarlyStopping="maybe"),
     f"{HP}.enableTrialEarlyStopping: 'maybe': text, not a boolean; allowed: true or false"),
    (with_hp(params={"parameterName": "x"}),
     f"{HP}.params: {{'parameterName': 'x'}}: a mapping, not a list; allowed: a list ([a, b], or one '- item' line "
     "per entry)"),
    (with_hp(gaol="MAXIMIZE"),
     f"{HP}.gaol: unknown field 'gaol' (did you mean goal?); allowed: algorithm, enableTrialEarlyStopping, goal, "
     "hyperparameterMetricTag, maxFailedTrials, maxParallelTrials, maxTrials, params, resumePreviousJobId"),
]


@pytest.mark.parametrize(("hp", "expected"), CASES, ids=[c[1].split(":")[0].replace(HP, "hp") for c in CASES])
def test_each_rule_names_the_field_and_what_is_allowed(hp: dict[str, Any], expected: str) -> None:
    problems = problems_of(hp)
    assert expected in problems, problems
    assert all("allowed" in p for p in problems), problems


def test_every_problem_of_a_tuning_block_is_reported_at_once() -> None:
    hp = {"goal": "MAXIMISE", "params": [
        {"parameterName": "lr", "type": "FLOAT", "scaleType": "LOG"},
        {"parameterName": "act", "type": "CATEGORICAL"},
        {"parameterName": "x", "type": "DOUBLE", "minValue": 2, "maxValue": 1},
    ]}
    assert [p.split(": ")[0] for p in problems_of(hp)] == [
        f"{HP}.goal", f"{HP}.params[0].type", f"{HP}.params[0].scaleType", f"{HP}.params[1].categoricalValues",
        f"{HP}.params[2].minValue",
    ]


# --- Vertex AI: the HyperparameterTuningJob -----------------------------------------------------------------

def trial_spec() -> dict[str, Any]:
    """A CustomJobSpec as vertex_body builds one (written out: the translation takes it as it is)."""
    return {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 1},
        "replicaCount": "1",
        "pythonPackageSpec": {"executorImageUri": "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-11:latest",
                              "packageUris": ["gs://my-staging-bucket/trainer-0.1.tar.gz"],
                              "pythonModule": "trainer.task"},
    }], "baseOutputDirectory": {"outputUriPrefix": "gs://my-job-dir/jobs/tune"}}


def test_a_tuning_job_body_fits_the_aiplatform_schema() -> None:
    hp = load_job(tuning_job(GOOD)).training_input.hyperparameters
    assert hp is not None
    body = tuning_job_body(hp, trial_spec(), "tune-resnet", {"team": "ml"})
    problems = validate_body("aiplatform", "GoogleCloudAiplatformV1HyperparameterTuningJob", body,
                             strict_int64=True, reject_output_only=True)
    assert problems == []
    assert body["maxTrialCount"] == 20 and body["parallelTrialCount"] == 4 and body["maxFailedTrialCount"] == 2
    assert body["labels"] == {"team": "ml"}
    study = body["studySpec"]
    assert study["metrics"] == [{"metricId": "val_accuracy", "goal": "MAXIMIZE"}]
    assert study["parameters"] == [
        {"parameterId": "learning_rate", "doubleValueSpec": {"minValue": 0.0001, "maxValue": 0.1},
         "scaleType": "UNIT_LOG_SCALE"},
        {"parameterId": "layers", "integerValueSpec": {"minValue": "1", "maxValue": "8"},
         "scaleType": "UNIT_LINEAR_SCALE"},
        {"parameterId": "activation", "categoricalValueSpec": {"values": ["relu", "tanh"]}},
        {"parameterId": "batch_size", "discreteValueSpec": {"values": [32.0, 64.0, 128.0]},
         "scaleType": "UNIT_REVERSE_LOG_SCALE"},
    ]
    assert study["decayCurveStoppingSpec"] == EARLY_STOPPING["decayCurveStoppingSpec"]
    assert "algorithm" not in study


def test_the_trial_job_spec_is_taken_as_it_is() -> None:
    hp = HyperparameterSpec.model_validate({"goal": "MINIMIZE", "params": [
        {"parameterName": "x", "type": "DISCRETE", "discreteValues": [1, 2]}]})
    opaque = {"workerPoolSpecs": [{"machineSpec": {"machineType": "e2-standard-4"}, "replicaCount": "1",
                                   "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/i:1"}}],
              "baseOutputDirectory": {"outputUriPrefix": "gs://bucket/out"}}
    body = tuning_job_body(hp, opaque, "t")
    assert body["trialJobSpec"] == opaque and body["trialJobSpec"] is not opaque


def test_ml_defaults_become_vertex_s_required_fields() -> None:
    hp = HyperparameterSpec.model_validate({"goal": "GOAL_TYPE_UNSPECIFIED", "algorithm": "GRID_SEARCH",
                                            "params": [{"parameterName": "n", "type": "INTEGER", "minValue": 1,
                                                        "maxValue": 3, "scaleType": "NONE"}]})
    body = tuning_job_body(hp, trial_spec(), "t")
    assert body["maxTrialCount"] == 1 and body["parallelTrialCount"] == 1 and "maxFailedTrialCount" not in body
    assert body["studySpec"]["metrics"] == [{"metricId": "training/hptuning/metric", "goal": "MAXIMIZE"}]
    assert body["studySpec"]["algorithm"] == "GRID_SEARCH"
    assert "scaleType" not in body["studySpec"]["parameters"][0]
    assert "decayCurveStoppingSpec" not in body["studySpec"]
    assert validate_body("aiplatform", "GoogleCloudAiplatformV1HyperparameterTuningJob", body,
                         strict_int64=True, reject_output_only=True) == []


def test_what_vertex_cannot_take_is_refused_with_the_field_named() -> None:
    resume = HyperparameterSpec.model_validate({"resumePreviousJobId": "first_job", "maxTrials": 3})
    with pytest.raises(SpecError) as caught:
        study_spec(resume)
    assert [str(p) for p in caught.value.problems] == [
        f"{HP}.resumePreviousJobId: has no Vertex AI equivalent (a HyperparameterTuningJob cannot continue an AI "
        "Platform study); allowed on Vertex AI: unset, with goal and params (a new study)",
        f"{HP}.goal: required on Vertex AI (studySpec.metrics); allowed: MAXIMIZE, MINIMIZE",
        f"{HP}.params: required on Vertex AI (studySpec.parameters); allowed: a list of at least one parameter",
    ]
    spaced = HyperparameterSpec.model_validate({"goal": "MAXIMIZE", "hyperparameterMetricTag": "val acc", "params": [
        {"parameterName": "learning rate", "type": "DOUBLE", "minValue": 0.1, "maxValue": 1},
        {"parameterName": "d", "type": "DISCRETE", "discreteValues": [1, 1.00000000000001]}]})
    with pytest.raises(SpecError) as caught:
        study_spec(spaced)
    assert [str(p) for p in caught.value.problems] == [
        f"{HP}.hyperparameterMetricTag: 'val acc' contains whitespace; allowed on Vertex AI: a metric id without "
        "whitespace (Vertex AI refuses it)",
        f"{HP}.params[0].parameterName: 'learning rate' contains whitespace; allowed on Vertex AI: a parameter name "
        "without whitespace (Vertex AI refuses it)",
        f"{HP}.params[1].discreteValues[1]: 1.00000000000001 is within 1e-10 of 1.0; allowed on Vertex AI: values "
        "at least 1e-10 apart",
    ]
