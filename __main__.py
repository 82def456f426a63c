"""The Pulumi program: read the stack's settings (stacks/Pulumi.STACK.yaml), build what they describe.

Everything lives in the library, gcp_training_jobs/: resources/settings/ validates the config (every problem at once,
as a clean
Pulumi error), resources/stack.py registers the APIs, buckets, TPU grant, trainer packages and jobs and exports
the outputs. `gcp-training-jobs plan --stack NAME` runs this same file offline under Pulumi's mocks.
"""

from pathlib import Path

from gcp_training_jobs.resources.settings import from_pulumi_config
from gcp_training_jobs.resources.stack import build_stack

settings = from_pulumi_config(root=Path(__file__).resolve().parent)
build_stack(settings)
