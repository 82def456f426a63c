"""A stack's jobs as the APIs hold them, for `status`, `logs` and `spend`: never from Pulumi's state, which may be
days old.

The stack is found with the one stack-file finder (settings.stack_file: Pulumi.yaml's stackConfigDir) and judged
with `load_stack_file` (its project, backend, regions, endpoint and jobs). Its jobs are looked up with the APIs'
label filter, in every region its jobs may run in (settings.placements.regions: their own, their fallbacks' and
their placement candidates'; on Vertex AI, in each collection its jobs are made in):
- by the stack label every job has carried since it was added (`pulumi-stack`, a hash of the Pulumi project and
  stack: job_model.identity), which also finds the jobs of resources that have left the stack file;
- by each job's `pulumi-resource` label (a hash of organization/project/stack/name: job_model.identity),
  which every job has always carried, so jobs made before the stack label existed are found too. The Pulumi
  organization is part of it: `organization` for the self-managed backends (file://, gs://, s3://), the
  organization's name on Pulumi Cloud (`--organization`).
A job is named after its resource: by its `pulumi-resource` label, computed for each job of the stack file and
each TrainingJob the stack's state holds (a job a program declared with `TrainingJob(...)`: live/state.py), else by
its id's stem (the resource name before the random suffix, as inputs.new_job_id draws it: lowercase, `_` for what
an id cannot hold). Per name, the newest job is the stack's job now; the older ones are its history.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from gcp_training_jobs import backends
from gcp_training_jobs.backends.base import Backend, Target
from gcp_training_jobs.backends.lifecycle import Jobs
from gcp_training_jobs.backends.transport import ApiError, CredentialsError, InsecureEndpointError, TransportError
from gcp_training_jobs.cli.job_args import DEFAULT_ORGANIZATION
from gcp_training_jobs.jobspec.core.env import env_settings
from gcp_training_jobs.jobspec.core.errors import SpecError, TrainingJobsError, UnreadableError
from gcp_training_jobs.jobspec.core.names import EXIT_INVALID, EXIT_UNREADABLE, RESOURCE_LABEL, SPEC_LABEL, VERTEX
from gcp_training_jobs.jobspec.io.documents import read_yaml
from gcp_training_jobs.jobspec.translate.facts import JobFacts, facts_of_body
from gcp_training_jobs.resources.job_model.identity import identity_of, region_of_name, resource_label, stack_label
from gcp_training_jobs.resources.job_model.inputs import preview_job_id
from gcp_training_jobs.resources.settings import OPAQUE, StackSettings, find_project_root, load_stack_file
from gcp_training_jobs.resources.settings.placements import regions
from gcp_training_jobs.resources.settings.stack_file import project_file, stack_file, stack_names, stacks_folder

#: Where a found job's name comes from: the stack file, the stack's state (a job a program declared), its id.
NAMED_BY_FILE: Final = "stack file"
NAMED_BY_STATE: Final = "state"
NAMED_BY_ID: Final = "job id"
#: The APIs by the name the transport builds them with, as errors name them.
API_NAMES: Final = {"aiplatform": "Vertex AI (aiplatform.googleapis.com)", "ml": "AI Platform Training "
                    "(ml.googleapis.com)"}


class StackJobsError(TrainingJobsError):
    """A stack or job that cannot be found or read: what was asked, and what exists or what failed."""


@dataclass(frozen=True)
class Stack:
    """One stack as its file declares it."""

    name: str
    path: Path
    project_name: str
    """The Pulumi project (Pulumi.yaml's `name`), part of every job's identity."""
    settings: StackSettings
    endpoint: str | None

    def regions(self) -> list[str]:
        """Where the stack's jobs may run (settings.placements.regions: the stack's region, each job's own, its
        fallbacks' and its placement candidates')."""
        return regions(self.settings)


def folder_of(stacks_dir: Path | None) -> Path:
    """The stacks folder: given, else Pulumi.yaml's stackConfigDir in the project at or above the working folder."""
    if stacks_dir is not None:
        return stacks_dir
    return stacks_folder(find_project_root(Path.cwd()) or Path.cwd())


def stacks_in(stacks_dir: Path | None) -> list[str]:
    """The names of the stacks with a file in the stacks folder."""
    return stack_names(folder_of(stacks_dir))


def open_stack(name: str, stacks_dir: Path | None = None, endpoint: str | None = None) -> Stack:
    """The stack `name`, judged (SpecError for an invalid file; StackJobsError naming the stacks that exist)."""
    folder = folder_of(stacks_dir)
    path = stack_file(folder, name)
    if path is None:
        names = stack_names(folder)
        raise StackJobsError(f"unknown stack {name!r}: no {folder / f'Pulumi.{name}.yaml'}; stacks in {folder}: "
                             f"{', '.join(names) or 'none'}")
    root = find_project_root(path.resolve().parent) or Path.cwd()
    settings = load_stack_file(path, data=read_yaml(path), root=root)
    if settings.project == OPAQUE:
        raise StackJobsError(f"{path}: the project is a secret in the stack file; its jobs cannot be looked up "
                             "offline")
    project = project_file(root)
    document = read_yaml(project) if project is not None else None
    project_name = document.get("name") if isinstance(document, dict) else None
    if not isinstance(project_name, str) or not project_name:
        raise UnreadableError(f"{project or root / 'Pulumi.yaml'}: no project `name`, which every job's identity "
                              "holds")
    chosen = endpoint or (settings.api_endpoint if settings.api_endpoint != OPAQUE else None) \
        or env_settings().api_endpoint
    return Stack(name, path, project_name, settings, chosen)


@dataclass
class FoundJob:
    """One job of a stack as the API answered it."""

    name: str | None
    """Its resource's name: the stack file's or the state's, else its id's stem (`named_by`)."""
    resource: dict[str, Any]
    backend: Backend
    target: Target
    """Its project, the region it lives in and the endpoint."""
    facts: JobFacts
    """What status and spend read of the job (translate.facts.facts_of_body, in the region it lives in), once."""
    history: list[FoundJob] = field(default_factory=list)
    """The older jobs of the same resource, oldest first (on the stack's job now only)."""
    named_by: str = ""
    """Where its name comes from: NAMED_BY_FILE, NAMED_BY_STATE, NAMED_BY_ID ("": not named)."""

    @property
    def job_id(self) -> str:
        return self.backend.job_id_of(self.resource) or str(self.resource.get("name") or "")

    @property
    def key(self) -> str:
        return str(self.resource.get("name") or self.job_id)

    @property
    def state(self) -> str:
        return self.backend.state(self.resource)

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.facts.labels)

    @property
    def outputs(self) -> dict[str, Any]:
        """createTime, startTime, endTime, errorMessage, consoleUrl (the backend's outputs)."""
        return self.backend.outputs(self.resource, self.target)

    @property
    def in_stack_file(self) -> bool:
        return self.named_by == NAMED_BY_FILE

    @property
    def title(self) -> str:
        return self.name if self.in_stack_file and self.name else f"{self.name or self.job_id} (not in the stack file)"

    @property
    def attempt(self) -> int:
        """Which run of the same spec this job is (1: the first): its resource's jobs with its `pulumi-spec`."""
        spec = self.labels.get(SPEC_LABEL)
        return 1 + sum(1 for job in self.history if spec and job.labels.get(SPEC_LABEL) == spec)


def _collections(stack: Stack) -> list[Backend]:
    """The job collections the stack's jobs are made in: its API's training jobs, and on Vertex AI the tuning
    jobs when a job of the stack file is one."""
    settings = stack.settings
    chosen = [backends.get_backend(settings.backend)] + [backends.backend_for(settings.backend, job.job)
                                                         for job in settings.jobs.values()]
    return list({type(backend): backend for backend in chosen}.values())


def _facts_of(resource: dict[str, Any], listed_in: str) -> JobFacts:
    """A listed job's facts, read once: where it lives is its Vertex AI name's location, else its own
    trainingInput.region (facts_of_body), else the region it was listed in."""
    facts = facts_of_body(resource, region=region_of_name(str(resource.get("name") or "")))
    return facts if facts.region else replace(facts, region=listed_in)


def find_jobs(stack: Stack, organization: str = DEFAULT_ORGANIZATION,
              sleep: Callable[[float], None] = time.sleep, declared: Iterable[str] = ()) -> list[FoundJob]:
    """Every job of the stack the APIs hold, oldest first (StackJobsError naming the API when a lookup fails);
    `declared`: the resource names of the TrainingJobs the stack's state holds (live/state.py)."""
    settings = stack.settings
    names = {**{name: NAMED_BY_STATE for name in declared}, **{name: NAMED_BY_FILE for name in settings.jobs}}
    identities = {name: resource_label(identity_of(organization, stack.project_name, stack.name, name))[RESOURCE_LABEL]
                  for name in names}
    stems = {_stem(name): name for name in names}
    lookups = [stack_label(stack.project_name, stack.name)] + [{RESOURCE_LABEL: v} for v in identities.values()]
    by_identity = {value: name for name, value in identities.items()}
    found: dict[str, FoundJob] = {}
    for backend in _collections(stack):
        for region in stack.regions() if backend.name == VERTEX else [settings.region]:
            jobs = Jobs(backend, Target(settings.project, region, stack.endpoint), sleep=sleep)
            for labels in lookups:
                for resource in _listed(jobs, labels):
                    name = by_identity.get((resource.get("labels") or {}).get(RESOURCE_LABEL, ""))
                    facts = _facts_of(resource, region)
                    job = FoundJob(name, resource, backend, Target(settings.project, str(facts.region),
                                                                   stack.endpoint), facts)
                    if job.name is None:
                        job.name = stems.get(_stem(job.job_id, suffixed=True))
                    job.named_by = names.get(job.name or "", "")
                    if job.name is None and (stem := _stem(job.job_id, suffixed=True)):
                        job.name, job.named_by = stem, NAMED_BY_ID
                    found.setdefault(job.key, job)
    return sorted(found.values(), key=lambda j: str(j.resource.get("createTime") or ""))


def _stem(name: str, *, suffixed: bool = False) -> str:
    """The stem of a job id: of a resource name, the id's part before its suffix (inputs.new_job_id); of a job id
    (`suffixed`), the part before its last `_`."""
    return name.rsplit("_", 1)[0] if suffixed else preview_job_id(name).rsplit("_", 1)[0]


def _listed(jobs: Jobs, labels: dict[str, str]) -> list[dict[str, Any]]:
    try:
        return jobs.find_all(labels)
    except (ApiError, TransportError, CredentialsError, InsecureEndpointError) as error:
        raise StackJobsError(f"{API_NAMES.get(jobs.backend.api, jobs.backend.api)} {error}") from None


def current_jobs(found: list[FoundJob]) -> list[FoundJob]:
    """The stack's job now per name (the newest), each with its history; unnamed jobs stand alone."""
    by_name: dict[str, list[FoundJob]] = {}
    alone: list[FoundJob] = []
    for job in found:
        (by_name.setdefault(job.name, []) if job.name else alone).append(job)
    current = []
    for jobs in by_name.values():
        newest = jobs[-1]
        newest.history = jobs[:-1]
        current.append(newest)
    return sorted(current, key=lambda j: j.name or "") + alone


def reported(command: str, error: TrainingJobsError | OSError) -> int:
    """Say on stderr why a command on a stack's jobs could not go on, and its exit code: a stack file's problems,
    one a line (EXIT_INVALID); an API, transport or file error, after the command's name (EXIT_UNREADABLE)."""
    if isinstance(error, SpecError):
        print("\n".join(str(p) for p in error.problems), file=sys.stderr)
        return EXIT_INVALID
    print(f"{command}: {error}", file=sys.stderr)
    return EXIT_UNREADABLE
