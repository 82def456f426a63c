"""`VertexEmulator`: the loopback emulator with Google's own clients pointed at it, for tests of code that calls
Vertex AI. Google's libraries are imported only by the method that needs them, so neither the Vertex AI SDK
(google-cloud-aiplatform) nor pytest is a dependency of this package.

How the SDK reaches a plain-HTTP loopback server (read in google-cloud-aiplatform 2.7.0): `api_endpoint` may
carry a scheme, and the REST transports keep it (`aiplatform_v1/services/job_service/transports/rest_base.py`:
"host = f'{url_scheme}://{host}' if not url_match_items['scheme'] else host"); `aiplatform.init` passes
`api_endpoint` through `ClientOptions` unchanged and uses REST when `api_transport="rest"` (its default is gRPC,
which would need TLS and HTTP/2). Anonymous credentials add no token, so nothing leaves the machine.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from gcp_training_jobs.emulator import Emulator, EmulatorState

DEFAULT_PROJECT = "test-project"
DEFAULT_REGION = "us-central1"


class VertexEmulator:
    """One emulator (`emulator`, controlled through `state`) and the ways to reach it as Vertex AI.

    `endpoint` is the `api_endpoint` to give any client ("http://127.0.0.1:PORT"), `project` / `region` /
    `parent` where jobs go. `job_client()` is the SDK's typed `JobServiceClient` (REST),
    `persistent_resource_client()` its `PersistentResourceServiceClient`, `aiplatform()` the
    high-level SDK after `aiplatform.init(...)` against the emulator, `discovery_client()` the
    google-api-python-client `aiplatform` v1 client.
    """

    def __init__(self, emulator: Emulator, project: str = DEFAULT_PROJECT, region: str = DEFAULT_REGION) -> None:
        self.emulator = emulator
        self.project = project
        self.region = region
        self._saved_config: dict[str, Any] | None = None

    @property
    def state(self) -> EmulatorState:
        """The emulator's controls: clock (`advance`, `set_phase_seconds`), faults, request log, jobs."""
        return self.emulator.state

    @property
    def endpoint(self) -> str:
        """The api_endpoint for Google's clients: "http://127.0.0.1:PORT"."""
        return self.emulator.url.rstrip("/")

    @property
    def parent(self) -> str:
        """projects/PROJECT/locations/REGION: where jobs are created and listed."""
        return f"projects/{self.project}/locations/{self.region}"

    def job_client(self) -> Any:
        """The SDK's `aiplatform_v1.JobServiceClient` over REST, anonymous, against the emulator."""
        try:
            from google.cloud import aiplatform_v1
        except ImportError as error:
            raise _missing("google-cloud-aiplatform", error) from error
        return aiplatform_v1.JobServiceClient(transport="rest", credentials=_anonymous(),
                                              client_options={"api_endpoint": self.endpoint})

    def persistent_resource_client(self) -> Any:
        """The SDK's `aiplatform_v1.PersistentResourceServiceClient` over REST, anonymous, against the emulator."""
        try:
            from google.cloud import aiplatform_v1
        except ImportError as error:
            raise _missing("google-cloud-aiplatform", error) from error
        return aiplatform_v1.PersistentResourceServiceClient(transport="rest", credentials=_anonymous(),
                                                             client_options={"api_endpoint": self.endpoint})

    def aiplatform(self, **init: Any) -> ModuleType:
        """`google.cloud.aiplatform`, initialised against the emulator (project, region, REST, anonymous
        credentials, a staging bucket); `init` adds or overrides `aiplatform.init` arguments. `restore()` (the
        pytest fixture calls it) puts the SDK's global configuration back as it was."""
        aiplatform = _aiplatform()
        if self._saved_config is None:
            self._saved_config = dict(vars(aiplatform.initializer.global_config))
        arguments: dict[str, Any] = {
            "project": self.project, "location": self.region, "api_endpoint": self.endpoint,
            "api_transport": "rest", "credentials": _anonymous(), "staging_bucket": f"gs://{self.project}-staging",
        }
        aiplatform.init(**{**arguments, **init})
        return aiplatform

    def discovery_client(self) -> Any:
        """google-api-python-client's `aiplatform` v1 client against the emulator (the discovery document it
        ships, no network)."""
        try:
            from googleapiclient import discovery
        except ImportError as error:
            raise _missing("google-api-python-client", error) from error
        return discovery.build("aiplatform", "v1", static_discovery=True, credentials=_anonymous(),
                               client_options={"api_endpoint": self.endpoint}, cache_discovery=False)

    def restore(self) -> None:
        """Put the SDK's global configuration back as `aiplatform()` found it."""
        if self._saved_config is None:
            return
        config = vars(_aiplatform().initializer.global_config)
        config.clear()
        config.update(self._saved_config)
        self._saved_config = None


def _anonymous() -> Any:
    from google.auth.credentials import AnonymousCredentials  # google-auth: a dependency of every Google client

    return AnonymousCredentials()


def _aiplatform() -> ModuleType:
    try:
        from google.cloud import aiplatform
    except ImportError as error:
        raise _missing("google-cloud-aiplatform", error) from error
    return aiplatform


def _missing(package: str, error: ImportError) -> ImportError:
    return ImportError(f"{package} is not installed: `pip install {package}` to drive the emulator with it ({error})")
