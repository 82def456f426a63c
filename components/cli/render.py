"""`render PATH`: the exact request body a backend would send for a job config."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from components.cli.gcloud_flags import load_config
from components.jobspec.documents import Document, load
from components.jobspec.errors import SpecError, UnreadableError
from components.jobspec.names import AI_PLATFORM, EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE
from components.jobspec.render import render_body


def job_id_from(path: Path) -> str:
    """A valid jobId from a file name: config.yaml -> config, 2-gpu.yaml -> job_2_gpu."""
    stem = re.sub(r"[^A-Za-z0-9_]", "_", path.stem)[:128]
    return stem if stem[:1].isalpha() else f"job_{stem}"[:128]


def cmd_render(args: argparse.Namespace) -> int:
    path = Path(args.path)
    try:
        doc = load(path)
    except UnreadableError as error:
        print(error, file=sys.stderr)
        return EXIT_UNREADABLE
    if doc.kind != "job":
        print(f"{path}: a stack file; render takes a job config (a Job with trainingInput). "
              f"Use `python -m components plan --stack {doc.stack_name or 'NAME'}` for stacks.",
              file=sys.stderr)
        return EXIT_UNREADABLE
    data: Any = doc.data
    job_id = args.job_id or (data.get("jobId") if isinstance(data, dict) else None) or job_id_from(path)
    if isinstance(data, dict):
        data = {**data, "jobId": job_id}
    try:
        job = load_config(Document(path, "job", data), args)
        body = render_body(job, args.backend or AI_PLATFORM, job_id)
    except SpecError as error:
        for problem in error.problems:
            print(problem.within(file=str(path)))
        return EXIT_INVALID
    json.dump(body, sys.stdout, indent=2, sort_keys=False)
    print()
    return EXIT_OK
