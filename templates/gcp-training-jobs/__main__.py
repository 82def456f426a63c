from pathlib import Path

from components import build_stack, from_pulumi_config

build_stack(from_pulumi_config(root=Path(__file__).resolve().parent))
