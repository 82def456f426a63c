"""Typed models of a Vertex AI hyperparameter tuning job in its own vocabulary: the file that `gcloud ai
hp-tuning-jobs create --config FILE --display-name NAME --region R` reads.

Source: gcloud's own code (lib/googlecloudsdk in the Google Cloud CLI, https://cloud.google.com/sdk/docs/install,
read 2026-11-22):
- command_lib/ai/hp_tuning_jobs/flags.py, --config: "This file should be a YAML document containing a
  HyperparameterTuningSpec. If an option is specified both in the configuration file **and** via command line
  arguments, the command line arguments override the configuration file", with the example `displayName`,
  `maxTrialCount`, `parallelTrialCount`, `studySpec` (metrics, parameters, algorithm) and `trialJobSpec`
  (workerPoolSpecs);
- api_lib/ai/hp_tuning_jobs/client.py, Create: the file is turned into a whole HyperparameterTuningJob message
  (`messages_util.DictToMessageWithErrorCheck`: camelCase field names, unknown fields an error); maxTrialCount
  and parallelTrialCount are 1 when neither the file nor a flag sets them; --display-name (required) and
  --labels replace the file's.

So the file is an aiplatform v1 HyperparameterTuningJob without its output-only fields: studySpec, trialJobSpec
(a CustomJobSpec, the models of vertex_models), maxTrialCount, parallelTrialCount, maxFailedTrialCount,
displayName, labels, encryptionSpec. Field for field the models follow aiplatform.v1.json (revision 20261106;
tests/test_vertex_tuning.py holds them to it); like the other models they check shape and types only, and
gcp_training_jobs.jobspec.rules.vertex_tuning judges the values.
"""

from __future__ import annotations

from typing import Any

from pydantic import StrictBool, ValidationError

from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.problems import Problem, from_validation_error
from gcp_training_jobs.jobspec.io.vocabulary import TRIAL, trial_path
from gcp_training_jobs.jobspec.vocab.custom_job import CamelModel, CustomJobSpec
from gcp_training_jobs.jobspec.vocab.training_input import Double, Int32, Int64

#: gcloud's value of maxTrialCount and parallelTrialCount when neither the file nor a flag sets them.
GCLOUD_DEFAULT_COUNT = 1


class SafetyMetricConfig(CamelModel):
    """StudySpecMetricSpec.safetyConfig: the metric is a safety metric (safe search)."""

    safety_threshold: Double | None = None
    desired_min_safe_trials_fraction: Double | None = None


class MetricSpec(CamelModel):
    """StudySpec.metrics[]: a metric the trainer reports and its goal."""

    metric_id: str | None = None
    goal: str | None = None
    safety_config: SafetyMetricConfig | None = None


class DoubleValueSpec(CamelModel):
    min_value: Double | None = None
    max_value: Double | None = None
    default_value: Double | None = None


class IntegerValueSpec(CamelModel):
    min_value: Int64 | None = None
    max_value: Int64 | None = None
    default_value: Int64 | None = None


class CategoricalValueSpec(CamelModel):
    values: list[str] | None = None
    default_value: str | None = None


class DiscreteValueSpec(CamelModel):
    values: list[Double] | None = None
    default_value: Double | None = None


class CategoricalValueCondition(CamelModel):
    values: list[str] | None = None


class DiscreteValueCondition(CamelModel):
    values: list[Double] | None = None


class IntValueCondition(CamelModel):
    values: list[Int64] | None = None


class ConditionalParameterSpec(CamelModel):
    """A parameter searched only when its parent parameter takes one of the values named."""

    parameter_spec: ParameterSpec | None = None
    parent_categorical_values: CategoricalValueCondition | None = None
    parent_discrete_values: DiscreteValueCondition | None = None
    parent_int_values: IntValueCondition | None = None


class ParameterSpec(CamelModel):
    """StudySpec.parameters[]: one parameter and its feasible values (one of the four value specs)."""

    parameter_id: str | None = None
    double_value_spec: DoubleValueSpec | None = None
    integer_value_spec: IntegerValueSpec | None = None
    categorical_value_spec: CategoricalValueSpec | None = None
    discrete_value_spec: DiscreteValueSpec | None = None
    scale_type: str | None = None
    conditional_parameter_specs: list[ConditionalParameterSpec] | None = None

    @property
    def value_specs(self) -> dict[str, Any]:
        """The value specs set, by field name (a valid parameter has exactly one)."""
        specs = {"doubleValueSpec": self.double_value_spec, "integerValueSpec": self.integer_value_spec,
                 "categoricalValueSpec": self.categorical_value_spec, "discreteValueSpec": self.discrete_value_spec}
        return {name: spec for name, spec in specs.items() if spec is not None}


ConditionalParameterSpec.model_rebuild()


class DecayCurveStoppingSpec(CamelModel):
    use_elapsed_duration: StrictBool | None = None


class MedianStoppingSpec(CamelModel):
    use_elapsed_duration: StrictBool | None = None


class ConvexStoppingSpec(CamelModel):
    learning_rate_parameter_name: str | None = None
    max_step_count: Int64 | None = None
    min_measurement_count: Int64 | None = None
    min_step_count: Int64 | None = None
    update_all_stopped_trials: StrictBool | None = None
    use_elapsed_duration: StrictBool | None = None


class StudyTimeConstraint(CamelModel):
    end_time: str | None = None
    max_duration: str | None = None


class StudyStoppingConfig(CamelModel):
    max_duration_no_progress: str | None = None
    max_num_trials: Int32 | None = None
    max_num_trials_no_progress: Int32 | None = None
    maximum_runtime_constraint: StudyTimeConstraint | None = None
    min_num_trials: Int32 | None = None
    minimum_runtime_constraint: StudyTimeConstraint | None = None
    should_stop_asap: StrictBool | None = None


class StudySpec(CamelModel):
    """HyperparameterTuningJob.studySpec: what is searched, for which metrics, how."""

    metrics: list[MetricSpec] | None = None
    parameters: list[ParameterSpec] | None = None
    algorithm: str | None = None
    measurement_selection_type: str | None = None
    observation_noise: str | None = None
    decay_curve_stopping_spec: DecayCurveStoppingSpec | None = None
    median_automated_stopping_spec: MedianStoppingSpec | None = None
    convex_automated_stopping_spec: ConvexStoppingSpec | None = None
    study_stopping_config: StudyStoppingConfig | None = None


class EncryptionSpec(CamelModel):
    kms_key_name: str | None = None


class TuningConfig(CamelModel):
    """A HyperparameterTuningJob as `gcloud ai hp-tuning-jobs create --config` reads it."""

    display_name: str | None = None
    study_spec: StudySpec | None = None
    max_trial_count: Int32 | None = None
    parallel_trial_count: Int32 | None = None
    max_failed_trial_count: Int32 | None = None
    trial_job_spec: CustomJobSpec | None = None
    labels: dict[str, str] | None = None
    encryption_spec: EncryptionSpec | None = None


def parse_tuning_config(data: Any) -> tuple[TuningConfig, bool]:
    """Parse a tuning config: the model, and whether trialJobSpec.workerPoolSpecs was one mapping. SpecError
    carries every shape problem, with the paths as the user wrote them."""
    if not isinstance(data, dict):
        raise SpecError([Problem("", f"expected a mapping with studySpec and trialJobSpec, got "
                                 f"{type(data).__name__}")])
    trial = data.get(TRIAL)
    single = isinstance(trial, dict) and isinstance(trial.get("workerPoolSpecs"), dict)
    if isinstance(trial, dict) and single:
        data = {**data, TRIAL: {**trial, "workerPoolSpecs": [trial["workerPoolSpecs"]]}}
    try:
        return TuningConfig.model_validate(data), single
    except ValidationError as error:
        problems = from_validation_error(error, TuningConfig)
        prefix = TRIAL + "."
        problems = [Problem(trial_path(p.path[len(prefix):], single), p.message, p.file)
                    if p.path.startswith(prefix) else p for p in problems]
        raise SpecError(problems) from None


def config_body(config: TuningConfig, display_name: str, labels: dict[str, str] | None) -> dict[str, Any]:
    """The HyperparameterTuningJob create body of a judged tuning config: the file's fields as given (camelCase,
    int64 as decimal strings), the display name and labels in force, and gcloud's default of 1 for the trial
    counts the file leaves unset."""
    given: dict[str, Any] = config.model_dump(mode="json", by_alias=True, exclude_none=True)
    body: dict[str, Any] = {
        "displayName": display_name,
        "studySpec": given.get("studySpec", {}),
        "maxTrialCount": given.get("maxTrialCount") or GCLOUD_DEFAULT_COUNT,
        "parallelTrialCount": given.get("parallelTrialCount") or GCLOUD_DEFAULT_COUNT,
    }
    for key in ("maxFailedTrialCount", TRIAL):
        if key in given:
            body[key] = given[key]
    if labels:
        body["labels"] = dict(labels)
    if "encryptionSpec" in given:
        body["encryptionSpec"] = given["encryptionSpec"]
    return body
