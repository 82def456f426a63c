"""A line a dynamic provider says once in a run (a preview, or an update).

A run may call `check` twice for one resource: on a replacement the engine checks the new inputs again without
the old ones, to recompute their defaults (pulumi/pulumi, pkg/resource/deploy/step_generator.go: "If we are going to
perform a replacement, we need to recompute the default values"), so a line of `check` would be said twice. A line
is therefore said once per run and process (backends/run_cache.RUN, keyed by the line): `pulumi preview` says it
once; `pulumi up` once in its preview and once as it updates, each run a provider process of its own (`--skip-preview`:
once).

The Python dynamic provider process has no engine connection of the SDK's: its `pulumi.log` lines go to stderr, which
the engine shows as the stack's diagnostics twice, as they come and again in the closing summary. The engine passes
its address to every provider it starts (the first argument of `python -m pulumi.dynamic`), and an `ephemeral`
message sent to its Log service is shown as it comes only. A line said that way goes on a gRPC channel opened for it
(nothing kept between calls, the SDK's settings untouched); where no engine started this process (tests, mocks) it
goes to `pulumi.log.info`.

Every line the provider says goes through here (`say_once`, `info`, `warn`, `warn_once`, `error`, `debug`) with each
credential in it masked (catalog.credentials.masked_text): a job's args or an API's answer that echoes one never reach
a log.
"""

from __future__ import annotations

import re
import sys
from functools import partial

import pulumi

from gcp_training_jobs.backends.run_cache import RUN
from gcp_training_jobs.jobspec.catalog.credentials import masked_text

#: What the engine's address looks like (host:port).
ADDRESS = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\]):[0-9]{1,5}")


def engine_address() -> str | None:
    """The engine's address, when this process is a provider the engine started."""
    args = sys.argv[1:]
    return args[0] if args and ADDRESS.fullmatch(args[0]) else None


def say_once(message: str) -> None:
    """`message`, its credentials masked, as an info line shown once (ephemeral), or pulumi.log.info where no engine
    started this process; the same line again in the same run is not said again (keyed masked: the run's cache holds
    no credential)."""
    message = masked_text(message)
    RUN.once(("said", message), partial(_say, message))


def _say(message: str) -> None:
    address = engine_address()
    if address is None:
        pulumi.log.info(message)
        return
    import grpc
    from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc

    try:  # a channel of its own, closed after the line: the SDK's settings (context variables) are left alone
        with grpc.insecure_channel(address) as channel:
            engine_pb2_grpc.EngineStub(channel).Log(engine_pb2.LogRequest(
                severity=engine_pb2.INFO, message=message, urn="", streamId=0, ephemeral=True), timeout=10)
    except grpc.RpcError:  # said twice rather than not at all
        pulumi.log.info(message)


def info(message: str) -> None:
    pulumi.log.info(masked_text(message))


def warn(message: str) -> None:
    pulumi.log.warn(masked_text(message))


def warn_once(message: str) -> None:
    """`message`, its credentials masked, as a warning said once in a run (a replacement's inputs are checked twice:
    a job's warnings, its credentials', are said once per preview)."""
    message = masked_text(message)
    RUN.once(("warned", message), partial(pulumi.log.warn, message))


def error(message: str) -> None:
    pulumi.log.error(masked_text(message))


def debug(message: str) -> None:
    pulumi.log.debug(masked_text(message))
