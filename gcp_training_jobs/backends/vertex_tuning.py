"""Vertex AI hyperparameter tuning (aiplatform v1, projects.locations.hyperparameterTuningJobs): requests and
answers.

A HyperparameterTuningJob lives in the same API as a CustomJob and shares its job states, labels, list filter
and delete-after-finish, so this backend is the custom-jobs backend on another collection; the lifecycle
(lookup before create, adoption, reconciliation, wait, cancel, delete) is lifecycle.Jobs, unchanged. The body
is built by the pure translation in gcp_training_jobs.jobspec.render.bodies.tuning_body. Outputs add the number of
trials so
far (`trialCount`) and the best finished trial (`bestTrial`: its id, final measurement metrics and parameters),
judged by the study's objective metric (the first without safetyConfig) and its goal.
"""

from __future__ import annotations

from typing import Any, ClassVar

from gcp_training_jobs.backends import transport
from gcp_training_jobs.backends.base import Target, label_filter
from gcp_training_jobs.backends.vertex import VertexBackend
from gcp_training_jobs.jobspec.core.names import JOB_LABEL, TUNING, label_value

#: The list answer's field (ListHyperparameterTuningJobsResponse).
LISTED = "hyperparameterTuningJobs"


def _collection(svc: Any) -> Any:
    return transport.collection(svc, "projects", "locations", "hyperparameterTuningJobs")


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

    def create_request(self, svc: Any, target: Target, body: dict[str, Any]) -> Any:
        return _collection(svc).create(parent=self._parent(target), body=body)

    def get_request(self, svc: Any, name: str) -> Any:
        return _collection(svc).get(name=name)

    def cancel_request(self, svc: Any, name: str) -> Any:
        return _collection(svc).cancel(name=name, body={})

    def delete_request(self, svc: Any, name: str) -> Any:
        return _collection(svc).delete(name=name)

    def find_request(self, svc: Any, target: Target, job_id: str) -> Any:
        return _collection(svc).list(parent=self._parent(target), filter=label_filter({JOB_LABEL: label_value(job_id)}))

    def list_request(self, svc: Any, target: Target, labels: dict[str, str], page_token: str | None) -> Any:
        return _collection(svc).list(parent=self._parent(target), filter=label_filter(labels), pageToken=page_token)

    def listed(self, answer: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
        return list(answer.get(LISTED) or []), answer.get("nextPageToken") or None

    def found(self, answer: dict[str, Any], job_id: str) -> dict[str, Any] | None:
        wanted = label_value(job_id)
        return next((j for j in self.listed(answer)[0] if (j.get("labels") or {}).get(JOB_LABEL) == wanted), None)

    def outputs(self, resource: dict[str, Any], target: Target) -> dict[str, Any]:
        """The custom-job outputs, plus trialCount (trials so far) and bestTrial. List answers carry no trials
        (ListHyperparameterTuningJobsResponse), so outputs are read from a get or create answer."""
        return {**super().outputs(resource, target), "trialCount": len(resource.get("trials") or []),
                "bestTrial": best_trial(resource)}
