"""Credentials in a stack's jobs under the real Pulumi engine. Written plainly in the stack file, they are refused by
`pulumi preview` and `pulumi up` (each field named with its `pulumi config set --secret --path` command): nothing is
deployed and nothing stored, no output and no `pulumi stack export` holds them. A stack that allows them
(`plaintextCredentials: allow`): a Hugging Face token in a CustomJobSpec's args, a GitHub token in its container env,
a Slack token in a tuning job's args (the trial's spec) never appear in what `pulumi preview --diff`, `pulumi up` and
`pulumi stack export` print, while the job reaches the API with them and each is warned of by its field and its kind.
TrainingJob makes each such text a Pulumi secret where it stands (`[secret]`), and a later preview has nothing to
change. Encrypted, a value is secret where it stands, and the preview of a change shows the fields that change.

The tokens are made up here from parts, in the shapes of gitleaks' rules (catalog/credentials.py): none is real.
Needs the `pulumi` CLI, as tests/test_e2e.py does.
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import pytest

from tests.e2e_support import Emulator, Project, offline_config, process_emulator, project_fixture, require_pulumi  # noqa: F401 (fixture)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()

HF = "hf_" + "Ab" * 17
GITHUB = "ghp_" + "aB3" * 12
SLACK = "xoxb-" + "1234567890" + "-" + "1234567890123" + "-" + "abcdefghijklmnopqrstuvwx"
TOKENS = {"huggingface": HF, "github": GITHUB, "slack": SLACK}
IMAGE = "us-central1-docker.pkg.dev/creds-project/trainers/example:0.1"

HUB: dict[str, Any] = {"jobSpec": {"workerPoolSpecs": [{
    "machineSpec": {"machineType": "n2-standard-8"}, "replicaCount": 1,
    "containerSpec": {"imageUri": IMAGE, "args": ["--epochs=3", f"--hf-token={HF}"],
                      "env": [{"name": "GH_TOKEN", "value": GITHUB}, {"name": "MODE", "value": "train"}]}}]}}
TUNE: dict[str, Any] = {"trainingInput": {
    "scaleTier": "CUSTOM", "masterType": "n1-standard-8", "region": "us-central1",
    "masterConfig": {"imageUri": IMAGE}, "args": ["--notify", SLACK],
    "hyperparameters": {"goal": "MAXIMIZE", "hyperparameterMetricTag": "accuracy", "maxTrials": 2,
                        "maxParallelTrials": 1,
                        "params": [{"parameterName": "lr", "type": "DOUBLE", "minValue": 0.001, "maxValue": 0.1}]}}}
CONFIG = offline_config("creds", {"hub": HUB, "tune": TUNE}, labels={"env": "creds"}, tpuAccess={"grant": False},
                        plaintextCredentials="allow")
#: A W&B key in the env, named as a credential (40 hexadecimal digits, made up here).
WANDB = "3f9a2c1b7e4d5a6f8091" + "a2b3c4d5e6f708192a3b"
#: Where each credential is, as the provider's check names it (the `job` input's path), and its kind.
WARNED = [("hub", "jobSpec.workerPoolSpecs[0].containerSpec.args[1]", "a Hugging Face access token"),
          ("hub", "jobSpec.workerPoolSpecs[0].containerSpec.env[0].value", "a GitHub personal access token"),
          ("tune", "trainingInput.args[1]", "a Slack bot token")]


def leaked(text: str) -> list[str]:
    """The credentials (or their tails, a token cut at its prefix) found in `text`."""
    return [name for name, token in {**TOKENS, "wandb": WANDB}.items() if token in text or token[5:] in text]


def test_plain_credentials_in_a_stack_file_are_refused_by_preview_and_up_and_nothing_is_stored(
        tmp_path_factory: pytest.TempPathFactory, emulator: Emulator) -> None:
    """Plaintext tokens in a stack's args and env, no setting: `pulumi preview` and `pulumi up` fail naming each
    field and its `--secret` command; no job is created, no output and no `pulumi stack export` holds a token."""
    emulator.control("reset", {})
    hub = json.loads(json.dumps(HUB))
    hub["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["env"].append({"name": "WANDB_API_KEY", "value": WANDB})
    config = offline_config("plain", {"hub": hub, "tune": TUNE}, tpuAccess={"grant": False})
    project = Project.copy(tmp_path_factory.mktemp("e2e-credentials-plain"), PULUMI, emulator, stack="plain",
                           config=config)
    for command in (("preview", "--diff"), ("up", "--yes")):
        done = project.pulumi(*command, ok=False)
        output = done.stdout + done.stderr
        assert done.returncode != 0, output
        assert leaked(output) == [], output
        for name, path, _ in [*WARNED, ("hub", "jobSpec.workerPoolSpecs[0].containerSpec.env[2].value", "")]:
            assert f"pulumi config set --secret --path 'gcp-training-jobs:jobs.{name}.{path}' -- VALUE" in output, \
                (path, output)
    assert not emulator.jobs() and not emulator.calls("customJobs.create")
    assert leaked(project.state()) == [] and leaked(project.pulumi("stack", "export", "--show-secrets").stdout) == []
    assert {r["type"] for r in project.deployment().get("resources", [])} <= {"pulumi:pulumi:Stack"}


project = project_fixture("creds", CONFIG, reset=True)


def warned_each(output: str, times: int = 1) -> None:
    """Each credential warned of by its job, field and kind, `times` times (once per check the engine asks for)."""
    for name, path, kind in WARNED:
        line = f"job {name}: {path}: holds what looks like {kind}"
        assert output.count(line) == times, (line, output)


def test_preview_diff_shows_each_credential_as_a_secret_and_warns_by_field(project: Project) -> None:
    done = project.pulumi("preview", "--diff")
    output = done.stdout + done.stderr
    assert leaked(output) == [], output
    # the engine hides the whole list a secret stands in (its annotateSecrets): a pool list, an args list
    assert re.search(r"workerPoolSpecs *: \[secret\]", output) and re.search(r"args *: \[secret\]", output), output
    assert 'outputUriPrefix: "gs://creds-job-dir/jobs/hub"' in output  # the rest of the job stays readable
    warned_each(output)


def plain_copies(project: Project) -> list[str]:
    """Where the state holds a credential in plain text: `TYPE::NAME` of each resource whose entry holds one."""
    return [resource["urn"].split("::", 2)[2] for resource in project.deployment().get("resources", [])
            if leaked(json.dumps(resource))]


def test_up_sends_the_job_and_neither_its_output_nor_its_resources_show_a_credential(project: Project,
                                                                                   emulator: Emulator) -> None:
    done = project.pulumi("up", "--yes", "--diff")
    output = done.stdout + done.stderr
    assert leaked(output) == [], output
    warned_each(output, times=2)  # `up` checks each job in its preview, then again in its update
    sent = json.dumps(emulator.jobs())
    assert leaked(sent) == ["huggingface", "github", "slack"]  # a warning, not a refusal: the jobs run with them
    for resource in project.resources():  # the outputs that echo the job are secret too
        assert json.dumps(resource["outputs"]["job"]).startswith('{"4dabf18193072939515e22adb298388d"')
    # Written in plain text in the stack file, a value is in the engine's record of the stack's config (the inputs
    # of the dynamic providers' default provider: the engine gives them the whole config), and nowhere else.
    assert plain_copies(project) == ["pulumi:providers:pulumi-python::default"]
    assert leaked(project.pulumi("stack", "export", "--show-secrets").stdout) == ["huggingface", "github", "slack"]


def test_a_later_preview_changes_nothing_and_still_shows_no_credential(project: Project) -> None:
    done = project.pulumi("preview", "--diff", "--expect-no-changes")
    output = done.stdout + done.stderr
    assert leaked(output) == [], output
    warned_each(output)


def test_encrypted_as_the_warning_says_no_credential_is_left_in_the_state_and_no_job_changes(
        project: Project, emulator: Emulator) -> None:
    """`pulumi config set --secret --path KEY VALUE` at each key the warning names: the same values, now encrypted in
    the stack file and the state; the jobs are the same (nothing to change, nothing made again)."""
    for name, path, _ in WARNED:
        value = {"hub": {"args[1]": f"--hf-token={HF}", "env[0].value": GITHUB}, "tune": {"args[1]": SLACK}}[name]
        key = next(v for k, v in value.items() if path.endswith(k))
        command = [*project.command("config", "set", "--secret", "--path"), f"gcp-training-jobs:jobs.{name}.{path}",
                   "--", key]  # the value may start with -- (a flag's)
        done = subprocess.run(command, cwd=project.path, env=project.env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    stack_file = (project.path / "stacks" / "Pulumi.creds.yaml").read_text()
    assert leaked(stack_file) == [] and "secure:" in stack_file
    created = len(emulator.calls("customJobs.create")) + len(emulator.calls("hyperparameterTuningJobs.create"))
    done = project.pulumi("up", "--yes", "--diff")
    assert leaked(done.stdout + done.stderr) == []
    assert len(emulator.calls("customJobs.create")) + len(emulator.calls("hyperparameterTuningJobs.create")) == created
    assert plain_copies(project) == [] and leaked(project.state()) == []


def test_encrypted_values_are_secret_where_they_stand_in_the_job_input_not_the_whole_input(project: Project) -> None:
    """After the values are encrypted in the stack file, the job's `job` input in the state is secret only where they
    stand (the engine keeps the list that holds one secret whole), never the whole input: its other fields read. (Its
    `job` output echoes the input and stays secret whole: a dynamic provider's outputs are secret only at the top.)"""
    (hub,) = [r for r in project.resources() if r["urn"].endswith("::hub")]
    job = hub["inputs"]["job"]
    secret_sig = "4dabf18193072939515e22adb298388d"
    assert secret_sig not in job and secret_sig not in job["jobSpec"], json.dumps(job)[:300]
    assert job["jobSpec"]["baseOutputDirectory"] == {"outputUriPrefix": "gs://creds-job-dir/jobs/hub"}
    assert secret_sig in job["jobSpec"]["workerPoolSpecs"] and leaked(json.dumps(hub)) == []


#: A team's program: a credential written in its code (a Hugging Face token in an arg) and one from its config,
#: encrypted (`pulumi config set --secret hfToken`), passed into the job's container env.
PROGRAM = '''"""A team's program with credentials in its job."""
import pulumi

from gcp_training_jobs import TrainingJob, TrainingJobArgs

IMAGE = "us-central1-docker.pkg.dev/team-project/trainers/example:0.1"
token = pulumi.Config().require_secret("hfToken")
job = TrainingJob("hub", TrainingJobArgs(
    project="team-project",
    job={"region": "us-central1", "jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "n2-standard-8"}, "replicaCount": 1,
        "containerSpec": {"imageUri": IMAGE, "args": ["--epochs=3", "--push=GITHUB"],
                          "env": [{"name": "HF_TOKEN", "value": token}]}}]}},
))
pulumi.export("jobId", job.jobId)
'''


def test_a_program_declared_job_shows_no_credential_and_leaves_none_in_the_state(
        tmp_path_factory: pytest.TempPathFactory, emulator: Emulator) -> None:
    emulator.control("reset", {})
    project = Project.consumer(tmp_path_factory.mktemp("e2e-credentials-program"), PULUMI, emulator,
                               "team-training", PROGRAM.replace("GITHUB", GITHUB))
    project.pulumi("config", "set", "--secret", "hfToken", HF)
    preview = project.pulumi("preview", "--diff")
    output = preview.stdout + preview.stderr
    assert leaked(output) == [], output
    assert output.count("job hub: jobSpec.workerPoolSpecs[0].containerSpec.args[1]: holds what looks like a GitHub "
                        "personal access token") == 1, output
    assert re.search(r"workerPoolSpecs *: \[secret\]", output), output
    done = project.pulumi("up", "--yes", "--skip-preview")
    assert leaked(done.stdout + done.stderr) == []
    assert leaked(json.dumps(emulator.jobs())) == ["huggingface", "github"]  # the job runs with both
    assert leaked(project.state()) == []
    assert leaked(project.pulumi("stack", "export", "--show-secrets").stdout) == ["huggingface", "github"]
    assert project.pulumi("preview", "--expect-no-changes").returncode == 0
