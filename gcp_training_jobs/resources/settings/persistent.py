"""`gcp-training-jobs:persistentResources`: a stack's Vertex AI persistent resources, judged (their shape by
jobspec.vocab.persistent, their pools by the same pool rules as a job's, jobspec.rules.persistent), and the jobs that
run on one the stack declares held to Vertex's fit rule, offline. A `persistentResourceId` the stack does not
declare names an existing resource: it is not judged here (`plan --online` and the provider's check ask Vertex)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from gcp_training_jobs.jobspec.core.names import NAMESPACE, PERSISTENT_RESOURCE_ID, TUNING, TUNING_JOB, VERTEX
from gcp_training_jobs.jobspec.core.problems import Problem, from_validation_error
from gcp_training_jobs.jobspec.rules import region_problem
from gcp_training_jobs.jobspec.rules.persistent import fit_problems, resource_problems
from gcp_training_jobs.jobspec.rules.tasks import today
from gcp_training_jobs.jobspec.translate.facts import PERSISTENT_RESOURCE, JobFacts
from gcp_training_jobs.jobspec.translate.persistent import ResourceFacts, resource_facts
from gcp_training_jobs.jobspec.vocab.persistent import PersistentResourceSpec
from gcp_training_jobs.resources.settings.jobs import label_problems

KEY = f"{NAMESPACE}:persistentResources"


def judge_resources(raw: Any, *, region: str, stack_labels: Mapping[str, str],
                    backend: str) -> tuple[dict[str, ResourceFacts], list[Problem]]:
    """Each declared resource as judged (name -> facts; only those without a problem), and every problem."""
    if not raw:  # unset, or Pulumi.yaml's default {}
        return {}, []
    if not isinstance(raw, dict):
        return {}, [Problem(KEY, f"expected a mapping of resource name to PersistentResource, got "
                            f"{type(raw).__name__}")]
    if backend != VERTEX:
        return {}, [Problem(KEY, f"is set on backend {backend}; persistent resources are Vertex AI's; allowed: "
                            f"{NAMESPACE}:backend vertex")]
    found: dict[str, ResourceFacts] = {}
    problems: list[Problem] = []
    for name, value in raw.items():
        at = f"{KEY}.{name}"
        if not PERSISTENT_RESOURCE_ID.fullmatch(str(name)):
            problems.append(Problem(KEY, f"{name!r} is not a persistent resource id; allowed: 1 to 63 lowercase "
                                    "letters, digits and -, starting with a letter, not ending with -"))
            continue
        try:
            spec = PersistentResourceSpec.model_validate(value)
        except ValidationError as error:
            problems += [p.within(prefix=at) for p in from_validation_error(error, PersistentResourceSpec)]
            continue
        if spec.region is not None and (refused := region_problem(spec.region, f"{at}.region", VERTEX)) is not None:
            problems.append(refused)  # the one region rule, as a job's
            continue
        facts = resource_facts(str(name), spec, region=region, labels=stack_labels, at=at)
        own = [p.within(prefix=at) for p in label_problems(spec.labels or {})]
        own += resource_problems(facts, region_at=f"{at}.region" if spec.region else f"{NAMESPACE}:region",
                                 today=today())
        problems += own
        if not own:
            found[str(name)] = facts
    return found, problems


def fit_problems_of(name: str, job: JobFacts, resources: Mapping[str, ResourceFacts],
                    ) -> list[Problem]:
    """A job on a resource the stack declares: in its region, each pool fitting one of its pools. A declared resource
    with problems of its own is not in `resources`: it is reported at its key, once."""
    if job.runs_on.kind != PERSISTENT_RESOURCE:
        return []
    resource_id = str(job.runs_on.persistent_resource_id)
    resource = resources.get(resource_id)
    if resource is None:
        return []
    prefix = f"{NAMESPACE}:jobs.{name}" + (f".{TUNING_JOB}" if job.kind == TUNING else "")  # its form's key
    if job.region != resource.region:
        return [Problem(f"{prefix}.{job.spec_key}.persistentResourceId", f"{resource_id!r} is in "
                        f"{resource.region}, and the job runs in {job.region}; allowed: a job in the resource's "
                        "region")]
    return list(fit_problems(job, resource, prefix))
