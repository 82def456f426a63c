"""TrainingJob as a provider package (`gcp-training-jobs:index:TrainingJob`), for a Pulumi program in any language:
the provider (`provider`), the engine's values read and written with their secrets (`values`), and `serve`, the
plugin's entry point (provider/__main__.py in the repository). Its schema is job_model.schema's."""

from __future__ import annotations

import sys

from gcp_training_jobs.jobspec.core.version import __version__


def serve() -> None:
    """Run the provider as the engine's plugin: a gRPC server whose port goes to stdout (the engine's address is
    the first argument), ended with its engine as the dynamic provider is (resources.engine_watch: no create, cancel,
    delete or relabel is sent for an engine that is gone)."""
    from pulumi.provider.experimental.server import main

    from gcp_training_jobs.resources import engine_watch
    from gcp_training_jobs.resources.package.provider import TrainingJobPackage

    engine_watch.start(engine_watch.Engine.of_plugin(sys.argv[1:]))
    main(sys.argv[1:], __version__, TrainingJobPackage())
