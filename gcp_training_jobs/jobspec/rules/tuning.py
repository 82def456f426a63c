"""Rules on hyperparameter tuning (`trainingInput.hyperparameters`), judged against ml v1's reference.

Source: the installed discovery document ml.v1.json (google-api-python-client, revision 20251213), schemas
GoogleCloudMlV1__HyperparameterSpec and GoogleCloudMlV1__ParameterSpec, read 2026-11-22. What it says, and
what each rule below holds a job to:

- goal: "Required. ... Available types are MAXIMIZE and MINIMIZE" (enum GOAL_TYPE_UNSPECIFIED, MAXIMIZE,
  MINIMIZE; "Goal Type will default to maximize").
- params: "Required. The set of parameters to tune."; parameterName "must be unique amongst all
  ParameterConfigs"; type: DOUBLE, INTEGER, CATEGORICAL, DISCRETE ("PARAMETER_TYPE_UNSPECIFIED ... will result
  in an error").
- minValue / maxValue: "Required if type is DOUBLE or INTEGER. This field should be unset if type is
  CATEGORICAL. This value should be integers if type is INTEGER."
- categoricalValues: "Required if type is CATEGORICAL"; discreteValues: "Required if type is DISCRETE ...
  should be in strictly increasing order ... should not contain more than 1,000 values"; for DISCRETE
  "{min_value, max_value} will be ignored".
- scaleType: NONE, UNIT_LINEAR_SCALE, UNIT_LOG_SCALE, UNIT_REVERSE_LOG_SCALE; "Leave unset for categorical
  parameters"; both log scales: "The entire feasible space must be strictly positive."
- algorithm: ALGORITHM_UNSPECIFIED (Bayesian optimization), GRID_SEARCH ("all parameters must be INTEGER,
  CATEGORICAL, or DISCRETE"), RANDOM_SEARCH.
- maxTrials / maxParallelTrials: int32, "Defaults to one"; maxFailedTrials: int32, "Defaults to zero, which
  means the service decides".
- resumePreviousJobId: "The prior hyperparameter tuning job id that users hope to continue with": the resume
  form names no goal and no params (the earlier job's study has them), so with it both may be left out.

The enum tables live here rather than in the catalog: they are the API's vocabulary for this one block,
read from the same schema as the rules.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gcp_training_jobs.jobspec.core.names import JOB_ID
from gcp_training_jobs.jobspec.core.problems import Problem, allowed, suggestion
from gcp_training_jobs.jobspec.rules.tasks import TI, Options
from gcp_training_jobs.jobspec.vocab.training_input import HyperparameterSpec, Job, ParameterSpec

HP = f"{TI}.hyperparameters"

GOALS = ("MAXIMIZE", "MINIMIZE")
#: Accepted as written ("Goal Type will default to maximize"), never suggested.
GOAL_UNSPECIFIED = "GOAL_TYPE_UNSPECIFIED"
ALGORITHMS = ("ALGORITHM_UNSPECIFIED", "GRID_SEARCH", "RANDOM_SEARCH")
PARAMETER_TYPES = ("DOUBLE", "INTEGER", "CATEGORICAL", "DISCRETE")
SCALE_TYPES = ("NONE", "UNIT_LINEAR_SCALE", "UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE")
LOG_SCALES = ("UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE")
MAX_DISCRETE_VALUES = 1000
INT32_MAX = 2**31 - 1
#: The tag ml v1 uses when hyperparameterMetricTag is unset (HyperparameterSpec.hyperparameterMetricTag).
DEFAULT_METRIC_TAG = "training/hptuning/metric"

#: What people write for the enum names (other APIs' words, British spelling, short forms): the did-you-mean.
ALIASES = {
    "FLOAT": "DOUBLE", "REAL": "DOUBLE", "NUMBER": "DOUBLE", "NUMERIC": "DOUBLE", "CONTINUOUS": "DOUBLE",
    "INT": "INTEGER", "LONG": "INTEGER", "CATEGORY": "CATEGORICAL", "STRING": "CATEGORICAL",
    "CHOICE": "CATEGORICAL",
    "LOG": "UNIT_LOG_SCALE", "LOG_SCALE": "UNIT_LOG_SCALE", "LOGARITHMIC": "UNIT_LOG_SCALE",
    "LINEAR": "UNIT_LINEAR_SCALE", "LINEAR_SCALE": "UNIT_LINEAR_SCALE",
    "REVERSE_LOG": "UNIT_REVERSE_LOG_SCALE", "REVERSE_LOG_SCALE": "UNIT_REVERSE_LOG_SCALE",
    "MAXIMISE": "MAXIMIZE", "MAX": "MAXIMIZE", "MINIMISE": "MINIMIZE", "MIN": "MINIMIZE",
    "GRID": "GRID_SEARCH", "RANDOM": "RANDOM_SEARCH", "BAYESIAN": "ALGORITHM_UNSPECIFIED",
}


def did_you_mean(value: str, options: Sequence[str]) -> str:
    """` (did you mean X?)` for a wrong case, a known alias, or a close spelling; else nothing."""
    norm = value.strip().upper().replace("-", "_").replace(" ", "_")
    if norm in options:
        return f" (did you mean {norm}?)"
    if ALIASES.get(norm) in options:
        return f" (did you mean {ALIASES[norm]}?)"
    return suggestion(norm, options)


def _enum(path: str, value: str, what: str, options: Sequence[str], shown: Sequence[str] | None = None) -> Problem:
    return Problem(path, f"{value!r} is not {what}{did_you_mean(value, options)}; allowed: "
                   f"{allowed(shown or options)}")


def rule_hyperparameters(job: Job, opts: Options) -> Iterator[Problem]:
    """The hyperparameters block as ml v1 takes it: goal, metric, counts, algorithm, and every parameter."""
    hp = job.training_input.hyperparameters
    if hp is None:
        return
    resume = hp.resume_previous_job_id
    yield from _resume(hp)
    if hp.goal is None:
        if resume is None:
            yield Problem(f"{HP}.goal", f"required (unless resumePreviousJobId continues an earlier study); "
                          f"allowed: {allowed(GOALS)}")
    elif hp.goal not in (*GOALS, GOAL_UNSPECIFIED):
        yield _enum(f"{HP}.goal", hp.goal, "a goal", GOALS)
    tag = hp.hyperparameter_metric_tag
    if tag is not None and not tag.strip():
        yield Problem(f"{HP}.hyperparameterMetricTag", f"is empty; allowed: the summary tag the trainer reports "
                      f"(unset: {DEFAULT_METRIC_TAG})")
    yield from _counts(hp)
    if hp.algorithm is not None and hp.algorithm not in ALGORITHMS:
        yield _enum(f"{HP}.algorithm", hp.algorithm, "a search algorithm", ALGORITHMS)
    params = hp.params or []
    if not params and resume is None:
        yield Problem(f"{HP}.params", "required: at least one parameter to tune (unless resumePreviousJobId "
                      "continues an earlier study); allowed: a list of {parameterName, type, ...}")
    seen: dict[str, int] = {}
    for i, param in enumerate(params):
        path = f"{HP}.params[{i}]"
        name = param.parameter_name
        if name is None or not name.strip():
            yield Problem(f"{path}.parameterName", "required; allowed: the name the trainer takes as --NAME=VALUE, "
                          "unique within params")
        elif name in seen:
            yield Problem(f"{path}.parameterName", f"{name!r} is already the name of params[{seen[name]}]; "
                          "allowed: a name unique within params")
        else:
            seen[name] = i
        yield from _parameter(path, param)
        if hp.algorithm == "GRID_SEARCH" and param.type == "DOUBLE":
            yield Problem(f"{path}.type", "DOUBLE with algorithm GRID_SEARCH; allowed: INTEGER, CATEGORICAL or "
                          "DISCRETE (a grid needs finitely many values), or another algorithm")


def _resume(hp: HyperparameterSpec) -> Iterator[Problem]:
    resume = hp.resume_previous_job_id
    if resume is not None and (not JOB_ID.fullmatch(resume) or len(resume) > 128):
        yield Problem(f"{HP}.resumePreviousJobId", f"{resume!r} is not a job id; allowed: the id of an earlier "
                      "hyperparameter tuning job (letters, digits and underscores, starting with a letter)")


def _counts(hp: HyperparameterSpec) -> Iterator[Problem]:
    for field, value, least, unset in (
        ("maxTrials", hp.max_trials, 1, "unset means 1"),
        ("maxParallelTrials", hp.max_parallel_trials, 1, "unset means 1"),
        ("maxFailedTrials", hp.max_failed_trials, 0, "0 or unset: the service decides when the job fails"),
    ):
        if value is None:
            continue
        if value < least:
            yield Problem(f"{HP}.{field}", f"{value} is too small; allowed: {least} or more ({unset})")
        elif value > INT32_MAX:
            yield Problem(f"{HP}.{field}", f"{value} is too large; allowed: at most {INT32_MAX:,} (int32)")


def _number(value: float) -> str:
    """A number as a user wrote it: 3 rather than 3.0."""
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def _parameter(path: str, p: ParameterSpec) -> Iterator[Problem]:
    kind, scale = p.type, p.scale_type
    if kind is None:
        yield Problem(f"{path}.type", f"required; allowed: {allowed(PARAMETER_TYPES)}")
    elif kind not in PARAMETER_TYPES:
        yield _enum(f"{path}.type", kind, "a parameter type", PARAMETER_TYPES)
    if scale is not None and scale not in SCALE_TYPES:
        yield _enum(f"{path}.scaleType", scale, "a scale type", SCALE_TYPES)
    if kind in ("DOUBLE", "INTEGER"):
        yield from _range(path, p, kind)
    elif kind == "CATEGORICAL":
        yield from _categorical(path, p)
    elif kind == "DISCRETE":
        yield from _discrete(path, p)


def _only_for(path: str, field: str, kind: str, owner: str) -> Problem:
    return Problem(f"{path}.{field}", f"is set but type is {kind}; allowed only with type {owner}")


def _range(path: str, p: ParameterSpec, kind: str) -> Iterator[Problem]:
    """DOUBLE and INTEGER: both bounds, in order, whole for INTEGER, positive on a log scale."""
    whole = kind == "INTEGER"
    for field, value in (("minValue", p.min_value), ("maxValue", p.max_value)):
        if value is None:
            yield Problem(f"{path}.{field}", f"required for type {kind}; allowed: "
                          f"{'a whole number' if whole else 'a number'}")
        elif whole and not value.is_integer():
            yield Problem(f"{path}.{field}", f"{_number(value)} is not a whole number; allowed: whole numbers "
                          "for type INTEGER (or type DOUBLE)")
    if p.categorical_values is not None:
        yield _only_for(path, "categoricalValues", kind, "CATEGORICAL")
    if p.discrete_values is not None:
        yield _only_for(path, "discreteValues", kind, "DISCRETE")
    low, high = p.min_value, p.max_value
    if low is not None and high is not None and low >= high:
        yield Problem(f"{path}.minValue", f"{_number(low)} is not below maxValue {_number(high)}; allowed: "
                      "minValue < maxValue")
    if p.scale_type in LOG_SCALES and low is not None and low <= 0:
        yield Problem(f"{path}.minValue", f"{_number(low)} with scaleType {p.scale_type}; allowed: minValue > 0 "
                      "(a log scale needs a strictly positive range), or scaleType UNIT_LINEAR_SCALE")


def _categorical(path: str, p: ParameterSpec) -> Iterator[Problem]:
    values = p.categorical_values
    if not values:
        yield Problem(f"{path}.categoricalValues", "required for type CATEGORICAL; allowed: a list of at least "
                      "one category (text)")
    else:
        firsts: dict[str, int] = {}
        for i, category in enumerate(values):
            if category in firsts:
                yield Problem(f"{path}.categoricalValues[{i}]", f"{category!r} repeats categoricalValues"
                              f"[{firsts[category]}]; allowed: distinct categories")
            firsts.setdefault(category, i)
    for field, bound in (("minValue", p.min_value), ("maxValue", p.max_value)):
        if bound is not None:
            yield Problem(f"{path}.{field}", "is set but type is CATEGORICAL; allowed: unset (the categories are "
                          "categoricalValues)")
    if p.discrete_values is not None:
        yield _only_for(path, "discreteValues", "CATEGORICAL", "DISCRETE")
    if p.scale_type not in (None, "NONE"):
        yield Problem(f"{path}.scaleType", f"{p.scale_type} is set but type is CATEGORICAL; allowed: unset "
                      "(categories have no scale)")


def _discrete(path: str, p: ParameterSpec) -> Iterator[Problem]:
    values = p.discrete_values
    if not values:
        yield Problem(f"{path}.discreteValues", "required for type DISCRETE; allowed: a list of at least one "
                      "number, strictly increasing (e.g. [1.5, 2.5, 4.0])")
    else:
        if len(values) > MAX_DISCRETE_VALUES:
            yield Problem(f"{path}.discreteValues", f"{len(values):,} values; allowed: at most "
                          f"{MAX_DISCRETE_VALUES:,}")
        for i in range(1, len(values)):
            if not values[i] > values[i - 1]:
                yield Problem(f"{path}.discreteValues[{i}]", f"{_number(values[i])} does not follow "
                              f"{_number(values[i - 1])}; allowed: strictly increasing values "
                              "(e.g. [1.5, 2.5, 4.0])")
                break
        if p.scale_type in LOG_SCALES and min(values) <= 0:
            yield Problem(f"{path}.discreteValues", f"{_number(min(values))} with scaleType {p.scale_type}; "
                          "allowed: values > 0 (a log scale needs a strictly positive range), or scaleType "
                          "UNIT_LINEAR_SCALE")
    for field, value in (("minValue", p.min_value), ("maxValue", p.max_value)):
        if value is not None:
            yield Problem(f"{path}.{field}", "is set but type is DISCRETE, which ignores it; allowed: unset "
                          "(the feasible points are discreteValues)")
    if p.categorical_values is not None:
        yield _only_for(path, "categoricalValues", "DISCRETE", "CATEGORICAL")


__all__ = ["ALGORITHMS", "DEFAULT_METRIC_TAG", "GOALS", "HP", "LOG_SCALES", "PARAMETER_TYPES", "SCALE_TYPES",
           "did_you_mean", "rule_hyperparameters"]
