"""ml v1 hyperparameter tuning as a Vertex AI HyperparameterTuningJob (aiplatform v1): a pure translation.

Sources: the installed discovery documents (google-api-python-client): ml.v1.json (revision 20251213),
GoogleCloudMlV1__HyperparameterSpec / __ParameterSpec; aiplatform.v1.json (revision 20261106),
GoogleCloudAiplatformV1HyperparameterTuningJob, ...StudySpec, ...StudySpecMetricSpec, ...StudySpecParameterSpec
and its value specs; read 2026-11-22.

The mapping, field by field:

| ml v1 HyperparameterSpec | Vertex AI HyperparameterTuningJob |
|---|---|
| goal (MAXIMIZE / MINIMIZE; GOAL_TYPE_UNSPECIFIED means MAXIMIZE) | studySpec.metrics[0].goal |
| hyperparameterMetricTag (unset: training/hptuning/metric) | studySpec.metrics[0].metricId |
| params[].parameterName | studySpec.parameters[].parameterId |
| params[] DOUBLE / INTEGER minValue, maxValue | doubleValueSpec / integerValueSpec (int64 as text) |
| params[] CATEGORICAL categoricalValues / DISCRETE discreteValues | categoricalValueSpec / discreteValueSpec .values |
| params[].scaleType (NONE: unset) | studySpec.parameters[].scaleType |
| algorithm (ALGORITHM_UNSPECIFIED: unset) | studySpec.algorithm |
| enableTrialEarlyStopping: true | studySpec.decayCurveStoppingSpec {useElapsedDuration: false} (see below) |
| maxTrials / maxParallelTrials (unset: 1) | maxTrialCount / parallelTrialCount (both required) |
| maxFailedTrials | maxFailedTrialCount |
| resumePreviousJobId | none: refused |

The metric tag stays the metric id, so a trainer that reports with cloudml-hypertune (which defaults to
training/hptuning/metric too) needs no change. ml v1's early stopping is one switch; Vertex names the rule.
The decay-curve rule on steps is the chosen equivalent (it predicts a trial's final objective from its
intermediate measurements, which is what the ml switch did); this is a judgement, not a documented mapping.

The trial's CustomJobSpec is built elsewhere (vertex_body) and taken here as an opaque mapping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.io.vocabulary import TRIAL
from gcp_training_jobs.jobspec.rules.tuning import DEFAULT_METRIC_TAG, HP
from gcp_training_jobs.jobspec.vocab.training_input import HyperparameterSpec, ParameterSpec

#: Vertex DiscreteValueSpec.values: "in increasing order and at least 1e-10 apart".
MIN_DISCRETE_GAP = 1e-10
#: What `enableTrialEarlyStopping: true` becomes (see the module docstring).
EARLY_STOPPING: Mapping[str, Any] = {"decayCurveStoppingSpec": {"useElapsedDuration": False}}


def _no_whitespace(path: str, value: str, what: str, problems: list[Problem]) -> None:
    if any(c.isspace() for c in value):
        problems.append(Problem(path, f"{value!r} contains whitespace; allowed on Vertex AI: a {what} without "
                                "whitespace (Vertex AI refuses it)"))


def _parameter(i: int, p: ParameterSpec, problems: list[Problem]) -> dict[str, Any]:
    path = f"{HP}.params[{i}]"
    name = p.parameter_name or ""
    _no_whitespace(f"{path}.parameterName", name, "parameter name", problems)
    spec: dict[str, Any] = {"parameterId": name}
    if p.type == "DOUBLE":
        spec["doubleValueSpec"] = {"minValue": p.min_value, "maxValue": p.max_value}
    elif p.type == "INTEGER":
        spec["integerValueSpec"] = {"minValue": str(int(p.min_value or 0)), "maxValue": str(int(p.max_value or 0))}
    elif p.type == "CATEGORICAL":
        spec["categoricalValueSpec"] = {"values": list(p.categorical_values or [])}
    elif p.type == "DISCRETE":
        values = list(p.discrete_values or [])
        for j in range(1, len(values)):
            if values[j] - values[j - 1] < MIN_DISCRETE_GAP:
                problems.append(Problem(f"{path}.discreteValues[{j}]", f"{values[j]!r} is within 1e-10 of "
                                        f"{values[j - 1]!r}; allowed on Vertex AI: values at least 1e-10 apart"))
                break
        spec["discreteValueSpec"] = {"values": values}
    if p.scale_type not in (None, "NONE"):
        spec["scaleType"] = p.scale_type
    return spec


def study_spec(hp: HyperparameterSpec) -> dict[str, Any]:
    """The Vertex StudySpec of a judged ml v1 HyperparameterSpec, or SpecError naming what Vertex cannot take."""
    problems: list[Problem] = []
    if hp.resume_previous_job_id is not None:
        problems.append(Problem(f"{HP}.resumePreviousJobId", "has no Vertex AI equivalent (a "
                                "HyperparameterTuningJob cannot continue an AI Platform study); allowed on Vertex "
                                "AI: unset, with goal and params (a new study)"))
    if hp.goal is None:
        problems.append(Problem(f"{HP}.goal", "required on Vertex AI (studySpec.metrics); allowed: MAXIMIZE, "
                                "MINIMIZE"))
    if not hp.params:
        problems.append(Problem(f"{HP}.params", "required on Vertex AI (studySpec.parameters); allowed: a list of "
                                "at least one parameter"))
    metric = hp.hyperparameter_metric_tag or DEFAULT_METRIC_TAG
    _no_whitespace(f"{HP}.hyperparameterMetricTag", metric, "metric id", problems)
    parameters = [_parameter(i, p, problems) for i, p in enumerate(hp.params or [])]
    if problems:
        raise SpecError(problems)
    goal = "MAXIMIZE" if hp.goal in (None, "GOAL_TYPE_UNSPECIFIED") else hp.goal
    spec: dict[str, Any] = {"metrics": [{"metricId": metric, "goal": goal}], "parameters": parameters}
    if hp.algorithm not in (None, "ALGORITHM_UNSPECIFIED"):
        spec["algorithm"] = hp.algorithm
    if hp.enable_trial_early_stopping:
        spec.update({k: dict(v) for k, v in EARLY_STOPPING.items()})
    return spec


def tuning_job_body(hp: HyperparameterSpec, trial_job_spec: Mapping[str, Any], display_name: str,
                    labels: Mapping[str, str] | None = None,
                    encryption_spec: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The HyperparameterTuningJob create body: the study, the trial counts, and `trial_job_spec` (a Vertex
    CustomJobSpec, taken as it is) as every trial's job. SpecError for what Vertex cannot express."""
    body: dict[str, Any] = {
        "displayName": display_name,
        "studySpec": study_spec(hp),
        "maxTrialCount": hp.max_trials or 1,
        "parallelTrialCount": hp.max_parallel_trials or 1,
    }
    if hp.max_failed_trials is not None:
        body["maxFailedTrialCount"] = hp.max_failed_trials
    body[TRIAL] = dict(trial_job_spec)
    if labels:
        body["labels"] = dict(labels)
    if encryption_spec:
        body["encryptionSpec"] = dict(encryption_spec)
    return body
