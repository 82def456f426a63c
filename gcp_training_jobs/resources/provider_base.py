"""The base of this project's dynamic providers: where their API calls go, and nothing else on `self`.

A dynamic provider is pickled into Pulumi state, so it keeps only the endpoint override read in
`configure` (stack config `apiEndpoint`, else $GCP_TRAINING_JOBS_API_ENDPOINT): never a client, a
credential or an Output. `configure` runs in the provider's process, after the program pickled it, and also notes
the names of the stack's jobs, so that a check failure names a stack's job by its stack key (`refused`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pulumi.dynamic import CheckFailure, ConfigureRequest, ResourceProvider

from gcp_training_jobs.jobspec.catalog.credentials import masked_text
from gcp_training_jobs.jobspec.core.env import EnvError, env_settings
from gcp_training_jobs.jobspec.core.names import ENV_PREFIX, NAMESPACE
from gcp_training_jobs.resources import engine_watch
from gcp_training_jobs.resources.job_model.declared import JOB, JOB_KEYS
from gcp_training_jobs.resources.settings.decimals import GCP_KEYS

#: The stack config key of the endpoint override, in the library's own namespace.
ENDPOINT_KEY = f"{NAMESPACE}:apiEndpoint"


#: The stack's config as the provider keeps it: its library keys and Google's, as text, sorted (hashable: the key of
#: the run's judged stack).
StackConfig = tuple[tuple[str, str], ...]


def stack_config(raw: Mapping[str, Any]) -> StackConfig:
    """The keys of `raw` (the config `configure` is given) that the settings judge reads, each as text."""
    return tuple(sorted((str(key), value if isinstance(value, str) else json.dumps(value, sort_keys=True))
                        for key, value in raw.items()
                        if value is not None and (str(key).startswith(f"{NAMESPACE}:") or key in GCP_KEYS)))



class EndpointProvider(ResourceProvider):
    """A provider whose calls go to Google's endpoint, or to the override configured for the stack."""

    endpoint: str | None
    #: The names of the stack's jobs (its config's `jobs` keys), read by `configure` in the provider's process.
    stack_jobs: frozenset[str]
    #: The stack's config (its library and Google keys), kept by `configure` in the provider's process.
    stack_config: StackConfig = ()

    def __init__(self) -> None:
        super().__init__()
        self.endpoint = None

    def configure(self, req: ConfigureRequest) -> None:
        """The stack's `gcp-training-jobs:apiEndpoint`, named with its namespace whatever the program's project is
        called (as pulumi-gcp reads `gcp:`): a bare key would be read under the program's own project name."""
        configured = req.config.get(ENDPOINT_KEY)
        project = str(getattr(req.config, "_project_name", "") or "")
        if not configured and project and project != NAMESPACE and req.config.get(f"{project}:apiEndpoint"):
            # never a silent fall back to Google's endpoint where the user meant another one
            raise ValueError(f"{project}:apiEndpoint is set, but this library reads its settings under "
                             f"{NAMESPACE}:, whatever the program's project is named: set {ENDPOINT_KEY} instead "
                             f"(pulumi config set {ENDPOINT_KEY} URL)")
        self.endpoint = str(configured) if configured else None
        # In the engine's provider process: ended with its engine, before anything is sent (engine_watch; the watch
        # is the process's, never on `self`, which is pickled into state)
        engine_watch.start()
        # Named in the provider's process, after the program made the pickle: the state never holds them.
        if names := _stack_job_names(req.config.get(f"{NAMESPACE}:jobs")):
            self.stack_jobs = names
            # The stack's config as the settings judge reads it: what the stack's jobs ask of the quotas is judged
            # from it once per run in this process (training_job/plan.py), never carried in a job's inputs (a
            # provider of a stack without jobs, the TPU lookup's, keeps nothing more than its endpoint).
            self.stack_config = stack_config(getattr(req.config, "_props", None) or {})

    def _refused(self, kind: str, name: str, failures: Iterable[CheckFailure]) -> list[CheckFailure]:
        """The failures as the engine shows them: the project's own line each (`refused`), named by the stack key
        when `name` is one of the stack's jobs, else by the resource's argument; a credential a line echoes (a URI,
        an API's answer) masked."""
        return refused(kind, name, failures, from_stack=name in getattr(self, "stack_jobs", frozenset()))

    def _endpoint(self) -> str | None:
        """The override in force: configured, else from the environment, else None (Google's own)."""
        return getattr(self, "endpoint", None) or env_settings().api_endpoint


def environment_failures() -> list[CheckFailure]:
    """Every bad GCP_TRAINING_JOBS_* variable as a check failure naming it and what it allows, so that a preview
    fails on it cleanly before any call; none when all are good."""
    try:
        env_settings()
    except EnvError as error:
        return [CheckFailure(problem.path, problem.message) for problem in error.problems]
    return []



def refused(kind: str, name: str, failures: Iterable[CheckFailure], *, from_stack: bool = False) -> list[CheckFailure]:
    """Each failure with no property and its field in its reason. The engine shows a failure with a property as
    `property P value {V} has a problem: R`, V being the whole input's value (a job's every field) or `<nil>` for a
    nested path; without one, as `resource 'NAME' has a problem: R`. So R is the project's own line: where (the
    stack's config key, `jobs.NAME.FIELD`, for a stack's job; `KIND NAME, FIELD` for a resource a program
    declares; the variable for the environment), what is wrong and what is allowed. A credential a reason echoes (a
    URI, an API's answer) is masked."""
    return [Refusal(where(kind, name, f.property, from_stack=from_stack), f.property, masked_text(f.reason))
            if f.property else CheckFailure("", masked_text(f.reason)) for f in failures]


class Refusal(CheckFailure):
    """A check failure with no property: its reason is `WHERE: MESSAGE`; `field` and `message` kept apart."""

    def __init__(self, where: str, field: str, message: str) -> None:
        super().__init__("", f"{where}: {message}")
        self.field = field
        self.message = message


def where(kind: str, name: str, field: str, *, from_stack: bool = False) -> str:
    """Where a failure's field is set: an environment variable as itself, a stack setting by its key, a job's
    own settings by `NAMESPACE:jobs.NAME.FIELD` (the `job` input's fields are the job's keys), else the argument."""
    if field.startswith(ENV_PREFIX):
        return f"environment {field}"
    head = field.split(".", 1)[0].split("[", 1)[0]
    if from_stack and head in JOB_KEYS:
        rest = field[len(JOB.wire):].lstrip(".") if head == JOB.wire else field
        return f"{NAMESPACE}:jobs.{name}" + (f".{rest}" if rest else "")
    if field.startswith(f"{NAMESPACE}:"):  # a stack setting (the guardrails): the program's argument of that name
        return f"{field} (job {name})" if from_stack else f"{kind} {name}, {field.removeprefix(NAMESPACE + ':')}"
    return f"{NAMESPACE}:jobs.{name}, {field}" if from_stack else f"{kind} {name}, {field}"


def _stack_job_names(jobs: str | None) -> frozenset[str]:
    """The names of the stack's jobs (`gcp-training-jobs:jobs`, as Pulumi passes it: JSON text), none if unread."""
    try:
        names = json.loads(jobs) if jobs else {}
    except ValueError:
        return frozenset()
    return frozenset(str(key) for key in names) if isinstance(names, dict) else frozenset()
