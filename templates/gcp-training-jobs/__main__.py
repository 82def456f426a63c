from pathlib import Path

from gcp_training_jobs import build_stack, from_pulumi_config

build_stack(from_pulumi_config(root=Path(__file__).resolve().parent))
