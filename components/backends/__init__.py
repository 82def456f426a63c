"""One module per Google training API (requests and answers), plus what they share: the transport (client,
TLS-only credentials, retries) and the lifecycle (create with reconciliation, wait, cancel).

`get_backend(name)` picks one by its stack setting name. Importing this package imports neither
googleapiclient nor pulumi; it imports components.jobspec only.
"""

from __future__ import annotations

from components.backends.base import Backend
from components.jobspec.names import AI_PLATFORM, BACKENDS, VERTEX


def get_backend(name: str) -> Backend:
    if name == AI_PLATFORM:
        from components.backends.ml_v1 import MlV1Backend

        return MlV1Backend()
    if name == VERTEX:
        from components.backends.vertex import VertexBackend

        return VertexBackend()
    raise ValueError(f"unknown backend {name!r}; allowed: {', '.join(BACKENDS)}")
