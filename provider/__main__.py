"""The gcp-training-jobs provider plugin: the engine starts it (with the Python language host, PulumiPlugin.yaml, or
as `bin/pulumi-resource-gcp-training-jobs`) and talks to it over gRPC; the provider is
gcp_training_jobs.resources.package (docs/provider-package.md)."""

import sys
from pathlib import Path

try:
    import gcp_training_jobs  # noqa: F401 (installed: pip install gcp-training-jobs)
except ImportError:  # run from a checkout: the library is beside this folder
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gcp_training_jobs.resources.package import serve

serve()
