"""How this project's credential scan (gcp_training_jobs/jobspec/catalog/credentials.py) compares with detect-secrets
on the same held-out set (tests/data/credential_set.py): credentials found (recall) and ordinary values taken for
one (false positives). detect-secrets is not a dependency: run this with a Python that has it
(`python3 -m venv /tmp/ds && /tmp/ds/bin/pip install detect-secrets==1.5.0`), from the project root:

    PYTHONPATH=. /tmp/ds/bin/python benchmarks/credential_scanners.py

Each value is scanned as the line a job's config holds it in (`NAME=VALUE`, or the argument itself), by
detect-secrets' default plugins with its default filters (a file scanned, as `detect-secrets scan` does)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.data.credential_set import NEGATIVES, POSITIVES  # noqa: E402


def _line(name: str, value: str) -> str:
    return f"{name}={value}" if name and not name.startswith("-") else f"{name} {value}".strip()


def ours(name: str, value: str) -> bool:
    from gcp_training_jobs.jobspec.catalog.credentials import credential_in

    return credential_in(value, name) is not None


def detect_secrets_scan(name: str, value: str) -> bool:
    """Whether `detect-secrets scan` (its default plugins and filters) reports the line, written in a file of its own:
    its `scan_line` is the ad hoc mode, which reports every candidate whatever its entropy."""
    import tempfile

    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    with tempfile.TemporaryDirectory() as folder, default_settings():
        path = Path(folder) / "job.env"
        path.write_text(_line(name, value) + "\n")
        found = SecretsCollection()
        found.scan_file(str(path))
        return bool(list(found))


def main() -> None:
    scanners = {"gcp-training-jobs": ours}
    try:
        import detect_secrets  # noqa: F401

        scanners["detect-secrets"] = detect_secrets_scan
    except ImportError:
        print("detect-secrets is not installed in this Python: only this project's scan is measured")
    for title, scan in scanners.items():
        found = sum(scan(n, v) for n, v in POSITIVES)
        wrong = sum(scan(n, v) for n, v in NEGATIVES)
        print(f"{title}: {found}/{len(POSITIVES)} credentials found, {wrong}/{len(NEGATIVES)} ordinary values "
              "taken for one")


if __name__ == "__main__":
    main()
