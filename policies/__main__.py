"""The `gcp-training-jobs` policy pack: `pulumi preview --policy-pack policies/analyzer` (see README, GitOps).

Run by the engine as an analyzer plugin (argument: the engine's address). The project root goes on the
path first, so the pack judges with the project's own code (components) rather than a copy of it.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from policies.pack import serve  # noqa: E402 - after the project root is on the path

serve()
