"""Rules on a Vertex AI tuning config (a HyperparameterTuningJob as `gcloud ai hp-tuning-jobs create --config`
reads it): the study, its metrics and parameters, the trial counts and the job's own fields. The trials'
CustomJobSpec is judged by the CustomJobSpec rules (rules.check_tuning_job runs both).

Source: aiplatform.v1.json (google-api-python-client, revision 20261106), read 2026-11-22:
- HyperparameterTuningJob: displayName "Required ... up to 128 characters"; maxTrialCount and parallelTrialCount
  "Required" (int32; gcloud fills 1 when unset); maxFailedTrialCount "If set to 0, Vertex AI decides";
  encryptionSpec.kmsKeyName "must be in the same region as the resource".
- StudySpec: metrics and parameters "Required"; algorithm ALGORITHM_UNSPECIFIED, GRID_SEARCH ("all parameters
  must be INTEGER, CATEGORICAL, or DISCRETE"), RANDOM_SEARCH; observationNoise and every value spec's
  defaultValue "Not supported by HyperparameterTuningJob"; the three automated stopping specs are one choice
  (a proto oneof).
- MetricSpec: metricId "Required ... Must not contain whitespaces and must be unique amongst all MetricSpecs";
  goal "Required" (GOAL_TYPE_UNSPECIFIED "will default to maximize"); a safety metric needs "a separate metric
  for objective metric"; desiredMinSafeTrialsFraction "between 0.0 and 1.0".
- ParameterSpec: parameterId "Required ... Must not contain whitespaces and must be unique amongst all
  ParameterSpecs"; scaleType "Leave unset for CATEGORICAL parameters", a log scale needs "the entire feasible
  space ... strictly positive"; min/max "Required. Inclusive"; DiscreteValueSpec.values "in increasing order
  and at least 1e-10 apart ... not more than 1,000 values"; a conditional parameter matches values of its
  parent ("All values must exist in" the parent's spec).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gcp_training_jobs.jobspec.core.names import DURATION_ALLOWED, KMS_KEY, is_duration
from gcp_training_jobs.jobspec.core.problems import Problem, allowed
from gcp_training_jobs.jobspec.rules.tasks import Options
from gcp_training_jobs.jobspec.rules.tuning import ALGORITHMS, GOAL_UNSPECIFIED, GOALS, LOG_SCALES, MAX_DISCRETE_VALUES
from gcp_training_jobs.jobspec.rules.tuning import did_you_mean as _did_you_mean
from gcp_training_jobs.jobspec.vocab.jobs import TuningJob
from gcp_training_jobs.jobspec.vocab.tuning import (
    GCLOUD_DEFAULT_COUNT,
    ConditionalParameterSpec,
    MetricSpec,
    ParameterSpec,
    StudySpec,
)

STUDY = "studySpec"
SCALE_TYPES = ("SCALE_TYPE_UNSPECIFIED", "UNIT_LINEAR_SCALE", *LOG_SCALES)
MEASUREMENT_SELECTION_TYPES = ("MEASUREMENT_SELECTION_TYPE_UNSPECIFIED", "LAST_MEASUREMENT", "BEST_MEASUREMENT")
STOPPING_SPECS = ("decayCurveStoppingSpec", "medianAutomatedStoppingSpec", "convexAutomatedStoppingSpec")
VALUE_SPECS = ("doubleValueSpec", "integerValueSpec", "categoricalValueSpec", "discreteValueSpec")
#: The parent condition each parent value spec takes (a DOUBLE parent takes none).
CONDITIONS = {"categoricalValueSpec": "parentCategoricalValues", "discreteValueSpec": "parentDiscreteValues",
              "integerValueSpec": "parentIntValues"}
MIN_GAP = 1e-10
DISPLAY_NAME_MAX = 128
VIZIER_ONLY = "Vertex AI Vizier only (aiplatform.v1.json: \"Not supported by HyperparameterTuningJob\")"


def _enum(path: str, value: str | None, what: str, options: Sequence[str],
          also: Sequence[str] = ()) -> Iterator[Problem]:
    """An enum value: one of `options` (or of `also`, accepted as written but never suggested)."""
    if value is not None and value not in (*options, *also):
        yield Problem(path, f"{value!r} is not {what}{_did_you_mean(value, options)}; allowed: {allowed(options)}")


def _id(path: str, value: str | None, what: str, seen: dict[str, str]) -> Iterator[Problem]:
    """A metric or parameter id: given, without whitespace, unique among its siblings."""
    if not value:
        yield Problem(path, f"required; allowed: {what} (no whitespace, unique)")
    elif any(c.isspace() for c in value):
        yield Problem(path, f"{value!r} contains whitespace; allowed: an id without whitespace")
    elif value in seen:
        yield Problem(path, f"{value!r} is already the id of {seen[value]}; allowed: an id unique among them")
    else:
        seen[value] = path


def rule_counts(job: TuningJob, opts: Options) -> Iterator[Problem]:
    """maxTrialCount and parallelTrialCount at least 1, parallel at most the total; maxFailedTrialCount >= 0."""
    config = job.config
    for field, value in (("maxTrialCount", config.max_trial_count), ("parallelTrialCount",
                                                                     config.parallel_trial_count)):
        if value is not None and value < 1:
            yield Problem(field, f"{value} is too small; allowed: 1 or more (unset: {GCLOUD_DEFAULT_COUNT}, "
                          "as gcloud fills it)")
    total = config.max_trial_count or GCLOUD_DEFAULT_COUNT
    parallel = config.parallel_trial_count
    if parallel is not None and parallel > total:
        yield Problem("parallelTrialCount", f"{parallel} is more than maxTrialCount {total}; allowed: at most "
                      "maxTrialCount (no more trials can run at once than there are)")
    failed = config.max_failed_trial_count
    if failed is not None and failed < 0:
        yield Problem("maxFailedTrialCount", f"{failed} is too small; allowed: 0 or more (0: Vertex AI decides)")


def rule_job_fields(job: TuningJob, opts: Options) -> Iterator[Problem]:
    """The display name's length, and a KMS key in the job's region."""
    config = job.config
    if config.display_name is not None and not 0 < len(config.display_name) <= DISPLAY_NAME_MAX:
        yield Problem("displayName", f"{len(config.display_name)} characters; allowed: 1 to {DISPLAY_NAME_MAX} "
                      "(gcloud's --display-name replaces it)")
    kms = config.encryption_spec.kms_key_name if config.encryption_spec else None
    if config.encryption_spec is not None and not kms:
        yield Problem("encryptionSpec.kmsKeyName", "required with encryptionSpec; allowed: "
                      "projects/P/locations/L/keyRings/R/cryptoKeys/K")
    elif kms is not None and not KMS_KEY.fullmatch(kms):
        yield Problem("encryptionSpec.kmsKeyName", f"{kms!r}; allowed: projects/P/locations/L/keyRings/R/cryptoKeys/K")
    elif kms is not None and job.region and kms.split("/")[3] != job.region:
        yield Problem("encryptionSpec.kmsKeyName", f"is in {kms.split('/')[3]}, not in the job's region "
                      f"{job.region}; allowed: a key in {job.region}")


def rule_study(job: TuningJob, opts: Options) -> Iterator[Problem]:
    """The study: its metrics, algorithm, measurement selection, stopping and what HyperparameterTuningJob
    does not support."""
    study = job.config.study_spec
    if study is None:
        yield Problem(STUDY, "required; allowed: a StudySpec with metrics and parameters")
        return
    yield from _metrics(study.metrics)
    yield from _enum(f"{STUDY}.algorithm", study.algorithm, "a search algorithm", ALGORITHMS)
    yield from _enum(f"{STUDY}.measurementSelectionType", study.measurement_selection_type,
                     "a measurement selection type", MEASUREMENT_SELECTION_TYPES)
    if study.observation_noise is not None:
        yield Problem(f"{STUDY}.observationNoise", f"is {VIZIER_ONLY}; allowed: unset")
    stopping = [name for name, spec in zip(STOPPING_SPECS, (study.decay_curve_stopping_spec,
                study.median_automated_stopping_spec, study.convex_automated_stopping_spec), strict=True) if spec]
    if len(stopping) > 1:
        yield Problem(f"{STUDY}.{stopping[1]}", f"is set with {stopping[0]}; allowed: one automated stopping spec "
                      f"({', '.join(STOPPING_SPECS)})")
    yield from _stopping(study)


def _metrics(metrics: list[MetricSpec] | None) -> Iterator[Problem]:
    if not metrics:
        yield Problem(f"{STUDY}.metrics", "required; allowed: a list of at least one {metricId, goal}")
        return
    seen: dict[str, str] = {}
    for i, metric in enumerate(metrics):
        path = f"{STUDY}.metrics[{i}]"
        yield from _id(f"{path}.metricId", metric.metric_id, "the name of a metric the trainer reports", seen)
        if metric.goal is None:
            yield Problem(f"{path}.goal", f"required; allowed: {allowed(GOALS)}")
        else:
            yield from _enum(f"{path}.goal", metric.goal, "a goal", GOALS, (GOAL_UNSPECIFIED,))
        fraction = metric.safety_config.desired_min_safe_trials_fraction if metric.safety_config else None
        if fraction is not None and not 0.0 <= fraction <= 1.0:
            yield Problem(f"{path}.safetyConfig.desiredMinSafeTrialsFraction", f"{fraction}; allowed: 0.0 to 1.0")
    if all(metric.safety_config is not None for metric in metrics):
        yield Problem(f"{STUDY}.metrics", "has only safety metrics (safetyConfig); allowed: at least one objective "
                      "metric (without safetyConfig) besides them")


def _stopping(study: StudySpec) -> Iterator[Problem]:
    convex = study.convex_automated_stopping_spec
    name = convex.learning_rate_parameter_name if convex else None
    if name and name not in {p.parameter_id for p in study.parameters or []}:
        yield Problem(f"{STUDY}.convexAutomatedStoppingSpec.learningRateParameterName", f"{name!r} is not a "
                      "parameter of the study; allowed: a parameterId of studySpec.parameters, or unset")
    stop = study.study_stopping_config
    if stop is None:
        return
    at = f"{STUDY}.studyStoppingConfig"
    durations = [("maxDurationNoProgress", stop.max_duration_no_progress)]
    for field, constraint in (("maximumRuntimeConstraint", stop.maximum_runtime_constraint),
                              ("minimumRuntimeConstraint", stop.minimum_runtime_constraint)):
        if constraint is not None:
            durations.append((f"{field}.maxDuration", constraint.max_duration))
    for field, value in durations:
        if value is not None and not is_duration(value):
            yield Problem(f"{at}.{field}", f"{value[:60]!r} is not a duration; allowed: {DURATION_ALLOWED}")


def rule_parameters(job: TuningJob, opts: Options) -> Iterator[Problem]:
    """Every parameter (conditional ones included): its id, one value spec, its values and scale."""
    study = job.config.study_spec
    if study is None:
        return
    if not study.parameters:
        yield Problem(f"{STUDY}.parameters", "required; allowed: a list of at least one {parameterId, one value "
                      "spec}")
        return
    seen: dict[str, str] = {}
    for i, param in enumerate(study.parameters):
        yield from _parameter(f"{STUDY}.parameters[{i}]", param, seen, study.algorithm)


def _parameter(path: str, p: ParameterSpec, seen: dict[str, str], algorithm: str | None) -> Iterator[Problem]:
    yield from _id(f"{path}.parameterId", p.parameter_id, "the name the trainer takes as --NAME=VALUE", seen)
    specs = p.value_specs
    if not specs:
        yield Problem(path, f"has no value spec; allowed: one of {allowed(VALUE_SPECS)}")
    elif len(specs) > 1:
        yield Problem(path, f"has {' and '.join(specs)}; allowed: exactly one value spec")
    yield from _enum(f"{path}.scaleType", p.scale_type, "a scale type", SCALE_TYPES)
    kind = next(iter(specs), None)
    for name, spec in specs.items():
        if getattr(spec, "default_value", None) is not None:
            yield Problem(f"{path}.{name}.defaultValue", f"is {VIZIER_ONLY}; allowed: unset")
    if kind == "categoricalValueSpec" and p.scale_type not in (None, "SCALE_TYPE_UNSPECIFIED"):
        yield Problem(f"{path}.scaleType", f"{p.scale_type} on a CATEGORICAL parameter; allowed: unset "
                      "(categories have no scale)")
    if kind == "doubleValueSpec" and algorithm == "GRID_SEARCH":
        yield Problem(f"{path}.doubleValueSpec", "a DOUBLE parameter with algorithm GRID_SEARCH; allowed: "
                      "INTEGER, CATEGORICAL or DISCRETE parameters (a grid needs finitely many values), or "
                      "another algorithm")
    if kind in ("doubleValueSpec", "integerValueSpec"):
        yield from _range(f"{path}.{kind}", specs[kind], p.scale_type)
    elif kind == "categoricalValueSpec":
        yield from _distinct(f"{path}.{kind}.values", specs[kind].values)
    elif kind == "discreteValueSpec":
        yield from _discrete(f"{path}.{kind}.values", specs[kind].values or [], p.scale_type)
    for i, child in enumerate(p.conditional_parameter_specs or []):
        yield from _conditional(f"{path}.conditionalParameterSpecs[{i}]", child, p, kind, algorithm)


def _range(path: str, spec: object, scale: str | None) -> Iterator[Problem]:
    low, high = getattr(spec, "min_value", None), getattr(spec, "max_value", None)
    for field, value in (("minValue", low), ("maxValue", high)):
        if value is None:
            yield Problem(f"{path}.{field}", "required; allowed: a number (the bound is inclusive)")
    if low is not None and high is not None and low > high:
        yield Problem(f"{path}.minValue", f"{low} is above maxValue {high}; allowed: minValue <= maxValue")
    if scale in LOG_SCALES and low is not None and low <= 0:
        yield Problem(f"{path}.minValue", f"{low} with scaleType {scale}; allowed: minValue > 0 (a log scale needs "
                      "a strictly positive range), or scaleType UNIT_LINEAR_SCALE")


def _distinct(path: str, values: list[str] | None) -> Iterator[Problem]:
    if not values:
        yield Problem(path, "required; allowed: a list of at least one category (text)")
        return
    first: dict[str, int] = {}
    for i, value in enumerate(values):
        if value in first:
            yield Problem(f"{path}[{i}]", f"{value!r} repeats values[{first[value]}]; allowed: distinct categories")
        first.setdefault(value, i)


def _discrete(path: str, values: list[float], scale: str | None) -> Iterator[Problem]:
    if not values:
        yield Problem(path, "required; allowed: a list of at least one number, increasing (e.g. [1.5, 2.5, 4.0])")
        return
    if len(values) > MAX_DISCRETE_VALUES:
        yield Problem(path, f"{len(values):,} values; allowed: at most {MAX_DISCRETE_VALUES:,}")
    for i in range(1, len(values)):
        if values[i] - values[i - 1] < MIN_GAP:
            yield Problem(f"{path}[{i}]", f"{values[i]!r} does not follow {values[i - 1]!r} by at least 1e-10; "
                          "allowed: increasing values at least 1e-10 apart")
            break
    if scale in LOG_SCALES and min(values) <= 0:
        yield Problem(path, f"{min(values)!r} with scaleType {scale}; allowed: values > 0 (a log scale needs a "
                      "strictly positive range), or scaleType UNIT_LINEAR_SCALE")


def _conditional(path: str, c: ConditionalParameterSpec, parent: ParameterSpec, kind: str | None,
                 algorithm: str | None) -> Iterator[Problem]:
    """A conditional parameter: one parent condition, of the parent's type, naming the parent's values."""
    given = {name: cond for name, cond in (("parentCategoricalValues", c.parent_categorical_values),
                                            ("parentDiscreteValues", c.parent_discrete_values),
                                            ("parentIntValues", c.parent_int_values)) if cond is not None}
    wanted = CONDITIONS.get(kind or "")
    if kind is not None and wanted is None:
        yield Problem(path, "is a conditional parameter of a DOUBLE parameter; allowed: conditions on a "
                      "CATEGORICAL, DISCRETE or INTEGER parent only")
    elif wanted is not None and list(given) != [wanted]:
        yield Problem(path, f"has {allowed(given) if given else 'no parent condition'}; allowed: {wanted} "
                      "alone (the parent's type)")
    elif wanted is not None:
        values = given[wanted].values or []
        if not values:
            yield Problem(f"{path}.{wanted}.values", "required; allowed: values of the parent parameter")
        for i, value in enumerate(values):
            if not _is_value_of(parent, kind, value):
                yield Problem(f"{path}.{wanted}.values[{i}]", f"{value!r} is not a value of the parent parameter "
                              f"{parent.parameter_id!r}; allowed: its own values")
    if c.parameter_spec is None:
        yield Problem(f"{path}.parameterSpec", "required; allowed: the conditional parameter's ParameterSpec")
    else:
        # Siblings may repeat an id under disjoint conditions (aiplatform.v1.json): ids are not compared.
        yield from _parameter(f"{path}.parameterSpec", c.parameter_spec, {}, algorithm)


def _is_value_of(parent: ParameterSpec, kind: str | None, value: object) -> bool:
    if kind == "categoricalValueSpec" and parent.categorical_value_spec:
        return value in (parent.categorical_value_spec.values or [])
    if kind == "discreteValueSpec" and parent.discrete_value_spec and isinstance(value, float):
        return any(abs(value - v) <= MIN_GAP for v in parent.discrete_value_spec.values or [])
    spec = parent.integer_value_spec
    if kind == "integerValueSpec" and spec and isinstance(value, int):
        return (spec.min_value is None or value >= spec.min_value) and (spec.max_value is None
                                                                        or value <= spec.max_value)
    return True  # the parent's own spec is reported wrong already


#: The rules on a tuning config's own fields, in the order they report.
TUNING_RULES = (rule_job_fields, rule_counts, rule_study, rule_parameters)
