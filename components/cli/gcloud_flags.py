"""gcloud's submit flags: they complete (and, as in gcloud, override) a config.yaml before it is judged."""

from __future__ import annotations

import argparse
from typing import Any

from components.jobspec.documents import Document
from components.jobspec.load import load_job
from components.jobspec.names import DEFAULT_REGION

#: gcloud ai-platform jobs submit training flags that fill (and, as in gcloud, override) a config.yaml.
GCLOUD_FLAGS = {
    "runtime_version": "runtimeVersion",
    "python_version": "pythonVersion",
    "module_name": "pythonModule",
    "package_uris": "packageUris",
    "job_dir": "jobDir",
    "scale_tier": "scaleTier",
}


def with_flags(data: Any, args: argparse.Namespace) -> Any:
    """The job as gcloud would submit it: flags given on the command line win over the file."""
    if not isinstance(data, dict) or not isinstance(data.get("trainingInput"), dict):
        return data
    ti = dict(data["trainingInput"])
    for flag, field in GCLOUD_FLAGS.items():
        value = getattr(args, flag, None)
        if value is not None:
            ti[field] = value.split(",") if field == "packageUris" else value
    if args.region_flag is not None:
        ti["region"] = args.region_flag
    return {**data, "trainingInput": ti}


def load_config(doc: Document, args: argparse.Namespace) -> Any:
    return load_job(with_flags(doc.data, args), default_region=args.region, partial=True)


def add_gcloud_flags(p: argparse.ArgumentParser) -> None:
    """The gcloud submit flags a config.yaml is completed with (they win over the file, as in gcloud)."""
    p.add_argument("--region", dest="region_flag", metavar="REGION",
                   help=f"trainingInput.region (a file without one gets {DEFAULT_REGION})")
    p.add_argument("--runtime-version")
    p.add_argument("--python-version")
    p.add_argument("--module-name", help="trainingInput.pythonModule")
    p.add_argument("--package-uris", help="comma-separated gs:// URIs (trainingInput.packageUris)")
    p.add_argument("--job-dir")
    p.add_argument("--scale-tier")
    p.set_defaults(region=DEFAULT_REGION)
