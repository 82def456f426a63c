"""Tuning on Vertex AI, the pure side: a tuning config as `gcloud ai hp-tuning-jobs create --config` reads it
(models held to aiplatform.v1.json, every rule with a failing example), a trainingInput with hyperparameters
rendered as a HyperparameterTuningJob, which backend creates what, the best trial of an answer, and the command
line recognising the native config."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from gcp_training_jobs.backends import backend_for, get_backend
from gcp_training_jobs.backends.vertex import VertexBackend
from gcp_training_jobs.backends.vertex_tuning import VertexTuningBackend, best_trial
from gcp_training_jobs.cli.main import main
from gcp_training_jobs.emulator.discovery import get_schema, output_only_fields, validate_body
from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.io.vocabulary import is_custom_job_spec, is_tuning_config
from gcp_training_jobs.jobspec.load import (
    judge_job,
    judge_tuning_job,
    load_job,
    load_tuning_job,
    render_body,
    translation,
)
from gcp_training_jobs.jobspec.render.bodies import TRAINING, TUNING, job_kind, tuning_body
from gcp_training_jobs.jobspec.render.custom_job import custom_job_body
from gcp_training_jobs.jobspec.vocab import tuning as tuning_models
from gcp_training_jobs.jobspec.vocab.tuning import TuningConfig
from tests.helpers import tuning_training_input

SCHEMA = "GoogleCloudAiplatformV1HyperparameterTuningJob"
IMAGE = "us-docker.pkg.dev/my-proj/trainers/resnet:1.0"

#: gcloud's own example (command_lib/ai/hp_tuning_jobs/flags.py, the --config help), with an image of today.
GCLOUD_EXAMPLE = f"""
displayName: TestHpTuningJob
maxTrialCount: 1
parallelTrialCount: 1
studySpec:
  metrics:
  - metricId: x
    goal: MINIMIZE
  parameters:
  - parameterId: z
    integerValueSpec:
      minValue: 1
      maxValue: 100
  algorithm: RANDOM_SEARCH
trialJobSpec:
  workerPoolSpecs:
  - machineSpec:
      machineType: n1-standard-4
    replicaCount: 1
    containerSpec:
      imageUri: {IMAGE}
"""


def example() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(GCLOUD_EXAMPLE)
    return data


def assert_tuning_body_valid(body: dict[str, Any]) -> None:
    assert validate_body("aiplatform", SCHEMA, body, strict_int64=True, reject_output_only=True) == []


def problems_of(data: dict[str, Any], region: str = "us-central1") -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_tuning_job(data, region=region, region_at="--region")
    return [str(p) for p in caught.value.problems]


def changed(change: Any) -> dict[str, Any]:
    data = example()
    change(data)
    return data





# --- the models follow the discovery document -----------------------------------------------------------------

MODELS: dict[type[BaseModel], str] = {
    tuning_models.TuningConfig: SCHEMA,
    tuning_models.StudySpec: "GoogleCloudAiplatformV1StudySpec",
    tuning_models.MetricSpec: "GoogleCloudAiplatformV1StudySpecMetricSpec",
    tuning_models.SafetyMetricConfig: "GoogleCloudAiplatformV1StudySpecMetricSpecSafetyMetricConfig",
    tuning_models.ParameterSpec: "GoogleCloudAiplatformV1StudySpecParameterSpec",
    tuning_models.DoubleValueSpec: "GoogleCloudAiplatformV1StudySpecParameterSpecDoubleValueSpec",
    tuning_models.IntegerValueSpec: "GoogleCloudAiplatformV1StudySpecParameterSpecIntegerValueSpec",
    tuning_models.CategoricalValueSpec: "GoogleCloudAiplatformV1StudySpecParameterSpecCategoricalValueSpec",
    tuning_models.DiscreteValueSpec: "GoogleCloudAiplatformV1StudySpecParameterSpecDiscreteValueSpec",
    tuning_models.ConditionalParameterSpec: "GoogleCloudAiplatformV1StudySpecParameterSpecConditionalParameterSpec",
    tuning_models.CategoricalValueCondition:
        "GoogleCloudAiplatformV1StudySpecParameterSpecConditionalParameterSpecCategoricalValueCondition",
    tuning_models.DiscreteValueCondition:
        "GoogleCloudAiplatformV1StudySpecParameterSpecConditionalParameterSpecDiscreteValueCondition",
    tuning_models.IntValueCondition:
        "GoogleCloudAiplatformV1StudySpecParameterSpecConditionalParameterSpecIntValueCondition",
    tuning_models.DecayCurveStoppingSpec: "GoogleCloudAiplatformV1StudySpecDecayCurveAutomatedStoppingSpec",
    tuning_models.MedianStoppingSpec: "GoogleCloudAiplatformV1StudySpecMedianAutomatedStoppingSpec",
    tuning_models.ConvexStoppingSpec: "GoogleCloudAiplatformV1StudySpecConvexAutomatedStoppingSpec",
    tuning_models.StudyTimeConstraint: "GoogleCloudAiplatformV1StudyTimeConstraint",
    tuning_models.StudyStoppingConfig: "GoogleCloudAiplatformV1StudySpecStudyStoppingConfig",
    tuning_models.EncryptionSpec: "GoogleCloudAiplatformV1EncryptionSpec",
}


@pytest.mark.parametrize("model", list(MODELS), ids=lambda m: m.__name__)
def test_each_model_has_exactly_the_schema_s_writable_fields(model: type[BaseModel]) -> None:
    schema = MODELS[model]
    fields = {info.alias or name for name, info in model.model_fields.items()}
    writable = set(get_schema("aiplatform", schema)["properties"]) - output_only_fields("aiplatform", schema)
    assert fields == writable


# --- the native config --------------------------------------------------------------------------------------------

def test_gcloud_s_own_example_renders_to_a_body_the_schema_accepts() -> None:
    job = load_tuning_job(example(), region="us-central1")
    body = render_body(job, "vertex", "tune_x")
    assert_tuning_body_valid(body)
    assert body["displayName"] == "tune_x" and body["labels"] == {"pulumi-job": "tune_x"}
    assert body["studySpec"]["parameters"][0]["integerValueSpec"] == {"minValue": "1", "maxValue": "100"}
    assert body["trialJobSpec"]["workerPoolSpecs"][0]["replicaCount"] == "1"
    assert job.job_id == "TestHpTuningJob"  # the file's displayName, unless --display-name (job_id) replaces it


def test_counts_default_to_one_as_gcloud_fills_them_and_flags_labels_replace_the_file_s() -> None:
    data = changed(lambda d: (d.pop("maxTrialCount"), d.pop("parallelTrialCount"), d.update(labels={"a": "b"})))
    job = load_tuning_job(data, region="us-central1", labels={"team": "ml"}, job_id="tune_1")
    body = render_body(job, "vertex")
    assert (body["maxTrialCount"], body["parallelTrialCount"]) == (1, 1)
    assert body["labels"] == {"team": "ml", "pulumi-job": "tune_1"} and body["displayName"] == "tune_1"
    assert_tuning_body_valid(body)


def test_a_single_trial_pool_mapping_and_every_field_is_carried_as_given() -> None:
    def full(d: dict[str, Any]) -> None:
        d["trialJobSpec"]["workerPoolSpecs"] = d["trialJobSpec"]["workerPoolSpecs"][0]
        d["trialJobSpec"]["baseOutputDirectory"] = {"outputUriPrefix": "gs://out/tune"}
        d["maxFailedTrialCount"] = 2
        d["encryptionSpec"] = {"kmsKeyName": "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"}
        d["studySpec"].update(measurementSelectionType="BEST_MEASUREMENT", medianAutomatedStoppingSpec={
            "useElapsedDuration": True}, studyStoppingConfig={"maxNumTrialsNoProgress": 3,
                                                               "maximumRuntimeConstraint": {"maxDuration": "3600s"}})
        d["studySpec"]["parameters"].append({"parameterId": "opt", "categoricalValueSpec": {"values": ["adam", "sgd"]},
                                             "conditionalParameterSpecs": [{
                                                 "parentCategoricalValues": {"values": ["sgd"]},
                                                 "parameterSpec": {"parameterId": "momentum", "discreteValueSpec": {
                                                     "values": [0.5, 0.9]}}}]})
    job = load_tuning_job(changed(full), region="us-central1")
    assert job.single_pool
    body = render_body(job, "vertex", "t")
    assert_tuning_body_valid(body)
    assert body["maxFailedTrialCount"] == 2 and body["encryptionSpec"]["kmsKeyName"].endswith("/k")
    assert body["studySpec"]["parameters"][1]["conditionalParameterSpecs"][0]["parameterSpec"]["parameterId"] == \
        "momentum"


PROBLEMS: list[tuple[Any, str]] = [
    (lambda d: d.pop("studySpec"), "studySpec: required; allowed: a StudySpec with metrics and parameters"),
    (lambda d: d["studySpec"].update(metrics=[]), "studySpec.metrics: required; allowed: a list of at least one"),
    (lambda d: d["studySpec"].update(parameters=[]), "studySpec.parameters: required; allowed: a list of at least"),
    (lambda d: d.pop("trialJobSpec"), "trialJobSpec: required; allowed: a CustomJobSpec"),
    (lambda d: d.update(maxTrialCount=0), "maxTrialCount: 0 is too small; allowed: 1 or more (unset: 1"),
    (lambda d: d.update(maxTrialCount=4, parallelTrialCount=5),
     "parallelTrialCount: 5 is more than maxTrialCount 4; allowed: at most maxTrialCount"),
    (lambda d: d.update(maxFailedTrialCount=-1), "maxFailedTrialCount: -1 is too small; allowed: 0 or more"),
    (lambda d: d.update(displayName="x" * 129), "displayName: 129 characters; allowed: 1 to 128"),
    (lambda d: d.update(labels={"Team": "ml"}), "labels.Team: 'Team' is not a valid label key"),
    (lambda d: d.update(encryptionSpec={"kmsKeyName": "projects/p/locations/europe-west4/keyRings/r/cryptoKeys/k"}),
     "encryptionSpec.kmsKeyName: is in europe-west4, not in the job's region us-central1"),
    (lambda d: d["studySpec"]["metrics"][0].update(goal="MINIMISE"),
     "studySpec.metrics[0].goal: 'MINIMISE' is not a goal (did you mean MINIMIZE?); allowed: MAXIMIZE, MINIMIZE"),
    (lambda d: d["studySpec"]["metrics"][0].pop("goal"), "studySpec.metrics[0].goal: required; allowed: MAXIMIZE"),
    (lambda d: d["studySpec"]["metrics"][0].update(metricId="val loss"),
     "studySpec.metrics[0].metricId: 'val loss' contains whitespace"),
    (lambda d: d["studySpec"]["metrics"].append({"metricId": "x", "goal": "MAXIMIZE"}),
     "studySpec.metrics[1].metricId: 'x' is already the id of studySpec.metrics[0].metricId"),
    (lambda d: d["studySpec"]["metrics"][0].update(safetyConfig={"desiredMinSafeTrialsFraction": 2}),
     "studySpec.metrics[0].safetyConfig.desiredMinSafeTrialsFraction: 2.0; allowed: 0.0 to 1.0"),
    (lambda d: d["studySpec"]["metrics"][0].update(safetyConfig={}),
     "studySpec.metrics: has only safety metrics (safetyConfig); allowed: at least one objective metric"),
    (lambda d: d["studySpec"].update(algorithm="GRID"),
     "studySpec.algorithm: 'GRID' is not a search algorithm (did you mean GRID_SEARCH?)"),
    (lambda d: d["studySpec"].update(measurementSelectionType="LAST"),
     "studySpec.measurementSelectionType: 'LAST' is not a measurement selection type"),
    (lambda d: d["studySpec"].update(observationNoise="LOW"),
     "studySpec.observationNoise: is Vertex AI Vizier only"),
    (lambda d: d["studySpec"].update(decayCurveStoppingSpec={}, medianAutomatedStoppingSpec={}),
     "studySpec.medianAutomatedStoppingSpec: is set with decayCurveStoppingSpec; allowed: one automated stopping"),
    (lambda d: d["studySpec"].update(convexAutomatedStoppingSpec={"learningRateParameterName": "lr"}),
     "studySpec.convexAutomatedStoppingSpec.learningRateParameterName: 'lr' is not a parameter of the study"),
    (lambda d: d["studySpec"].update(studyStoppingConfig={"maxDurationNoProgress": "1h"}),
     "studySpec.studyStoppingConfig.maxDurationNoProgress: '1h' is not a duration"),
    (lambda d: d["studySpec"]["parameters"][0].pop("parameterId"),
     "studySpec.parameters[0].parameterId: required; allowed: the name the trainer takes as --NAME=VALUE"),
    (lambda d: d["studySpec"]["parameters"].append({"parameterId": "z", "discreteValueSpec": {"values": [1]}}),
     "studySpec.parameters[1].parameterId: 'z' is already the id of studySpec.parameters[0].parameterId"),
    (lambda d: d["studySpec"]["parameters"][0].pop("integerValueSpec"),
     "studySpec.parameters[0]: has no value spec; allowed: one of doubleValueSpec, integerValueSpec"),
    (lambda d: d["studySpec"]["parameters"][0].update(doubleValueSpec={"minValue": 0.1, "maxValue": 1}),
     "studySpec.parameters[0]: has doubleValueSpec and integerValueSpec; allowed: exactly one value spec"),
    (lambda d: d["studySpec"]["parameters"][0]["integerValueSpec"].update(minValue=200),
     "studySpec.parameters[0].integerValueSpec.minValue: 200 is above maxValue 100; allowed: minValue <= maxValue"),
    (lambda d: d["studySpec"]["parameters"][0]["integerValueSpec"].pop("maxValue"),
     "studySpec.parameters[0].integerValueSpec.maxValue: required"),
    (lambda d: d["studySpec"]["parameters"][0].update(integerValueSpec={"minValue": 0, "maxValue": 9},
                                                      scaleType="UNIT_LOG_SCALE"),
     "studySpec.parameters[0].integerValueSpec.minValue: 0 with scaleType UNIT_LOG_SCALE; allowed: minValue > 0"),
    (lambda d: d["studySpec"]["parameters"][0].update(scaleType="LOG"),
     "studySpec.parameters[0].scaleType: 'LOG' is not a scale type (did you mean UNIT_LOG_SCALE?)"),
    (lambda d: d["studySpec"]["parameters"][0]["integerValueSpec"].update(defaultValue=3),
     "studySpec.parameters[0].integerValueSpec.defaultValue: is Vertex AI Vizier only"),
    (lambda d: d["studySpec"]["parameters"][0].update(
        integerValueSpec=None, categoricalValueSpec={"values": ["a", "a"]}, scaleType="UNIT_LINEAR_SCALE"),
     "studySpec.parameters[0].scaleType: UNIT_LINEAR_SCALE on a CATEGORICAL parameter; allowed: unset"),
    (lambda d: d["studySpec"]["parameters"][0].update(integerValueSpec=None, categoricalValueSpec={"values": ["a",
                                                                                                             "a"]}),
     "studySpec.parameters[0].categoricalValueSpec.values[1]: 'a' repeats values[0]; allowed: distinct categories"),
    (lambda d: d["studySpec"]["parameters"][0].update(integerValueSpec=None, discreteValueSpec={"values": [2, 1]}),
     "studySpec.parameters[0].discreteValueSpec.values[1]: 1.0 does not follow 2.0 by at least 1e-10"),
    (lambda d: d["studySpec"]["parameters"][0].update(integerValueSpec=None, discreteValueSpec={"values": [0, 1]},
                                                      scaleType="UNIT_REVERSE_LOG_SCALE"),
     "studySpec.parameters[0].discreteValueSpec.values: 0.0 with scaleType UNIT_REVERSE_LOG_SCALE; allowed: values"),
    (lambda d: d["studySpec"].update(algorithm="GRID_SEARCH", parameters=[
        {"parameterId": "lr", "doubleValueSpec": {"minValue": 0.1, "maxValue": 1}}]),
     "studySpec.parameters[0].doubleValueSpec: a DOUBLE parameter with algorithm GRID_SEARCH"),
    (lambda d: d["studySpec"]["parameters"][0].update(conditionalParameterSpecs=[
        {"parentCategoricalValues": {"values": ["a"]}, "parameterSpec": {"parameterId": "c", "discreteValueSpec": {
            "values": [1]}}}]),
     "studySpec.parameters[0].conditionalParameterSpecs[0]: has parentCategoricalValues; allowed: parentIntValues "
     "alone (the parent's type)"),
    (lambda d: d["studySpec"]["parameters"][0].update(conditionalParameterSpecs=[
        {"parentIntValues": {"values": [101]}, "parameterSpec": {"parameterId": "c", "discreteValueSpec": {
            "values": [1]}}}]),
     "studySpec.parameters[0].conditionalParameterSpecs[0].parentIntValues.values[0]: 101 is not a value of the "
     "parent parameter 'z'"),
    (lambda d: d["studySpec"]["parameters"][0].update(conditionalParameterSpecs=[{"parentIntValues": {"values": [3]}}]),
     "studySpec.parameters[0].conditionalParameterSpecs[0].parameterSpec: required"),
    (lambda d: d["studySpec"]["parameters"][0].update(conditionalParameterSpecs=[
        {"parentIntValues": {"values": [3]}, "parameterSpec": {"parameterId": "c d", "discreteValueSpec": {
            "values": [1]}}}]),
     "studySpec.parameters[0].conditionalParameterSpecs[0].parameterSpec.parameterId: 'c d' contains whitespace"),
    (lambda d: d["trialJobSpec"]["workerPoolSpecs"][0]["machineSpec"].update(acceleratorType="NVIDIA_TESLA_K80",
                                                                              acceleratorCount=1),
     "trialJobSpec.workerPoolSpecs[0].machineSpec.acceleratorType: NVIDIA_TESLA_K80 is not offered by Vertex AI"),
    (lambda d: d["trialJobSpec"]["workerPoolSpecs"][0].update(replicaCount=2),
     "trialJobSpec.workerPoolSpecs[0].replicaCount"),
    (lambda d: d.update(state="JOB_STATE_RUNNING"), "state: unknown field 'state'; allowed: displayName"),
    (lambda d: d["studySpec"]["metrics"][0].update(metric_id="x"),
     "studySpec.metrics[0].metric_id: unknown field 'metric_id' (did you mean metricId? keys are camelCase)"),
]


@pytest.mark.parametrize(("change", "expected"), PROBLEMS, ids=[e.split(":")[0] + f"-{i}"
                                                                 for i, (_, e) in enumerate(PROBLEMS)])
def test_every_rule_on_a_tuning_config_names_the_field_and_what_is_allowed(change: Any, expected: str) -> None:
    problems = problems_of(changed(change))
    assert any(p.startswith(expected) for p in problems), problems


def test_the_region_is_judged_for_the_trials_and_named_where_it_was_given() -> None:
    problems = problems_of(example(), region="mars-central1")
    assert any(p.startswith("--region: 'mars-central1'") for p in problems), problems


def test_a_single_trial_pool_is_named_as_written() -> None:
    def single(d: dict[str, Any]) -> None:
        d["trialJobSpec"]["workerPoolSpecs"] = {"machineSpec": {"machine_type": "n1-standard-4"}}
    assert problems_of(changed(single)) == [
        "trialJobSpec.workerPoolSpecs.machineSpec.machine_type: unknown field 'machine_type' (did you mean "
        "machineType? keys are camelCase); allowed: acceleratorCount, acceleratorType, gpuPartitionSize, machineType, "
        "reservationAffinity, tpuTopology"]


# --- a trainingInput with hyperparameters on Vertex -------------------------------------------------------------

def test_a_tuning_training_input_renders_as_a_hyperparameter_tuning_job_on_vertex() -> None:
    job = load_job(tuning_training_input(), backend="vertex")
    body = render_body(job, "vertex", "tune_1")
    assert_tuning_body_valid(body)
    assert body["maxTrialCount"] == 6 and body["parallelTrialCount"] == 2
    assert body["studySpec"]["metrics"] == [{"metricId": "accuracy", "goal": "MAXIMIZE"}]
    pool = body["trialJobSpec"]["workerPoolSpecs"][0]
    assert pool["containerSpec"] == {"imageUri": IMAGE}
    assert pool["machineSpec"] == {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4",
                                   "acceleratorCount": 1}
    assert body["trialJobSpec"]["baseOutputDirectory"] == {"outputUriPrefix": "gs://my-job-dir/jobs/tune"}
    assert render_body(job, "ai-platform", "tune_1")["trainingInput"]["hyperparameters"]["maxTrials"] == 6


def test_what_neither_the_study_nor_the_trials_can_take_is_reported_together() -> None:
    data = tuning_training_input()
    data["trainingInput"]["hyperparameters"]["params"][0]["parameterName"] = "learning rate"
    data["trainingInput"]["masterConfig"]["acceleratorConfig"]["type"] = "NVIDIA_TESLA_K80"
    job = load_job(data)  # judged as ml v1 takes it
    with pytest.raises(SpecError) as caught:
        render_body(job, "vertex", "t")
    paths = [p.path for p in caught.value.problems]
    assert "trainingInput.masterConfig.acceleratorConfig.type" in paths
    assert "trainingInput.hyperparameters.params[0].parameterName" in paths


def test_a_custom_job_never_silently_drops_the_hyperparameters() -> None:
    job = load_job(tuning_training_input(), backend="vertex")
    with pytest.raises(SpecError) as caught:
        custom_job_body(job, "t", {}, pools=translation(job)[0])
    assert [str(p) for p in caught.value.problems] == [
        "trainingInput.hyperparameters: makes the job a Vertex AI HyperparameterTuningJob, not a CustomJob "
        "(render.tuning_body, backends.backend_for); allowed in a CustomJob: unset"]
    with pytest.raises(SpecError):
        custom_job_body(load_tuning_job(example(), region="us-central1"), "t", {}, pools=())


def test_a_tuning_config_has_no_ml_v1_form_and_a_training_job_no_study() -> None:
    with pytest.raises(SpecError) as caught:
        render_body(load_tuning_job(example(), region="us-central1"), "ai-platform", "t")
    assert caught.value.problems[0].path == "studySpec"
    untuned = tuning_training_input()
    del untuned["trainingInput"]["hyperparameters"]
    with pytest.raises(SpecError):
        tuning_body(load_job(untuned, backend="vertex"), "t", {}, pools=())


# --- which backend creates what -----------------------------------------------------------------------------------

def test_job_kind_and_backend_for_pick_the_tuning_backend_from_the_job() -> None:
    tuned = tuning_training_input()
    parsed = load_job(tuned, backend="vertex")
    native = load_tuning_job(example(), region="us-central1")
    for job in (tuned, parsed, native, example()):
        assert job_kind(job, "vertex") == TUNING
        assert isinstance(backend_for("vertex", job), VertexTuningBackend)
    untuned = copy.deepcopy(tuned)
    del untuned["trainingInput"]["hyperparameters"]
    assert job_kind(untuned, "vertex") == job_kind(None, "vertex") == job_kind(tuned, "ai-platform") == TRAINING
    assert type(backend_for("vertex", untuned)) is VertexBackend
    assert backend_for("ai-platform", tuned).name == "ai-platform"
    assert isinstance(get_backend("vertex", TUNING), VertexTuningBackend)
    with pytest.raises(ValueError, match="Vertex AI resource"):
        backend_for("ai-platform", native)
    with pytest.raises(ValueError, match="unknown kind"):
        get_backend("vertex", "batch")
    assert not get_backend("vertex", TUNING).supports_label_update


def test_both_tuning_forms_render_once_to_a_tuning_body_stamped_with_id_and_labels() -> None:
    for judged in (judge_job(tuning_training_input(), backend="vertex"),
                   judge_tuning_job(example(), region="us-east1")):
        assert judged.kind == TUNING
        body = judged.body_for("tune_2", {"pulumi-job": "tune_2", "pulumi-resource": "r" * 20})
        assert_tuning_body_valid(body)
        assert body["displayName"] == "tune_2"
        assert body["labels"] == {"pulumi-job": "tune_2", "pulumi-resource": "r" * 20}


# --- the best trial -----------------------------------------------------------------------------------------------

def trial(number: int, value: float, state: str = "SUCCEEDED", metric: str = "loss") -> dict[str, Any]:
    return {"id": str(number), "state": state, "parameters": [{"parameterId": "lr", "value": number / 10}],
            "finalMeasurement": {"metrics": [{"metricId": metric, "value": value}]}}


@pytest.mark.parametrize(("goal", "best"), [("MINIMIZE", "2"), ("MAXIMIZE", "3"), (None, "3")])
def test_the_best_trial_follows_the_objective_s_goal(goal: str | None, best: str) -> None:
    metric: dict[str, Any] = {"metricId": "loss", **({"goal": goal} if goal else {})}
    resource = {"studySpec": {"metrics": [{"metricId": "safe", "goal": "MAXIMIZE", "safetyConfig": {}}, metric]},
                "trials": [trial(1, 0.5), trial(2, 0.2), trial(3, 0.9), trial(4, 0.1, "ACTIVE"),
                           trial(5, 0.05, metric="other"), trial(6, 0.9)]}
    found = best_trial(resource)
    assert found is not None and found["id"] == best  # the first of equals (3 before 6)
    assert found["parameters"] == {"lr": int(best) / 10} and set(found["metrics"]) == {"loss"}
    outputs = VertexTuningBackend().outputs({"name": "projects/p/locations/l/hyperparameterTuningJobs/7",
                                             **resource}, _target())
    assert outputs["trialCount"] == 6 and outputs["bestTrial"] == found


def test_a_tuning_job_links_its_own_console_page() -> None:
    from gcp_training_jobs.backends.vertex import VertexBackend

    name = {"name": "projects/p/locations/us-central1/hyperparameterTuningJobs/7"}
    assert VertexTuningBackend().outputs(name, _target())["consoleUrl"] == (
        f"https://console.cloud.google.com/agent-platform/locations/{_target().region}/training/"
        f"hyperparameter-tuning-jobs/7?project={_target().project}")
    assert VertexBackend().outputs(name, _target())["consoleUrl"] == (
        f"https://console.cloud.google.com/agent-platform/locations/{_target().region}/training/7"
        f"?project={_target().project}"), "a custom job's page, as the SDK links it"


def test_no_best_trial_before_one_has_succeeded() -> None:
    assert best_trial({"studySpec": {"metrics": [{"metricId": "loss"}]}, "trials": [trial(1, 0.3, "ACTIVE")]}) is None
    assert best_trial({}) is None
    assert VertexTuningBackend().outputs({"name": "x"}, _target())["trialCount"] == 0


def _target() -> Any:
    from gcp_training_jobs.backends.base import Target

    return Target("p", "us-central1")


# --- the command line ---------------------------------------------------------------------------------------------

def test_a_native_tuning_config_is_recognised_by_validate_and_render(tmp_path: Any,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "hp.yaml"
    path.write_text(GCLOUD_EXAMPLE)
    assert is_tuning_config(example()) and not is_custom_job_spec(example())
    assert main(["validate", str(path), "--region", "us-central1"]) == 0
    assert ": ok (job)" in capsys.readouterr().out
    assert main(["render", str(path), "--region", "us-central1", "--labels", "team=ml"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert_tuning_body_valid(body)
    assert body["displayName"] == "hp" and body["labels"] == {"team": "ml", "pulumi-job": "hp"}
    assert main(["validate", str(path), "--backend", "ai-platform"]) == 1
    assert "studySpec: a tuning config (studySpec, trialJobSpec) is Vertex AI's vocabulary and runs on Vertex AI only" \
        in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text(GCLOUD_EXAMPLE.replace("goal: MINIMIZE", "goal: MINIMISE"))
    assert main(["validate", str(bad)]) == 1
    assert "studySpec.metrics[0].goal: 'MINIMISE' is not a goal (did you mean MINIMIZE?)" in capsys.readouterr().out


def test_a_tuning_training_input_renders_for_vertex_from_the_command_line(tmp_path: Any,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tune.yaml"
    path.write_text(yaml.safe_dump(tuning_training_input()))
    assert main(["render", str(path), "--backend", "vertex"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert_tuning_body_valid(body)
    assert body["displayName"] == "tune" and "trialJobSpec" in body
    assert TuningConfig.model_validate({k: v for k, v in body.items() if k != "labels"}).max_trial_count == 6
