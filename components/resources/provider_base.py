"""The base of this project's dynamic providers: where their API calls go, and nothing else on `self`.

A dynamic provider is pickled into Pulumi state, so it keeps only the endpoint override read in
`configure` (stack config `apiEndpoint`, else $GCP_TRAINING_JOBS_API_ENDPOINT): never a client, a
credential or an Output.
"""

from __future__ import annotations

import os

from pulumi.dynamic import ConfigureRequest, ResourceProvider

#: Environment override of the API endpoint (tests, the emulator); stack config `apiEndpoint` wins.
ENDPOINT_ENV = "GCP_TRAINING_JOBS_API_ENDPOINT"


class EndpointProvider(ResourceProvider):
    """A provider whose calls go to Google's endpoint, or to the override configured for the stack."""

    endpoint: str | None

    def __init__(self) -> None:
        super().__init__()
        self.endpoint = None

    def configure(self, req: ConfigureRequest) -> None:
        configured = req.config.get("apiEndpoint")
        self.endpoint = str(configured) if configured else None

    def _endpoint(self) -> str | None:
        """The override in force: configured, else from the environment, else None (Google's own)."""
        return getattr(self, "endpoint", None) or os.environ.get(ENDPOINT_ENV) or None
