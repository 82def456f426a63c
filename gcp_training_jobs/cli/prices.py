"""`gcp-training-jobs prices refresh`: the price table rebuilt from the Cloud Billing Catalog API.

Reads Compute Engine's (6F81-5844-456A) and Vertex AI's (C7E2-9256-1C43) SKUs with services.skus.list, as
Application Default Credentials allow (anonymous against a loopback endpoint: the emulator, or
$GCP_TRAINING_JOBS_API_ENDPOINT), rebuilds every entry it can price (gcp_training_jobs.jobspec.catalog.prices_refresh)
and writes the table where estimates look first (prices.refreshed_path: $GCP_TRAINING_JOBS_PRICES_FILE, else
the user cache folder), or to --output.

The write is atomic (a temporary file in the same folder, then os.replace): a failed read, a partial or
malformed answer, or an answer that prices nothing leaves the table as it was, and the command says why and
exits 2 (EXIT_UNREADABLE: the price list could not be read).
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import date
from pathlib import Path

from gcp_training_jobs.cli.job_args import endpoint_type
from gcp_training_jobs.jobspec.core.endpoints import shown
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.core.names import ENV_PREFIX, EXIT_OK, EXIT_UNREADABLE


def variable(field: str) -> str:
    """The environment variable of an `EnvSettings` field, as `core.env.VARIABLES` names it (the parser is built
    for every command, so it does not import the settings' model; tests/test_cli.py holds the two alike)."""
    return ENV_PREFIX + field.upper()


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("prices", help="the price table estimates read")
    actions = p.add_subparsers(dest="action", required=True)
    r = actions.add_parser("refresh", help="rebuild the price table from the Cloud Billing Catalog API")
    r.add_argument("--output", type=Path, default=None,
                   help=f"where to write (default: ${variable('prices_file')}, else the user cache folder)")
    r.add_argument("--endpoint", default=None, type=endpoint_type,
                   help=f"the API endpoint (default: ${variable('api_endpoint')}, else "
                        "https://cloudbilling.googleapis.com/)")
    r.set_defaults(func=cmd_refresh)


def cmd_refresh(args: argparse.Namespace) -> int:
    from gcp_training_jobs.jobspec.catalog import prices  # only for this command: the parser is built for every one
    from gcp_training_jobs.jobspec.core.env import env_settings

    target = args.output or prices.refreshed_path()
    endpoint = args.endpoint or env_settings().api_endpoint
    try:
        return _refresh(target, endpoint)
    except (TrainingJobsError, ValueError, OSError) as error:
        return _fail(target, str(error))


def _refresh(target: Path, endpoint: str | None) -> int:
    from gcp_training_jobs.backends import billing
    from gcp_training_jobs.jobspec.catalog import prices, prices_build, prices_refresh

    parts = billing.fetch_rates(endpoint)
    where = shown(endpoint or billing.ENDPOINT)
    result = prices_refresh.refresh_table(parts, prices.bundled_table(), date.today(), where)
    if not result.machines:
        raise billing.BillingAnswerError(f"the answer from {where} prices no machine type of the Vertex AI "
                                         f"catalog ({len(parts)} SKU prices read); refusing to write a table")
    text = prices_build.dump_table(result.table)
    write_atomically(target, text)
    table = prices.load_table(target)
    print(f"wrote {target}: {result.machines} machine and {result.accelerators} accelerator prices from the "
          f"Cloud Billing Catalog ({where}), dated {table.date}; {result.kept} kept from the bundled snapshot "
          f"(oldest prices {table.oldest}). Estimates read this table first.")
    return EXIT_OK


def write_atomically(target: Path, text: str) -> None:
    """Write `text` to `target` or leave it untouched: a temporary file beside it, flushed, then os.replace."""
    import tempfile  # here: every command parses its arguments through this module (cli.main), few write a file

    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    replaced = False
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
        replaced = True
    finally:
        if not replaced:  # whatever stopped the write: the temporary file goes, the table stays as it was
            Path(temporary).unlink(missing_ok=True)


def _fail(target: Path, why: str) -> int:
    state = f"the price table at {target} is unchanged" if target.exists() else \
        f"no table was written to {target}; estimates read the bundled snapshot"
    print(f"prices refresh: {why}; {state}", file=sys.stderr)
    return EXIT_UNREADABLE
