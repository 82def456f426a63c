"""The environment settings (gcp_training_jobs/jobspec/core/env.py): every GCP_TRAINING_JOBS_* variable read into one
pydantic model, EnvSettings, by every module that uses it; each one's default, a good value
and a bad one (a problem naming the variable and what it allows); the command line, the program and the
providers refusing a bad value cleanly; and the README's table naming every variable."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from datetime import date
from pathlib import Path
from typing import Any

import pulumi
import pytest

from gcp_training_jobs.backends import lifecycle, transport
from gcp_training_jobs.backends.transport import RetryPolicy
from gcp_training_jobs.jobspec.core import endpoints, env
from gcp_training_jobs.jobspec.core.env import ALLOWED, VARIABLES, EnvError, EnvSettings, env_settings
from gcp_training_jobs.jobspec.core.errors import SpecError, TrainingJobsError
from gcp_training_jobs.jobspec.core.names import ENV_PREFIX, EXIT_INVALID, EXIT_OK, TODAY_ENV
from gcp_training_jobs.jobspec.rules import today
from gcp_training_jobs.resources import trainer_package
from gcp_training_jobs.resources.settings import from_pulumi_config
from gcp_training_jobs.resources.tpu_access import TpuServiceAccountProvider
from gcp_training_jobs.resources.training_job import TrainingJobProvider
from tests.helpers import provider_props

ROOT = Path(__file__).resolve().parents[1]
GUIDE_EXAMPLE = ROOT / "tests" / "fixtures" / "guide_examples" / "gpu_legacy.yaml"
TIMEOUT = VARIABLES["http_timeout_seconds"]
RETRY = VARIABLES["retry_base_seconds"]
RECONCILE = VARIABLES["reconcile_seconds"]
SECONDS_ABOVE_ZERO = "allowed: a number of seconds more than 0 and at most 86400, or unset for {}"
SECONDS_FROM_ZERO = "allowed: a number of seconds from 0 to 86400, or unset for {}"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """None of the variables set, whatever the shell running the tests has."""
    for name in VARIABLES.values():
        monkeypatch.delenv(name, raising=False)


def problem_lines(monkeypatch: pytest.MonkeyPatch, **variables: str) -> list[str]:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(EnvError) as caught:
        env_settings()
    return [str(p) for p in caught.value.problems]


# --- The names --------------------------------------------------------------------------------------------


def test_every_variable_is_named_by_its_setting_with_the_one_prefix() -> None:
    assert dict(VARIABLES) == {
        "http_timeout_seconds": "GCP_TRAINING_JOBS_HTTP_TIMEOUT_SECONDS",
        "retry_base_seconds": "GCP_TRAINING_JOBS_RETRY_BASE_SECONDS",
        "reconcile_seconds": "GCP_TRAINING_JOBS_RECONCILE_SECONDS",
        "today": "GCP_TRAINING_JOBS_TODAY",
        "allowed_endpoint_hosts": "GCP_TRAINING_JOBS_ALLOWED_ENDPOINT_HOSTS",
        "api_endpoint": "GCP_TRAINING_JOBS_API_ENDPOINT",
        "build_dir": "GCP_TRAINING_JOBS_BUILD_DIR",
        "prices_file": "GCP_TRAINING_JOBS_PRICES_FILE",
    }
    # the names other modules export are these, not copies
    assert VARIABLES["today"] == TODAY_ENV
    assert lifecycle.RECONCILE_ENV == RECONCILE
    assert VARIABLES["build_dir"] == trainer_package.BUILD_DIR_ENV


def test_each_setting_says_what_it_allows() -> None:
    assert set(env.ALLOWED) == set(EnvSettings.model_fields) == set(VARIABLES)
    assert all(env.ALLOWED.values())


# --- Each variable: its default, a good value, a bad value -------------------------------------------------


def test_http_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    assert env_settings().http_timeout_seconds == 60.0 == transport.http_timeout()
    monkeypatch.setenv(TIMEOUT, "2.5")
    assert transport.http_timeout() == 2.5
    allowed = SECONDS_ABOVE_ZERO.format(60)
    assert problem_lines(monkeypatch, **{TIMEOUT: "abc"}) == [f"{TIMEOUT}: 'abc' is not a number; {allowed}"]
    assert problem_lines(monkeypatch, **{TIMEOUT: "0"}) == [f"{TIMEOUT}: '0' is too small; {allowed}"]
    assert problem_lines(monkeypatch, **{TIMEOUT: "inf"}) == [f"{TIMEOUT}: 'inf' is not a finite number; {allowed}"]
    assert problem_lines(monkeypatch, **{TIMEOUT: "nan"}) == [f"{TIMEOUT}: 'nan' is not a finite number; {allowed}"]
    # past a day: a unit slip, and past what a socket timeout holds (1e10 s is refused by the OS layer)
    assert problem_lines(monkeypatch, **{TIMEOUT: "1e10"}) == [f"{TIMEOUT}: '1e10' is too large; {allowed}"]


def test_retry_base(monkeypatch: pytest.MonkeyPatch) -> None:
    assert RetryPolicy.from_env().base_seconds == 0.5 == RetryPolicy().base_seconds
    monkeypatch.setenv(RETRY, "0")  # no wait at all between retries: tests
    assert RetryPolicy.from_env() == RetryPolicy(base_seconds=0.0)
    monkeypatch.setenv(RETRY, "0.001")
    assert RetryPolicy.from_env().base_seconds == 0.001
    allowed = SECONDS_FROM_ZERO.format(0.5)
    assert problem_lines(monkeypatch, **{RETRY: "fast"}) == [f"{RETRY}: 'fast' is not a number; {allowed}"]
    assert problem_lines(monkeypatch, **{RETRY: "-0.1"}) == [f"{RETRY}: '-0.1' is too small; {allowed}"]
    assert problem_lines(monkeypatch, **{RETRY: "-inf"}) == [f"{RETRY}: '-inf' is not a finite number; {allowed}"]


def test_reconcile(monkeypatch: pytest.MonkeyPatch) -> None:
    assert lifecycle.reconcile_seconds() == 180.0
    monkeypatch.setenv(RECONCILE, "0.3")
    assert lifecycle.reconcile_seconds() == 0.3
    allowed = SECONDS_FROM_ZERO.format(180)
    assert problem_lines(monkeypatch, **{RECONCILE: "3m"}) == [f"{RECONCILE}: '3m' is not a number; {allowed}"]
    assert problem_lines(monkeypatch, **{RECONCILE: "86400.5"}) == [f"{RECONCILE}: '86400.5' is too large; {allowed}"]


def test_today(monkeypatch: pytest.MonkeyPatch) -> None:
    assert env_settings().today is None
    assert today() == date.today()
    monkeypatch.setenv(TODAY_ENV, "2025-01-31")
    assert today() == date(2025, 1, 31)
    allowed = "allowed: YYYY-MM-DD (e.g. 2026-11-22), or unset for the system's date"
    assert problem_lines(monkeypatch, **{TODAY_ENV: "31/01/2025"}) == [f"{TODAY_ENV}: '31/01/2025' is not a date; "
                                                                        f"{allowed}"]
    assert problem_lines(monkeypatch, **{TODAY_ENV: "2025-02-30"}) == [f"{TODAY_ENV}: '2025-02-30' is not a date; "
                                                                        f"{allowed}"]


def test_api_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    name = VARIABLES["api_endpoint"]
    assert TrainingJobProvider()._endpoint() is None  # Google's own
    monkeypatch.setenv(name, "http://127.0.0.1:8085/")
    assert TrainingJobProvider()._endpoint() == "http://127.0.0.1:8085/"
    allowed = f"allowed: {endpoints.ALLOWED}, or unset for Google's endpoints"
    assert problem_lines(monkeypatch, **{name: "127.0.0.1:8085"}) == [f"{name}: '127.0.0.1:8085' is not an http(s) "
                                                                       f"URL; {allowed}"]
    assert problem_lines(monkeypatch, **{name: "https://attacker.example/"}) == [
        f"{name}: https://attacker.example/ is to attacker.example, which is not one of Google's API hosts: Google "
        f"credentials would be sent to it; {allowed}"]
    assert problem_lines(monkeypatch, **{name: "https://u:Pa%24%24w0rd!@aiplatform.googleapis.com/"}) == [
        f"{name}: https://aiplatform.googleapis.com/ is a URL with a user name or password (not shown): an endpoint "
        f"takes none, Google's APIs are called with Application Default Credentials; {allowed}"]


def test_allowed_endpoint_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another https host only where the environment names it; a bad host name is named with what is allowed."""
    monkeypatch.setenv(VARIABLES["allowed_endpoint_hosts"], "proxy.corp.example, 10.0.0.5")
    monkeypatch.setenv(VARIABLES["api_endpoint"], "https://proxy.corp.example:8443/")
    assert TrainingJobProvider()._endpoint() == "https://proxy.corp.example:8443/"
    monkeypatch.setenv(VARIABLES["api_endpoint"], "http://proxy.corp.example/")  # never in clear text
    with pytest.raises(EnvError, match="not https:// and not loopback"):
        TrainingJobProvider()._endpoint()
    monkeypatch.delenv(VARIABLES["api_endpoint"])
    name = VARIABLES["allowed_endpoint_hosts"]
    assert problem_lines(monkeypatch, **{name: "proxy/x"}) == [
        f"{name}: 'proxy/x' is not a list of host names ('proxy/x' is not one); "
        f"allowed: {ALLOWED['allowed_endpoint_hosts']}"]


def test_build_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Any text is a folder path: there is no bad value, only unset (blank counts as unset)."""
    name = VARIABLES["build_dir"]
    assert trainer_package.default_build_dir(tmp_path) == tmp_path / ".build" / "trainers"
    monkeypatch.setenv(name, str(tmp_path / "elsewhere"))
    assert trainer_package.default_build_dir(tmp_path) == tmp_path / "elsewhere"
    monkeypatch.setenv(name, "  ")
    assert trainer_package.default_build_dir(tmp_path) == tmp_path / ".build" / "trainers"


def test_prices_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Any text is a file path: there is no bad value, only unset."""
    name = VARIABLES["prices_file"]
    monkeypatch.delenv(name, raising=False)  # tests/conftest.py points it at a missing file
    assert env_settings().prices_file is None
    monkeypatch.setenv(name, str(tmp_path / "prices.json"))
    assert env_settings().prices_file == tmp_path / "prices.json"


# --- Reading ----------------------------------------------------------------------------------------------


def test_a_blank_value_is_unset_and_values_are_read_without_surrounding_blanks(monkeypatch) -> None:
    monkeypatch.setenv(TIMEOUT, "")
    monkeypatch.setenv(TODAY_ENV, "   ")
    monkeypatch.setenv(RECONCILE, " 7 ")
    settings = env_settings()
    assert (settings.http_timeout_seconds, settings.today, settings.reconcile_seconds) == (60.0, None, 7.0)


def test_every_bad_variable_is_named_at_once_as_a_spec_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TIMEOUT, "abc")
    monkeypatch.setenv(TODAY_ENV, "tomorrow")
    with pytest.raises(EnvError) as caught:
        env_settings()
    assert isinstance(caught.value, SpecError) and isinstance(caught.value, TrainingJobsError)
    assert [p.path for p in caught.value.problems] == [TIMEOUT, TODAY_ENV]


def test_each_call_reads_the_environment_as_it_is_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is kept: a changed variable is read at once, a variable set back reads as before, and a bad value
    stays an error on every call."""
    monkeypatch.setenv(RECONCILE, "5")
    assert env_settings().reconcile_seconds == 5.0
    monkeypatch.setenv(RECONCILE, "6")
    assert env_settings().reconcile_seconds == 6.0
    monkeypatch.setenv(RECONCILE, "5")
    assert env_settings().reconcile_seconds == 5.0
    monkeypatch.setenv(RECONCILE, "x")
    for _ in range(2):
        with pytest.raises(EnvError):
            env_settings()
    monkeypatch.delenv(RECONCILE)
    assert env_settings().reconcile_seconds == 180.0


def test_a_given_mapping_is_read_instead_of_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TIMEOUT, "abc")
    assert env_settings({TIMEOUT: "9"}).http_timeout_seconds == 9.0
    assert env_settings({}).http_timeout_seconds == 60.0


def test_only_the_documented_upper_case_names_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TIMEOUT.lower(), "abc")
    monkeypatch.setenv(ENV_PREFIX + "HTTP_TIMEOUT", "abc")  # a misspelt name is not one of ours
    assert env_settings().http_timeout_seconds == 60.0


def test_the_model_is_the_variables_validated(monkeypatch) -> None:
    """env_settings() is EnvSettings validated from the variables set."""
    monkeypatch.setenv(RECONCILE, "12")
    monkeypatch.setenv(TODAY_ENV, "2024-06-01")
    assert env_settings() == EnvSettings(reconcile_seconds=12.0, today=date(2024, 6, 1))
    assert EnvSettings() == env_settings({})


def test_the_settings_are_immutable() -> None:
    settings = env_settings()
    with pytest.raises(ValueError):
        settings.http_timeout_seconds = 1.0  # type: ignore[misc]


def test_threads_reading_at_once_get_the_same_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """As the engine calls the provider: 8 threads read together."""
    monkeypatch.setenv(RECONCILE, "42")
    seen: list[float] = []
    barrier = threading.Barrier(8)

    def read() -> None:
        barrier.wait()
        seen.extend(env_settings().reconcile_seconds for _ in range(200))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [42.0] * 1600


# --- Where a bad value surfaces: the command line, the program, the providers ------------------------------


def run(*args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    environ = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **variables}
    return subprocess.run([sys.executable, "-m", "components", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env=environ)


@pytest.mark.slow
def test_the_command_line_names_a_bad_variable_with_exit_1_and_no_traceback() -> None:
    allowed = SECONDS_ABOVE_ZERO.format(60)
    for args in (("validate", str(GUIDE_EXAMPLE)), ("render", str(GUIDE_EXAMPLE)), ("plan", "--stack", "prod")):
        done = run(*args, **{TIMEOUT: "abc"})
        assert done.returncode == EXIT_INVALID, (args, done.stdout, done.stderr)
        assert done.stderr.splitlines() == [f"{TIMEOUT}: 'abc' is not a number; {allowed}"], args
        assert done.stdout == "" and "Traceback" not in done.stderr
    done = run("validate", str(GUIDE_EXAMPLE), **{TIMEOUT: "abc", TODAY_ENV: "soon"})
    assert [line.split(":")[0] for line in done.stderr.splitlines()] == [TIMEOUT, TODAY_ENV]
    assert run("validate", str(GUIDE_EXAMPLE), **{TIMEOUT: "30"}).returncode == EXIT_OK


def test_the_program_stops_with_a_clean_pulumi_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """RunError: Pulumi prints it without a traceback."""
    monkeypatch.setenv(VARIABLES["build_dir"], "")  # blank: fine
    monkeypatch.setenv(RETRY, "slow")
    with pytest.raises(pulumi.RunError) as caught:
        from_pulumi_config(root=ROOT)
    assert str(caught.value).splitlines() == [
        "invalid environment (1 problem):", f"{RETRY}: 'slow' is not a number; {SECONDS_FROM_ZERO.format(0.5)}"]


def job_props() -> dict[str, Any]:
    job = {"workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-8"}, "replicaCount": 1,
                                "containerSpec": {"imageUri": "us-docker.pkg.dev/my-proj/trainers/resnet:1.0"}}]}
    return provider_props({"jobSpec": job, "region": "us-central1"})


def test_the_providers_check_names_a_bad_variable_as_a_check_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    news = job_props()
    monkeypatch.setenv(TODAY_ENV, "someday")
    monkeypatch.setenv(TIMEOUT, "-1")
    wanted = [(TIMEOUT, f"'-1' is too small; {SECONDS_ABOVE_ZERO.format(60)}"),
              (TODAY_ENV, "'someday' is not a date; allowed: YYYY-MM-DD (e.g. 2026-11-22), or unset for the "
                          "system's date")]
    result = TrainingJobProvider().check({}, news)
    assert [(f.field, f.message) for f in result.failures] == wanted
    tpu = TpuServiceAccountProvider().check({}, {"project": "my-proj"})
    assert [(f.field, f.message) for f in tpu.failures] == wanted


def test_a_provider_call_past_check_raises_the_library_error_naming_the_variable(monkeypatch) -> None:
    """create / read / delete (a destroy runs no check first) fail before any request, with the same words."""
    monkeypatch.setenv(VARIABLES["api_endpoint"], "localhost:8085")
    with pytest.raises(EnvError) as caught:
        TrainingJobProvider().delete("projects/my-proj/locations/us-central1/customJobs/1", job_props())
    assert re.fullmatch(rf"{VARIABLES['api_endpoint']}: 'localhost:8085' is not an http\(s\) URL; allowed: .*",
                        str(caught.value))


# --- The README -------------------------------------------------------------------------------------------


def test_the_docs_table_names_every_variable_and_its_default() -> None:
    section = (ROOT / "docs" / "reference" / "environment.md").read_text()
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(GCP_TRAINING_JOBS_[A-Z_]+)` \| ([^|]+) \|", section,
                                                         re.MULTILINE)}
    assert set(rows) == set(VARIABLES.values())
    for field in ("http_timeout_seconds", "retry_base_seconds", "reconcile_seconds"):
        assert rows[VARIABLES[field]].strip() == f"{EnvSettings.model_fields[field].default:g}", field
        assert f"unset for {rows[VARIABLES[field]].strip()}" in env.ALLOWED[field], field
