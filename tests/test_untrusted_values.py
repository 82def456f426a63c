"""Values from a stack file are data, never code or markup: each bad one is a clear error naming the file, the field and
what is allowed (validate exit 1, no traceback), a credential among them is named by its kind and never printed, an
endpoint that would send Google credentials elsewhere is refused offline and where credentials are attached."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gcp_training_jobs.jobspec.core.endpoints import ALLOWED
from gcp_training_jobs.jobspec.core.names import EXIT_INVALID, MAX_DURATION_SECONDS, NAMESPACE

ROOT = Path(__file__).resolve().parents[1]
LOCAL = yaml.safe_load((ROOT / "stacks" / "Pulumi.local.yaml").read_text())
DEV_AI_PLATFORM = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev-ai-platform.yaml").read_text())
TOKEN = "ghp_" + "0123456789abcdefABCDEF0123456789abcd"


def validate(path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "components", "validate", str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env})


def written(tmp_path: Path, stack: dict[str, Any], name: str = "t") -> Path:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump(stack), encoding="utf-8")
    return path


def local(**changes: Any) -> dict[str, Any]:
    stack = yaml.safe_load(yaml.safe_dump(LOCAL))
    stack["config"].update({f"{NAMESPACE}:{k}": v for k, v in changes.items()})
    return stack


def refused(done: subprocess.CompletedProcess[str], line: str) -> str:
    text = done.stdout + done.stderr
    assert done.returncode == EXIT_INVALID, text[:3000]
    assert "Traceback" not in text and "internal error" not in text, text[:3000]
    assert line in text, text[:3000]
    return text


# --- labels that are not text -----------------------------------------------------------------------------

def test_a_stack_label_that_is_a_number_is_a_clear_error(tmp_path: Path) -> None:
    stack = local()
    stack["config"][f"{NAMESPACE}:labels"] = {"env": 5}
    path = written(tmp_path, stack)
    refused(validate(path), f"{path}: {NAMESPACE}:labels.env: 5: a number, not text; allowed: text (quote it: \"5\")")


def test_a_job_label_that_is_not_text_is_a_clear_error(tmp_path: Path) -> None:
    stack = local()
    stack["config"][f"{NAMESPACE}:jobs"]["gpu-spot"]["labels"] = {"team": 5, "tier": True}
    path = written(tmp_path, stack)
    text = refused(validate(path), f"{path}: {NAMESPACE}:jobs.gpu-spot.labels.team: 5: a number, not text; "
                                   "allowed: text (quote it: \"5\")")
    assert f"{NAMESPACE}:jobs.gpu-spot.labels.tier: True: a boolean, not text" in text


# --- durations past what a protobuf Duration holds -----------------------------------------------------------

@pytest.mark.parametrize("timeout", ["99999999999999999999s", f"{MAX_DURATION_SECONDS + 1}s"])
def test_a_timeout_past_a_protobuf_duration_is_refused_not_priced(tmp_path: Path, timeout: str) -> None:
    stack = local()
    stack["config"][f"{NAMESPACE}:jobs"]["gpu-spot"]["jobSpec"]["scheduling"]["timeout"] = timeout
    path = written(tmp_path, stack)
    text = refused(validate(path), f"{path}: {NAMESPACE}:jobs.gpu-spot.jobSpec.scheduling.timeout: '{timeout}' is "
                                   "not a duration; allowed: seconds with an s suffix, e.g. 3600s, at most "
                                   "315576000000s (a protobuf Duration)")
    assert "$" not in text


def test_the_longest_protobuf_duration_is_a_timeout(tmp_path: Path) -> None:
    stack = local()
    stack["config"][f"{NAMESPACE}:jobs"]["gpu-spot"]["jobSpec"]["scheduling"]["timeout"] = f"{MAX_DURATION_SECONDS}s"
    done = validate(written(tmp_path, stack))
    assert "scheduling.timeout" not in done.stdout + done.stderr


# --- a credential in trainer.path ----------------------------------------------------------------------------

def test_a_token_in_the_trainer_path_is_named_by_its_kind_not_printed(tmp_path: Path) -> None:
    stack = yaml.safe_load(yaml.safe_dump(DEV_AI_PLATFORM))
    job = next(j for j in stack["config"][f"{NAMESPACE}:jobs"].values() if "trainer" in j)
    job["trainer"]["path"] = f"trainers/{TOKEN}"
    path = written(tmp_path, stack)
    text = refused(validate(path), "trainer.path: holds what looks like a GitHub personal access token (gitleaks "
                                   f"rule github-pat) (not shown), and is no folder under {ROOT}; allowed: a folder")
    assert TOKEN[4:] not in text


# --- endpoints ------------------------------------------------------------------------------------------------

def test_an_unknown_https_endpoint_is_refused_offline_naming_the_field_and_what_is_allowed(tmp_path: Path) -> None:
    path = written(tmp_path, local(apiEndpoint="https://attacker.example/"))
    refused(validate(path), f"{path}: {NAMESPACE}:apiEndpoint: 'https://attacker.example/': to attacker.example, "
                            "which is not one of Google's API hosts: Google credentials would be sent to it; "
                            f"allowed: {ALLOWED}")


def test_an_allowed_host_is_taken_only_with_the_variable_naming_it(tmp_path: Path) -> None:
    path = written(tmp_path, local(apiEndpoint="https://vertex-proxy.corp.example/"))
    refused(validate(path), "which is not one of Google's API hosts")
    done = validate(path, GCP_TRAINING_JOBS_ALLOWED_ENDPOINT_HOSTS="vertex-proxy.corp.example")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_password_in_an_endpoint_is_refused_and_never_printed(tmp_path: Path) -> None:
    path = written(tmp_path, local(apiEndpoint="https://deploy:Tr0ub4dor&3!@aiplatform.googleapis.com/"))
    text = refused(validate(path), "a URL with a user name or password (not shown)")
    assert "Tr0ub4dor" not in text and "deploy" not in text


@pytest.mark.parametrize("command", [["status", "--stack", "local"], ["logs", "--stack", "local", "x"],
                                     ["prices", "refresh"]])
def test_the_endpoint_option_refuses_another_host_and_never_prints_a_password(command: list[str]) -> None:
    for endpoint, why in (("https://evil.example/", "which is not one of Google's API hosts"),
                          ("https://u:hunter2@evil.example/", "a URL with a user name or password (not shown)")):
        done = subprocess.run([sys.executable, "-m", "components", *command, "--endpoint", endpoint], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert f"argument --endpoint: https://evil.example/ is {'a URL' if 'hunter2' in endpoint else 'to'}" \
            in done.stderr
        assert why in done.stderr and f"allowed: {ALLOWED}" in done.stderr
        assert "hunter2" not in done.stdout + done.stderr


def test_a_label_that_is_not_text_is_a_clean_error_under_pulumi_too() -> None:
    """The program reads the stack's config from Pulumi (`pulumi preview`): the same words, no TypeError."""
    import json

    import pulumi

    from gcp_training_jobs.cli.plan.mocks import mocked_pulumi
    from gcp_training_jobs.resources.settings import from_pulumi_config

    jobs = {"train": {**LOCAL["config"][f"{NAMESPACE}:jobs"]["gpu-spot"], "labels": {"team": 7}}}
    config = {"gcp:project": "my-ml-test", f"{NAMESPACE}:labels": json.dumps({"env": 5}),
              f"{NAMESPACE}:jobs": json.dumps(jobs)}
    with mocked_pulumi("labels", config), pytest.raises(pulumi.RunError) as caught:
        from_pulumi_config(ROOT)
    text = str(caught.value)
    assert f"{NAMESPACE}:labels.env: 5: a number, not text; allowed: text (quote it: \"5\")" in text
    assert f"{NAMESPACE}:jobs.train.labels.team: 7: a number, not text" in text
    assert "TypeError" not in text and "Traceback" not in text
