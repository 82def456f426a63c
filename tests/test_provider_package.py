"""The provider package in-process (tests/provider_package_cases.py), run in a Python process of its own: the package
speaks Pulumi's provider protocol, whose `google/protobuf/status.proto` defines the message `google.rpc.Status`, and
Google's clients other test modules load (the Vertex SDK) define the same message from googleapis-common-protos; one
process's protobuf descriptor pool holds only one of the two ("duplicate symbol 'google.rpc.Status'"). The provider's
own process (provider/) loads only Pulumi's."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "provider_package_cases.py"


@pytest.mark.slow
def test_the_provider_package_cases_pass_in_a_process_of_their_own() -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(CASES)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    cases = len(re.findall(r"^def test_", CASES.read_text(encoding="utf-8"), flags=re.M))
    assert re.search(rf"\b{cases} passed\b", done.stdout), done.stdout[-2000:]
