"""The emulator as a tool for users' own tests: the README's "Test your Vertex code offline" example runs as it
stands, through a conftest's `pytest_plugins` and, with the package installed, through the `pytest11` entry point
alone; the package needs neither pytest nor the SDK to import; and `python -m components emulator` passes every
option the emulator has.
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from gcp_training_jobs.cli.main import parser as cli_parser
from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.emulator.cli import add_arguments
from tests.helpers import install_wheel, run_ok

ROOT = Path(__file__).resolve().parents[1]
HEADING = "### Test your Vertex code offline"
#: The documentation page that holds the example.
PAGE = ROOT / "docs" / "emulator-and-testing.md"
PLUGIN = "gcp_training_jobs.testing.pytest_plugin"
ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}


def readme_example() -> str:
    """The first python block of the README's section, exactly as a reader copies it."""
    section = PAGE.read_text(encoding="utf-8").split(HEADING, 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, f"no python example under {HEADING!r} in {PAGE.relative_to(ROOT)}"
    return found.group(1)


def run_pytest(python: Path | str, folder: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)], cwd=folder,
                          capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.slow
def test_the_readme_example_runs_with_pytest_plugins_in_a_conftest(tmp_path: Path) -> None:
    (tmp_path / "test_readme_example.py").write_text(readme_example())
    (tmp_path / "conftest.py").write_text(f"pytest_plugins = [{PLUGIN!r}]\n")
    done = run_pytest(sys.executable, tmp_path, env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


@pytest.mark.slow
def test_installed_the_entry_point_alone_brings_the_fixture(tmp_path: Path) -> None:
    """A wheel of the package in a fresh virtualenv (dependencies reached through a .pth file, nothing
    downloaded): pytest loads the plugin by itself; a conftest naming it as well is harmless."""
    python, site = install_wheel(tmp_path)
    user = tmp_path / "user"
    user.mkdir()
    (user / "test_readme_example.py").write_text(readme_example())
    alone = run_pytest(python, user)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert "2 passed" in alone.stdout
    (user / "conftest.py").write_text(f"pytest_plugins = [{PLUGIN!r}]\n")
    both = run_pytest(python, user)
    assert both.returncode == 0 and "2 passed" in both.stdout, both.stdout + both.stderr
    where = run_ok(python, "-c", "import gcp_training_jobs.testing as t; print(t.__file__)", cwd=user)
    assert Path(where.strip()).is_relative_to(site)


@pytest.mark.slow
def test_the_package_imports_without_pytest_or_the_sdk() -> None:
    script = (
        "import sys\n"
        "from gcp_training_jobs.emulator import Emulator\n"
        "from gcp_training_jobs.testing import VertexEmulator\n"
        "with Emulator(port=0) as emulator:\n"
        "    offline = VertexEmulator(emulator)\n"
        "    assert offline.endpoint.startswith('http://127.0.0.1:')\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest')"
        " or m.startswith(('google.cloud.aiplatform', 'googleapiclient'))]\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env=ENV)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_without_the_sdk_the_client_asked_for_says_what_to_install() -> None:
    script = (
        "import sys\n"
        "sys.modules['google.cloud.aiplatform_v1'] = None  # as if google-cloud-aiplatform were not installed\n"
        "from gcp_training_jobs.emulator import Emulator\n"
        "from gcp_training_jobs.testing import VertexEmulator\n"
        "with Emulator(port=0) as emulator:\n"
        "    VertexEmulator(emulator).job_client()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env=ENV)
    assert done.returncode == 1
    assert "ImportError: google-cloud-aiplatform is not installed: `pip install google-cloud-aiplatform`" in done.stderr


# ------------------------------------------------------------------------- python -m components emulator


def option_dests(add: Any) -> set[str]:
    parser = argparse.ArgumentParser()
    add(parser)
    return {a.dest for a in parser._actions if a.dest != "help"}


def test_the_command_has_an_option_for_every_setting_of_the_emulator() -> None:
    """Every Emulator setting but `host` (loopback, on purpose) and `state` (an object, for tests in process)."""
    settings = set(inspect.signature(Emulator.__init__).parameters) - {"self", "host", "state"}
    assert option_dests(add_arguments) == settings
    sub = next(a for a in cli_parser()._actions if isinstance(a, argparse._SubParsersAction))
    emulator_command = sub.choices["emulator"]
    assert {a.dest for a in emulator_command._actions if a.dest not in ("help", "func")} == settings


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.slow
def test_python_m_components_emulator_passes_every_option() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "components", "emulator", "--port", "0", "--phase-seconds", "1e9",
         "--cancel-seconds", "1e9", "--strict-int64", "--verbose"],
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stderr is not None
        url = re.fullmatch(r"emulator listening on (http://127\.0\.0\.1:\d+/)", process.stdout.readline().strip())
        assert url, "no 'emulator listening on' line"
        jobs = f"{url.group(1)}v1/projects/p/locations/us-central1/customJobs"
        pool = {"machineSpec": {"machineType": "n1-standard-4"}, "containerSpec": {"imageUri": "x"}}
        status, error = _post(jobs, {"displayName": "j", "jobSpec": {"workerPoolSpecs": [{**pool, "replicaCount": 1}]}})
        assert status == 400 and "int64 must be sent as a JSON string" in error["error"]["message"]  # --strict-int64
        status, job = _post(jobs, {"displayName": "j", "jobSpec": {"workerPoolSpecs": [{**pool, "replicaCount": "1"}]}})
        assert status == 200 and job["state"] == "JOB_STATE_QUEUED"  # --phase-seconds 1e9
        assert _post(f"{url.group(1)}v1/{job['name']}:cancel", {}) == (200, {})
        with urllib.request.urlopen(f"{url.group(1)}v1/{job['name']}", timeout=10) as answer:
            assert json.loads(answer.read())["state"] == "JOB_STATE_CANCELLING"  # --cancel-seconds 1e9
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        assert f"POST /v1/{job['name']}:cancel" in process.stderr.read()  # --verbose
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("bad", ["-1", "soon"])
@pytest.mark.slow
def test_a_bad_duration_is_a_usage_error(bad: str) -> None:
    done = subprocess.run([sys.executable, "-m", "components", "emulator", "--cancel-seconds", bad], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env=ENV)
    assert done.returncode == 2 and "argument --cancel-seconds:" in done.stderr and "Traceback" not in done.stderr
