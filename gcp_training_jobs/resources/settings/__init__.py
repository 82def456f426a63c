"""A stack's configuration as one validated tree: the only package that reads `pulumi.Config` or a stack file.

The config lives in `stacks/Pulumi.NAME.yaml` under namespaced keys (`gcp-training-jobs:backend`,
`gcp:project`, ...). As pydantic-settings splits its sources from its models, so does this package:
- model.py: the tree of settings models (shapes and syntax);
- stack_file.py: `load_stack_file`, the source read offline (`validate`, `plan`);
- pulumi_config.py: `from_pulumi_config`, the source inside a Pulumi program;
- judge.py: what both sources end in, so a stack file that validates is one `pulumi up` accepts;
- jobs.py, trainers.py: one job of the stack judged, and its trainer folder checked;
- secrets.py, decimals.py: encrypted values, and numbers Pulumi would change.

Importing this package imports neither pulumi nor googleapiclient (`validate` stays fast).
"""

from gcp_training_jobs.resources.settings.model import JOB_DIR_PLACEHOLDER, JobSettings, StackSettings
from gcp_training_jobs.resources.settings.pulumi_config import from_pulumi_config, settings_given
from gcp_training_jobs.resources.settings.secrets import OPAQUE
from gcp_training_jobs.resources.settings.stack_file import find_project_root, load_stack_file

__all__ = ["JOB_DIR_PLACEHOLDER", "OPAQUE", "JobSettings", "StackSettings", "find_project_root",
           "from_pulumi_config", "load_stack_file", "settings_given"]
