"""The Vertex AI v1 hyperparameter tuning jobs surface: projects.locations.hyperparameterTuningJobs create /
get / list / cancel / delete, with the checks Vertex makes of a HyperparameterTuningJob and trials that
progress on the emulator's clock.

Checks (400 INVALID_ARGUMENT with a field violation, as for custom jobs): the discovery schema; a display name
and Google's labels; studySpec with at least one metric (metricId and goal) and one parameter (parameterId and
exactly one value spec); maxTrialCount and parallelTrialCount greater than 0, parallelTrialCount at most
maxTrialCount, maxFailedTrialCount not negative; trialJobSpec checked as a custom job's jobSpec (and, on a
persistent resource, that it exists, runs and fits the trials: `persistent.check_job`).

Trials: the job's RUNNING phase is shared by ceil(maxTrialCount / parallelTrialCount) waves of
parallelTrialCount trials; a trial is ACTIVE from the start of its wave and SUCCEEDED at its end, and every
trial has SUCCEEDED once the job has. A trial stopped by the job's end (cancelled or failed) is INFEASIBLE.
Each trial's parameters and final metric values are a deterministic function of its number (a low-discrepancy
sequence over each parameter's feasible values), so the same job always has the same best trial. List answers
leave trials out, as Vertex's do.
"""

from __future__ import annotations

import math
from typing import Any

from gcp_training_jobs.emulator import persistent, reservations, vertex, vertex_checks
from gcp_training_jobs.emulator.jobs import Job, Vocabulary, rfc3339
from gcp_training_jobs.emulator.routing import Route
from gcp_training_jobs.emulator.state import EmulatorState
from gcp_training_jobs.emulator.validation import int_value, vertex_fields
from gcp_training_jobs.emulator.vertex_checks import Found

_SCHEMA = "GoogleCloudAiplatformV1HyperparameterTuningJob"
_AT = "hyperparameter_tuning_job"
_VALUE_SPECS = ("doubleValueSpec", "integerValueSpec", "categoricalValueSpec", "discreteValueSpec")
#: The fractional part of multiples of the golden ratio: well spread over [0, 1), the same every run.
_GOLDEN = (math.sqrt(5) - 1) / 2
_STEPS = 100


def _counts(job: Job) -> tuple[int, int]:
    total = max(1, int_value(job.body.get("maxTrialCount")) or 1)
    return total, min(total, max(1, int_value(job.body.get("parallelTrialCount")) or 1))


def _spread(number: int, salt: int = 0) -> float:
    return math.modf((number + 1) * _GOLDEN + salt * 0.5)[0]


def _value(spec: dict[str, Any], number: int, salt: int) -> Any:
    """Trial `number`'s value of a parameter: a point of its feasible space."""
    point = _spread(number, salt)
    for kind in ("categoricalValueSpec", "discreteValueSpec"):
        values = (spec.get(kind) or {}).get("values") or []
        if values:
            return values[int(point * len(values))]
    bounds = spec.get("doubleValueSpec") or spec.get("integerValueSpec") or {}
    low, high = float(bounds.get("minValue", 0)), float(bounds.get("maxValue", 1))
    if spec.get("scaleType") == "UNIT_LOG_SCALE" and low > 0:
        value = low * (high / low) ** point
    else:
        value = low + (high - low) * point
    return float(round(value)) if "integerValueSpec" in spec else round(value, 6)


def _trial(job: Job, number: int, begin: float, end: float | None, state: str) -> dict[str, Any]:
    study = job.body.get("studySpec") or {}
    params = [p for p in study.get("parameters") or [] if isinstance(p, dict)]
    trial: dict[str, Any] = {
        "id": str(number + 1),
        "state": state,
        "parameters": [{"parameterId": p.get("parameterId"), "value": _value(p, number, i)}
                       for i, p in enumerate(params)],
        "startTime": rfc3339(begin),
    }
    if end is not None:
        trial["endTime"] = rfc3339(end)
    if state == "SUCCEEDED":
        metrics = [m for m in study.get("metrics") or [] if isinstance(m, dict)]
        trial["finalMeasurement"] = {"stepCount": str(_STEPS), "metrics": [
            {"metricId": m.get("metricId"), "value": round(_spread(number, i), 6)} for i, m in enumerate(metrics)]}
    elif state == "INFEASIBLE":
        trial["infeasibleReason"] = f"The trial was stopped when its job ended ({job.state})."
    return trial


def trials(job: Job) -> list[dict[str, Any]]:
    """The job's trials at the time it was last settled (none before it ran)."""
    if job.start is None:
        return []
    total, parallel = _counts(job)
    waves = math.ceil(total / parallel)
    done = job.state == job.vocab.state("SUCCEEDED")
    until = job.end if job.end is not None else job.seen
    slot = job.phase_seconds / waves
    out = []
    for number in range(total):
        begin = job.start + (number // parallel) * slot
        end = begin + slot
        if done:
            out.append(_trial(job, number, begin, min(end, until), "SUCCEEDED"))
        elif begin > until or (begin == until and job.end is not None):
            break
        elif end <= until:
            out.append(_trial(job, number, begin, end, "SUCCEEDED"))
        elif job.end is not None:
            out.append(_trial(job, number, begin, until, "INFEASIBLE"))
        else:
            out.append(_trial(job, number, begin, None, "ACTIVE"))
    return out


def _render(job: Job) -> dict[str, Any]:
    out = vertex.render(job)
    found = trials(job)
    if found:
        out["trials"] = found
    return out


TUNING = Vocabulary(
    api="aiplatform", parent=vertex.VERTEX.parent, collection="hyperparameterTuningJobs",
    prefix=vertex.VERTEX.prefix, phases=vertex.VERTEX.phases, page_sizes=vertex.VERTEX.page_sizes,
    messages=vertex.VERTEX.messages, not_found="HyperparameterTuningJob {name} not found.",
    filter_fields=vertex.VERTEX.filter_fields, render=_render, kind="HyperparameterTuningJob",
    listed=vertex.render, schema=_SCHEMA, list_schema="GoogleCloudAiplatformV1ListHyperparameterTuningJobsResponse",
)


def _positive(value: Any, field: str, found: Found) -> int | None:
    """A count that must be greater than 0: unset and 0 are the same in proto3 JSON, so one message says both
    (GOOGLE-STYLE wording, no real answer found)."""
    count = int_value(value)
    if count is None:
        found.add(f"{_AT}.{field}", f"Required field is not set: {field} must be greater than 0.")
    elif count < 0:
        found.add(f"{_AT}.{field}", f"{field} must be greater than 0.")
    else:
        return count
    return None


def _check_study(study: Any, found: Found) -> None:
    """StudySpec checks: at least one metric with its id and goal, one parameter with its id and one value spec
    (GOOGLE-STYLE wording, no real answer found)."""
    if not isinstance(study, dict):
        found.required(f"{_AT}.study_spec")
        return
    for key, snake in (("metrics", "metrics"), ("parameters", "parameters")):
        if not study.get(key):
            found.add(f"{_AT}.study_spec.{snake}", f"At least one {key[:-1]} is required.")
    for i, metric in enumerate(study.get("metrics") or []):
        for key, snake in (("metricId", "metric_id"), ("goal", "goal")):
            if not metric.get(key):
                found.required(f"{_AT}.study_spec.metrics[{i}].{snake}")
    for i, parameter in enumerate(study.get("parameters") or []):
        where = f"{_AT}.study_spec.parameters[{i}]"
        if not parameter.get("parameterId"):
            found.required(f"{where}.parameter_id")
        if sum(1 for key in _VALUE_SPECS if parameter.get(key) is not None) != 1:
            found.add(where, "Exactly one of double_value_spec, integer_value_spec, categorical_value_spec or "
                      "discrete_value_spec must be set.")


def create(state: EmulatorState, project: str, location: str, body: Any) -> dict[str, Any]:
    """projects.locations.hyperparameterTuningJobs.create: server-assigned id, QUEUED job answered."""
    user, judged = vertex_fields(body, _SCHEMA, strict_int64=state.strict_int64)
    found = Found()
    vertex_checks.check_named(judged, _AT, found)
    _check_study(judged.get("studySpec"), found)
    total = _positive(judged.get("maxTrialCount"), "max_trial_count", found)
    parallel = _positive(judged.get("parallelTrialCount"), "parallel_trial_count", found)
    if total is not None and parallel is not None and parallel > total:
        found.add(f"{_AT}.parallel_trial_count", f"parallel_trial_count ({parallel}) must not be greater than "
                  f"max_trial_count ({total}).")
    failed = int_value(judged.get("maxFailedTrialCount"))
    if failed is not None and failed < 0:
        found.add(f"{_AT}.max_failed_trial_count", "max_failed_trial_count must not be negative.")
    spec = judged.get("trialJobSpec")
    if not isinstance(spec, dict):
        found.required(f"{_AT}.trial_job_spec")
    else:
        vertex_checks.check_job_spec(spec, f"{_AT}.trial_job_spec", found)
    found.raise_if_any()
    vertex_checks.check_machines(judged["trialJobSpec"], f"{_AT}.trial_job_spec", location)
    with state.lock:
        persistent.check_job(state, project, location, judged["trialJobSpec"], f"{_AT}.trial_job_spec")
        reservations.check_job(state, project, location, judged["trialJobSpec"], f"{_AT}.trial_job_spec",
                               int_value(judged.get("parallelTrialCount")) or 1)
        return _render(state.add_job(TUNING, project, location, state.next_id(), user))


ROUTES: list[Route] = vertex.vertex_routes(TUNING, lambda s, r: create(s, r.project, r.location, r.body))
