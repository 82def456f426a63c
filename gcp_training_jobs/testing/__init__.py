"""Testing code that calls Vertex AI offline, against the loopback emulator (gcp_training_jobs.emulator).

    from gcp_training_jobs.testing import VertexEmulator

`pytest_plugin` holds the pytest fixtures (`vertex_emulator`); pytest loads it by itself once the package is
installed (a `pytest11` entry point), or through `pytest_plugins = ["gcp_training_jobs.testing.pytest_plugin"]` in a
conftest.py. Nothing here imports pytest or a Google client library until it is used: they are not
dependencies of the package.
"""

from gcp_training_jobs.testing.vertex_emulator import VertexEmulator

__all__ = ["VertexEmulator"]
