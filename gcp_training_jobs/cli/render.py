"""`render PATH`: the exact request body a backend would send for a job config, on stdout; its problems (and
any other message) go to stderr, so stdout is only ever the body. A value that looks like a credential is shown as
`<KIND, not shown>` (catalog.credentials.masked), as in every output, unless --show-secrets asks for it as written."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gcp_training_jobs.cli.gcloud_flags import input_paths
from gcp_training_jobs.cli.validate import load_file_job
from gcp_training_jobs.jobspec.catalog.credentials import masked, masked_text
from gcp_training_jobs.jobspec.core.errors import SpecError, UnreadableError
from gcp_training_jobs.jobspec.core.names import (
    AI_PLATFORM,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_UNREADABLE,
    ML_JOB_ID_MAX,
    VERTEX,
    command,
    job_id_of,
)
from gcp_training_jobs.jobspec.io.documents import Document, load
from gcp_training_jobs.jobspec.io.vocabulary import vocabulary_of


def cmd_render(args: argparse.Namespace) -> int:
    paths = input_paths(args)
    if len(paths) != 1:
        print("render takes one job config: PATH or --config FILE", file=sys.stderr)
        return EXIT_UNREADABLE
    path = Path(paths[0])
    try:
        doc = load(path)
    except UnreadableError as error:
        print(error, file=sys.stderr)
        return EXIT_UNREADABLE
    if doc.kind != "job":
        print(f"{path}: a stack file; render takes a job config (a Job with trainingInput, or a CustomJobSpec). "
              f"Use `{command('plan --stack ' + (doc.stack_name or 'NAME'))}` for stacks.",
              file=sys.stderr)
        return EXIT_UNREADABLE
    data: Any = doc.data
    custom = vocabulary_of(data) != "trainingInput"  # Vertex's vocabulary: no jobId in the file
    file_id = data.get("jobId") if isinstance(data, dict) and not custom else None
    job_id = args.job_id or (file_id if isinstance(file_id, str) else None) or job_id_of(path.stem, ML_JOB_ID_MAX)
    if isinstance(data, dict) and not custom:
        data = {**data, "jobId": job_id}
    backend = args.backend or (VERTEX if custom else AI_PLATFORM)
    try:
        judged = load_file_job(Document(path, "job", data),
                               argparse.Namespace(**{**vars(args), "backend": backend}), job_id=job_id, partial=False)
        for line in dict.fromkeys(w.within(file=str(path)).warning() for w in judged.warnings):  # each said once
            print(line, file=sys.stderr)  # stdout carries the body only: `render x.yaml > body.json` stays clean
        body = judged.checked().body_for(job_id)
        if not getattr(args, "show_secrets", False):  # a credential shown as <KIND, not shown>, as everywhere
            body = masked(body).value
    except SpecError as error:
        for problem in error.problems:  # a message that echoes a value shows its credential masked
            print(masked_text(str(problem.within(file=str(path)))), file=sys.stderr)
        return EXIT_INVALID
    json.dump(body, sys.stdout, indent=2, sort_keys=False)
    print()
    return EXIT_OK
