"""Vertex AI hyperparameter tuning (aiplatform v1, projects.locations.hyperparameterTuningJobs): requests and
answers.

A HyperparameterTuningJob lives in the same API as a CustomJob and shares its job states, labels, list filter
and delete-after-finish, so this backend is the custom-jobs backend on another collection; the lifecycle
(lookup before create, adoption, reconciliation, wait, cancel, delete) is lifecycle.Jobs, unchanged. The body
is built by the pure translation in gcp_training_jobs.jobspec.render.bodies.tuning_body. Outputs add the number
of trials so far (`trialCount`) and the best finished trial (`bestTrial`: its id, final measurement metrics and
parameters), judged by the study's objective metric (the first without safetyConfig) and its goal, and its console
link is a tuning job's own page (`.../training/hyperparameter-tuning-jobs/ID`), not a custom job's.
"""

from __future__ import annotations

from typing import Any, ClassVar

from gcp_training_jobs.backends.base import Target
from gcp_training_jobs.backends.vertex import VertexBackend
from gcp_training_jobs.jobspec.core.names import TUNING


def _objective(resource: dict[str, Any]) -> tuple[str, str] | None:
    """(metric id, goal) of the study's objective: its first metric that is not a safety metric."""
    metrics = [m for m in (resource.get("studySpec") or {}).get("metrics") or [] if isinstance(m, dict)]
    chosen = next((m for m in metrics if m.get("safetyConfig") is None), None)
    if chosen is None or not chosen.get("metricId"):
        return None
    return str(chosen["metricId"]), str(chosen.get("goal") or "MAXIMIZE")


def best_trial(resource: dict[str, Any]) -> dict[str, Any] | None:
    """The succeeded trial with the best final value of the objective metric (the first of equals), as
    {id, metrics: {metricId: value}, parameters: {parameterId: value}}; None while no trial has one."""
    objective = _objective(resource)
    if objective is None:
        return None
    metric_id, goal = objective
    sign = -1.0 if goal == "MINIMIZE" else 1.0
    best: tuple[float, dict[str, Any]] | None = None
    for trial in resource.get("trials") or []:
        if not isinstance(trial, dict) or trial.get("state") != "SUCCEEDED":
            continue
        final = (trial.get("finalMeasurement") or {}).get("metrics") or []
        metrics = {m.get("metricId"): m.get("value") for m in final if isinstance(m, dict)}
        value = metrics.get(metric_id)
        if isinstance(value, int | float) and not isinstance(value, bool) and (best is None
                                                                              or sign * value > best[0]):
            params = {p.get("parameterId"): p.get("value") for p in trial.get("parameters") or []
                      if isinstance(p, dict)}
            best = (sign * value, {"id": trial.get("id"), "metrics": metrics, "parameters": params})
    return best[1] if best else None


class VertexTuningBackend(VertexBackend):
    """Vertex AI HyperparameterTuningJobs: a study whose trials each run the same CustomJobSpec."""

    kind: ClassVar[str] = TUNING
    collection: ClassVar[str] = "hyperparameterTuningJobs"  # ListHyperparameterTuningJobsResponse's field too
    #: A tuning job's own page, beside the custom jobs' in the console's Training section (the SDK's
    #: HyperparameterTuningJob sets no `_job_type`, so it gives no link of its own to follow).
    console_page: ClassVar[str] = "training/hyperparameter-tuning-jobs"

    def outputs(self, resource: dict[str, Any], target: Target) -> dict[str, Any]:
        """The custom-job outputs, plus trialCount (trials so far) and bestTrial. List answers carry no trials
        (ListHyperparameterTuningJobsResponse), so outputs are read from a get or create answer."""
        return {**super().outputs(resource, target), "trialCount": len(resource.get("trials") or []),
                "bestTrial": best_trial(resource)}
