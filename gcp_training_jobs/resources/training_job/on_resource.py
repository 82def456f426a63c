"""The check's part for a job on a persistent resource (`persistentResourceId`): one the stack declares is its own
(made in the same `up`, held to Vertex's fit rule offline by the settings); any other names an existing resource,
which the check of a job about to be made asks Vertex about (backends.persistent_resources: it exists in the job's
project and region, is RUNNING, and has a pool each of the job's pools fits). A read that fails (no credentials, no
answer) is a warning: the create's own answer says the rest."""

from __future__ import annotations

import pulumi

from gcp_training_jobs.backends import persistent_resources
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.resources.job_model.inputs import Inputs


def resource_failures(new: Inputs, facts: JobFacts, region: str, endpoint: str | None) -> list[str]:
    """Why the job cannot be made on the existing resource it names (none: it can, or it names none, or its own)."""
    resource_id = facts.on_persistent_resource
    if resource_id is None or new.resource_declared:
        return []
    name = new.name or "job"
    try:
        looked = persistent_resources.look_up(new.project, region, resource_id, endpoint)
    except TrainingJobsError as error:
        pulumi.log.warn(f"job {name}: persistent resource {resource_id} not checked: {error}")
        return []
    why = persistent_resources.why_not(facts, looked, "job")
    return [why] if why else []
