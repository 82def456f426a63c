"""The base of this project's dynamic providers: where their API calls go, and nothing else on `self`.

A dynamic provider is pickled into Pulumi state, so it keeps only the endpoint override read in
`configure` (stack config `apiEndpoint`, else $GCP_TRAINING_JOBS_API_ENDPOINT): never a client, a
credential or an Output.
"""

from __future__ import annotations

from pulumi.dynamic import CheckFailure, ConfigureRequest, ResourceProvider

from components.jobspec.core.env import EnvError, env_settings
from components.jobspec.core.names import NAMESPACE

#: The stack config key of the endpoint override, in the library's own namespace.
ENDPOINT_KEY = f"{NAMESPACE}:apiEndpoint"


class EndpointProvider(ResourceProvider):
    """A provider whose calls go to Google's endpoint, or to the override configured for the stack."""

    endpoint: str | None

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
