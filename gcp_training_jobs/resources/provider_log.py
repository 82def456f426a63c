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

The provider package's plugin is not the dynamic provider's process: the engine keeps a plugin's stderr for its own
log, so a line said there would be lost. The package's handlers name the resource each call is for (`RESOURCE`, a
context variable set around the call, which `asyncio.to_thread` carries into the worker thread): the lines of that
call go to the engine's Log service under that resource, shown as the dynamic provider's are (said as they come and
in the closing summary). Where no resource is named, as in the dynamic provider, they go to pulumi.log.

Every line the provider says goes through here (`say_once`, `info`, `warn`, `warn_once`, `error`, `debug`) with each
credential in it masked (catalog.credentials.masked_text): a job's args or an API's answer that echoes one never reach
a log.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from contextvars import ContextVar
from functools import partial

import pulumi

from gcp_training_jobs.backends.run_cache import RUN
from gcp_training_jobs.jobspec.catalog.credentials import masked_text

#: What the engine's address looks like (host:port).
ADDRESS = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\]):[0-9]{1,5}")

#: The URN of the resource the current call of the provider package is for (see the module's docstring); None in the
#: dynamic provider's process.
RESOURCE: ContextVar[str | None] = ContextVar("gcp_training_jobs_provider_log_resource", default=None)


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
    _to_engine("INFO", message, pulumi.log.info, urn="", ephemeral=True)


def _to_engine(severity: str, message: str, otherwise: Callable[[str], None], *, urn: str,
               ephemeral: bool = False) -> None:
    """`message` sent to the engine's Log service (severity by its name in engine.proto), under resource `urn` ("":
    the stack); by `otherwise` where no engine started this process, or the engine does not answer."""
    address = engine_address()
    if address is None:
        otherwise(message)
        return
    import grpc
    from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc

    try:  # a channel of its own, closed after the line: the SDK's settings (context variables) are left alone
        with grpc.insecure_channel(address) as channel:
            engine_pb2_grpc.EngineStub(channel).Log(engine_pb2.LogRequest(
                severity=getattr(engine_pb2, severity), message=message, urn=urn, streamId=0, ephemeral=ephemeral),
                timeout=10)
    except grpc.RpcError:  # said twice rather than not at all
        otherwise(message)


def _line(severity: str, message: str, otherwise: Callable[[str], None]) -> None:
    """A line of the provider: to the engine under the package's resource (RESOURCE), else by pulumi.log."""
    urn = RESOURCE.get()
    if urn is None:
        otherwise(message)
    else:
        _to_engine(severity, message, otherwise, urn=urn)


def info(message: str) -> None:
    _line("INFO", masked_text(message), pulumi.log.info)


def warn(message: str) -> None:
    _line("WARNING", masked_text(message), pulumi.log.warn)


def warn_once(message: str) -> None:
    """`message`, its credentials masked, as a warning said once in a run (a replacement's inputs are checked twice:
    a job's warnings, its credentials', are said once per preview)."""
    message = masked_text(message)
    RUN.once(("warned", message), partial(_line, "WARNING", message, pulumi.log.warn))


def error(message: str) -> None:
    _line("ERROR", masked_text(message), pulumi.log.error)


def debug(message: str) -> None:
    _line("DEBUG", masked_text(message), pulumi.log.debug)
