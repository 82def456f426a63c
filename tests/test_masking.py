"""A credential is masked in every output and warned of by field and kind wherever a job is judged: the one walk
(catalog.credentials.masked) at any depth (args, command, env values, a tuning trial's spec), `validate` of a stack
file and of a job file (stderr, each warning once, the stack's dated warnings too), `render` (the body masked, each
warning once), the provider's lines and check failures, and TrainingJob's secret inputs.

The samples are built from the shapes in tests/test_credentials.py (none is a real credential)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from pulumi.runtime.sync_await import _sync_await

from gcp_training_jobs.jobspec.catalog import credentials
from gcp_training_jobs.jobspec.catalog.credentials import masked, masked_text
from gcp_training_jobs.jobspec.core.problems import CredentialWarning
from gcp_training_jobs.jobspec.load import judge_tuning_job
from gcp_training_jobs.resources import provider_log
from gcp_training_jobs.resources.training_job import _conceal_credentials
from tests.helpers import CREDENTIAL_SAMPLES as SAMPLES
from tests.helpers import provider_props

ROOT = Path(__file__).resolve().parents[1]
HF, GITHUB, SLACK = SAMPLES["huggingface-access-token"], SAMPLES["github-pat"], SAMPLES["slack-bot-token"]
RAW = (HF, GITHUB, SLACK, HF[3:], GITHUB[4:], SLACK[5:])
IMAGE = "us-docker.pkg.dev/my-proj/trainers/train:1"
#: A prebuilt image of a framework version newer than the catalog's page: a dated warning (a Notice).
NEWER_IMAGE = "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-99.py310:latest"
POOL: dict[str, Any] = {"machineSpec": {"machineType": "n2-standard-8"}, "replicaCount": 1,
                        "containerSpec": {"imageUri": IMAGE, "args": ["--epochs=3", f"--hf-token={HF}"],
                                          "command": ["python", "-m", "train"],
                                          "env": [{"name": "GH_TOKEN", "value": GITHUB}]}}
TUNING: dict[str, Any] = {
    "studySpec": {"metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
                  "parameters": [{"parameterId": "lr", "doubleValueSpec": {"minValue": 0.001, "maxValue": 0.1}}]},
    "maxTrialCount": 4, "parallelTrialCount": 2,
    "trialJobSpec": {"workerPoolSpecs": [{**POOL, "containerSpec": {"imageUri": IMAGE, "args": ["--notify", SLACK]}}]}}


def no_raw_value(text: str) -> None:
    assert not [raw for raw in RAW if raw in text], text


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "components", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


# --- The one walk -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rule", sorted(SAMPLES))
def test_masked_text_names_the_kind_in_place_of_the_value(rule: str) -> None:
    (kind,) = [c for c in credentials.CREDENTIALS if c.rule == rule]
    shown = masked_text(f"--token={SAMPLES[rule]} --epochs=3")
    rest = "" if rule == "private-key" else " --epochs=3"  # a key without its footer: masked to the end
    assert shown == f"--token=<{kind.what.split(' ', 1)[1]}, not shown>{rest}"


def test_the_project_words_of_a_masked_arg() -> None:
    assert masked_text(f"--hf-token={HF}") == "--hf-token=<Hugging Face access token, not shown>"
    assert masked_text("ghp_abc123def456ghi789jk") == \
        "<GitHub token (its prefix ghp_, gho_, ghu_, ghs_ or ghr_), not shown>"
    assert masked_text("--epochs=3 sk-learn 0123456789abcdef0123456789abcdef01234567") == \
        "--epochs=3 sk-learn 0123456789abcdef0123456789abcdef01234567"


def test_a_private_key_is_masked_to_its_footer_or_to_the_end() -> None:
    body = "MIIEowIBAAKCAQEA" + "x" * 40
    key = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
    assert masked_text(f"key: {key} done") == "key: <private key, not shown> done"
    assert masked_text(f"key: {key[:60]}") == "key: <private key, not shown>"


def test_the_walk_masks_every_depth_names_each_path_and_leaves_the_data_as_it_was() -> None:
    data = {"jobSpec": {"workerPoolSpecs": [copy.deepcopy(POOL)]}, "trial": copy.deepcopy(TUNING),
            "deep": [[{"x": ({"y": [GITHUB]},)}]], "labels": {"token": SLACK}}
    before = copy.deepcopy(data)
    walked = masked(data)
    assert data == before  # a copy, never the caller's data changed
    assert [(f.path, f.kind.rule) for f in walked.found] == [
        ("deep[0][0].x[0].y[0]", "github-pat"),
        ("jobSpec.workerPoolSpecs[0].containerSpec.args[1]", "huggingface-access-token"),
        ("jobSpec.workerPoolSpecs[0].containerSpec.env[0].value", "github-pat"),
        ("labels.token", "slack-bot-token"),
        ("trial.trialJobSpec.workerPoolSpecs[0].containerSpec.args[1]", "slack-bot-token")]
    no_raw_value(repr(walked.value))
    pool = walked.value["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
    assert pool["args"] == ["--epochs=3", "--hf-token=<Hugging Face access token, not shown>"]
    assert pool["env"] == [{"name": "GH_TOKEN", "value": "<GitHub personal access token, not shown>"}]
    assert pool["command"] == ["python", "-m", "train"]


def test_data_without_a_credential_is_returned_as_it_is() -> None:
    data = {"jobSpec": {"workerPoolSpecs": [{"containerSpec": {"args": ["--epochs=3", "hf_hub"]}}]}}
    walked = masked(data)
    assert walked.value is data and walked.found == ()


def test_a_tuning_trials_credential_is_warned_of_by_field_and_kind() -> None:
    judged = judge_tuning_job(TUNING, region="us-central1")
    assert judged.ok
    (warning,) = judged.warnings
    assert isinstance(warning, CredentialWarning)
    assert warning.path == "trialJobSpec.workerPoolSpecs[0].containerSpec.args[1]"
    assert warning.message.startswith("holds what looks like a Slack bot token (gitleaks rule slack-bot-token) "
                                      "(not shown)")
    no_raw_value(str(warning))


# --- validate and render --------------------------------------------------------------------------------------

def stack_file(tmp_path: Path, allow: bool = True) -> Path:
    """A stack whose jobs hold credentials at several depths, and a prebuilt image newer than the catalog; `allow`: it
    keeps them in plain text by its own setting (`plaintextCredentials: allow`)."""
    hub = {"jobSpec": {"workerPoolSpecs": [copy.deepcopy(POOL)]}}
    hub["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["imageUri"] = NEWER_IMAGE
    tune = {"trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "n1-standard-8", "region": "us-central1",
        "masterConfig": {"imageUri": IMAGE}, "args": ["--notify", SLACK],
        "hyperparameters": {"goal": "MAXIMIZE", "hyperparameterMetricTag": "accuracy", "maxTrials": 2,
                            "maxParallelTrials": 1,
                            "params": [{"parameterName": "lr", "type": "DOUBLE", "minValue": 0.001,
                                        "maxValue": 0.1}]}}}
    path = tmp_path / "stacks" / "Pulumi.creds.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump({"config": {
        "gcp:project": "my-ml-test", "gcp:region": "us-central1", "gcp-training-jobs:backend": "vertex",
        **({"gcp-training-jobs:plaintextCredentials": "allow"} if allow else {}),
        "gcp-training-jobs:jobs": {"hub": hub, "tune": tune}}}))
    return path


def warning_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ": warning: " in line]


def test_validate_of_a_stack_file_prints_each_job_warning_once_never_the_value(tmp_path: Path) -> None:
    path = stack_file(tmp_path)
    done = run("validate", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == f"{path}: ok (stack)\n"
    lines = warning_lines(done.stderr)
    key = "gcp-training-jobs:jobs"
    expected = [(f"{key}.hub.jobSpec.workerPoolSpecs[0].containerSpec.args[1]", "a Hugging Face access token"),
                (f"{key}.hub.jobSpec.workerPoolSpecs[0].containerSpec.env[0].value", "a GitHub personal access token"),
                (f"{key}.tune.trainingInput.args[1]", "a Slack bot token")]
    for field, kind in expected:
        (line,) = [li for li in lines if li.startswith(f"{path}: warning: {field}: ")]
        assert f"holds what looks like {kind}" in line and "Secret Manager" in line
        assert f"`pulumi config set --secret --path '{field}' -- VALUE`" in line
    (dated,) = [li for li in lines if "is newer than every pytorch gpu image the catalog knows" in li]
    assert dated.startswith(f"{path}: warning: {key}.hub.jobSpec.workerPoolSpecs[0].containerSpec.imageUri: "
                            "pytorch-gpu.2-99.py310 (pytorch 2.99, gpu)")
    assert len(lines) == len(set(lines)) == 4
    no_raw_value(done.stdout + done.stderr)


def test_validate_of_a_stack_file_refuses_a_plain_credential_naming_the_field_and_its_command(tmp_path: Path) -> None:
    """Without `plaintextCredentials: allow`, a credential written plainly in a stack file is a problem (exit 1): each
    field named with the exact command that encrypts it, never the value; an encrypted one is not refused."""
    path = stack_file(tmp_path, allow=False)
    done = run("validate", str(path))
    assert done.returncode == 1, done.stdout + done.stderr
    key = "gcp-training-jobs:jobs"
    for field in (f"{key}.hub.jobSpec.workerPoolSpecs[0].containerSpec.args[1]",
                  f"{key}.hub.jobSpec.workerPoolSpecs[0].containerSpec.env[0].value",
                  f"{key}.tune.trainingInput.args[1]"):
        (line,) = [li for li in done.stdout.splitlines() if li.startswith(f"{path}: {field}: holds what looks like")]
        assert f"`pulumi config set --secret --path '{field}' -- VALUE`" in line and "plaintextCredentials" in line
    no_raw_value(done.stdout + done.stderr)
    data = yaml.safe_load(path.read_text())
    data["config"][key]["tune"]["trainingInput"]["args"][1] = {"secure": "v1:bm90IGEgcmVhbCBjaXBoZXJ0ZXh0"}
    path.write_text(yaml.safe_dump(data))
    done = run("validate", str(path))
    assert "tune.trainingInput.args[1]" not in done.stdout and "hub.jobSpec" in done.stdout, done.stdout


@pytest.mark.parametrize("kind", ["custom", "tuning"])
def test_validate_and_render_of_a_job_file_say_each_warning_once_and_mask_the_body(tmp_path: Path,
                                                                                  kind: str) -> None:
    data = {"workerPoolSpecs": [{**copy.deepcopy(POOL), "containerSpec": {**POOL["containerSpec"],
                                                                         "imageUri": NEWER_IMAGE}}]} \
        if kind == "custom" else TUNING
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(data))
    checked, rendered = run("validate", str(path)), run("render", str(path))
    assert checked.returncode == 0 and rendered.returncode == 0, checked.stderr + rendered.stderr
    lines = warning_lines(checked.stderr)
    assert lines == warning_lines(rendered.stderr) and len(lines) == len(set(lines))
    assert len(lines) == (3 if kind == "custom" else 1)
    no_raw_value(checked.stdout + checked.stderr + rendered.stdout + rendered.stderr)
    pool = (yaml.safe_load(rendered.stdout)["jobSpec"]["workerPoolSpecs"][0] if kind == "custom"
            else yaml.safe_load(rendered.stdout)["trialJobSpec"]["workerPoolSpecs"][0])
    if kind == "custom":
        assert pool["containerSpec"]["args"][1] == "--hf-token=<Hugging Face access token, not shown>"
    else:
        assert pool["containerSpec"]["args"][1] == "<Slack bot token, not shown>"
    shown = run("render", "--show-secrets", str(path))  # the exact body, asked for
    assert (HF if kind == "custom" else SLACK) in shown.stdout


def test_a_problem_that_echoes_a_value_shows_its_credential_masked(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({"trainingInput": {
        "scaleTier": "BASIC", "region": "us-central1", "runtimeVersion": "2.11", "pythonVersion": "3.7",
        "pythonModule": "trainer.task", "packageUris": [HF]}}))
    checked, rendered = run("validate", str(path)), run("render", str(path))
    assert checked.returncode == 1 and rendered.returncode == 1
    problem = (f"{path}: trainingInput.packageUris[0]: '<Hugging Face access token, not shown>' is not a Cloud "
               "Storage URI")
    assert problem in checked.stdout and problem in rendered.stderr
    no_raw_value(checked.stdout + checked.stderr + rendered.stdout + rendered.stderr)


# --- The provider and TrainingJob ------------------------------------------------------------------------------

def test_every_line_the_provider_says_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[tuple[str, str]] = []
    for level in ("info", "warn", "error", "debug"):
        monkeypatch.setattr(f"pulumi.log.{level}", lambda msg, *_, level=level, **__: said.append((level, msg)))
        getattr(provider_log, level)(f"training job x: last log line: token {HF}")
    provider_log.say_once(f"job x: {GITHUB}")
    assert said == [(level, "training job x: last log line: token <Hugging Face access token, not shown>")
                    for level in ("info", "warn", "error", "debug")] + \
        [("info", "job x: <GitHub personal access token, not shown>")]


def secret_at(value: Any) -> bool:
    return isinstance(value, pulumi.Output) and bool(_sync_await(value.is_secret()))


def test_training_job_makes_each_credential_a_secret_where_it_stands() -> None:
    job = {"jobSpec": {"workerPoolSpecs": [copy.deepcopy(POOL)]}, "region": "us-central1"}
    props: dict[str, Any] = {"job": job, "fallbacks": None}
    opts = _conceal_credentials(props, pulumi.ResourceOptions(additional_secret_outputs=["project"]))
    assert opts is not None and opts.additional_secret_outputs == ["project", "job"]
    container = props["job"]["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
    assert container["args"][0] == "--epochs=3" and secret_at(container["args"][1])
    assert secret_at(container["env"][0]["value"]) and container["env"][0]["name"] == "GH_TOKEN"
    assert _sync_await(container["args"][1].future()) == f"--hf-token={HF}"  # the provider is given the value
    assert job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"][1] == f"--hf-token={HF}"  # not changed


def test_a_job_without_a_credential_is_passed_on_as_it_is() -> None:
    job = {"jobSpec": {"workerPoolSpecs": [{"containerSpec": {"imageUri": IMAGE, "args": ["--epochs=3"]}}]}}
    props: dict[str, Any] = {"job": job, "fallbacks": None}
    assert _conceal_credentials(props, None) is None
    assert props["job"] == job


def test_the_providers_check_failure_that_echoes_a_value_shows_its_credential_masked() -> None:
    from gcp_training_jobs.resources.training_job import TrainingJobProvider

    news = provider_props({"trainingInput": {"scaleTier": "BASIC", "region": "us-central1", "runtimeVersion": "2.11",
                                             "pythonVersion": "3.7", "pythonModule": "trainer.task",
                                             "packageUris": [HF]}},
                          name="train", project="my-ml-test", backend="ai-platform", identity="organization/p/s/train")
    failures = TrainingJobProvider().check({}, news).failures
    assert [f.reason.split(" is not")[0] for f in failures] == [
        "TrainingJob train, job.trainingInput.packageUris[0]: '<Hugging Face access token, not shown>'"]
    no_raw_value(repr(failures))


@pytest.mark.parametrize("short", ["hf_abcdefghij1234567890", "ghp_abc123def456ghi789jk", "sk-proj-abc123def456ghi789"])
def test_a_short_token_is_found_where_a_word_begins_so_a_line_of_values_is_masked_as_each_value(short: str) -> None:
    """A test or truncated token, too short for the full pattern: found by its prefix at a value's start and after
    `=` alike, so masking a line of args (or a JSON document) hides what masking each value hides."""
    args = ["--epochs=3", f"--token={short}", short]
    walked = masked({"args": args})
    assert [f.path for f in walked.found] == ["args[1]", "args[2]"]
    assert masked_text(" ".join(args)) == " ".join(walked.value["args"])
    assert short not in masked_text(json.dumps(args)) and short[4:] not in masked_text(json.dumps(args))
    assert masked_text("task-hf_hub-v2 sk-learn-pipeline") == "task-hf_hub-v2 sk-learn-pipeline"
