"""The review of a stack whose jobs hold credentials (a Hugging Face token in an arg, a GitHub token in a container
env value, an npm token in a tuning job's trial spec, a Slack token in an ml v1 tuning job's args): `plan`, `plan
--json` and `diff` (text, the pull request comment, JSON) never show a value, show each masked where the job's args
are shown, and name each by field and kind, once; the plan lists every warning of the one pass (the dated one of a
prebuilt image newer than the catalog too). Run in a scratch git repository holding the project's program and one
stack, offline."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from gcp_training_jobs.cli.diff.command import cmd_diff
from gcp_training_jobs.cli.main import parser
from gcp_training_jobs.cli.plan.command import run_plan
from tests.helpers import CREDENTIAL_SAMPLES, commit_all, scratch_review

HF, GITHUB, SLACK, NPM = (CREDENTIAL_SAMPLES[r] for r in ("huggingface-access-token", "github-pat",
                                                          "slack-bot-token", "npm-access-token"))
RAW = (HF, GITHUB, SLACK, NPM, HF[3:], GITHUB[4:], SLACK[5:], NPM[4:])
IMAGE = "us-central1-docker.pkg.dev/my-ml-creds/trainers/example:0.1"
NEWER_IMAGE = "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-99.py310:latest"
KEY = "gcp-training-jobs:jobs"
#: Each credential's field at the stack's key, and its kind.
FIELDS = [(f"{KEY}.hub.jobSpec.workerPoolSpecs[0].containerSpec.args[1]", "a Hugging Face access token"),
          (f"{KEY}.hub.jobSpec.workerPoolSpecs[0].containerSpec.env[0].value", "a GitHub personal access token"),
          (f"{KEY}.sweep.tuningJob.trialJobSpec.workerPoolSpecs[0].containerSpec.env[0].value",
           "an npm access token"),
          (f"{KEY}.tune.trainingInput.args[1]", "a Slack bot token")]
DATED = f"{KEY}.hub.jobSpec.workerPoolSpecs[1].containerSpec.imageUri: pytorch-gpu.2-99.py310 (pytorch 2.99, gpu)"


def stack(credentials: bool, allow: bool = True) -> str:
    """The stack; `allow`: it keeps its credentials in plain text by its own setting (the review of such a stack is
    what these tests read; without the setting it is refused, test_a_stack_without_the_setting_is_refused...)."""
    hub_args, env = (["--epochs=3", f"--hf-token={HF}"], [{"name": "GH_TOKEN", "value": GITHUB}]) if credentials \
        else (["--epochs=3"], [{"name": "GH_TOKEN_SECRET", "value": "projects/p/secrets/gh/versions/latest"}])
    pools = [{"machineSpec": {"machineType": "n2-standard-8"}, "replicaCount": 1,
              "containerSpec": {"imageUri": IMAGE, "args": hub_args, "env": env}},
             {"machineSpec": {"machineType": "n2-standard-8"}, "replicaCount": 1,
              "containerSpec": {"imageUri": NEWER_IMAGE}}]
    tune = {"trainingInput": {
        "scaleTier": "CUSTOM", "masterType": "n1-standard-8", "region": "us-central1",
        "masterConfig": {"imageUri": IMAGE}, "args": ["--notify", SLACK if credentials else "none"],
        "hyperparameters": {"goal": "MAXIMIZE", "hyperparameterMetricTag": "accuracy", "maxTrials": 2,
                            "maxParallelTrials": 1,
                            "params": [{"parameterName": "lr", "type": "DOUBLE", "minValue": 0.001,
                                        "maxValue": 0.1}]}}}
    sweep = {"tuningJob": {  # a Vertex AI tuning config: its trial's spec
        "studySpec": {"metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
                      "parameters": [{"parameterId": "lr", "doubleValueSpec": {"minValue": 0.001, "maxValue": 0.1}}]},
        "maxTrialCount": 2, "parallelTrialCount": 1,
        "trialJobSpec": {"workerPoolSpecs": [{
            "machineSpec": {"machineType": "n2-standard-8"}, "replicaCount": 1,
            "containerSpec": {"imageUri": IMAGE,
                              "env": [{"name": "NPM_TOKEN", "value": NPM if credentials else "-"}]}}]}}}
    return yaml.safe_dump({"config": {"gcp:project": "my-ml-creds", "gcp:region": "us-central1",
                                      **({"gcp-training-jobs:plaintextCredentials": "allow"} if allow else {}),
                                      KEY: {"hub": {"jobSpec": {"workerPoolSpecs": pools}}, "sweep": sweep,
                                            "tune": tune}}})


@dataclass
class Scratch:
    repo: Path
    base: str


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scratch]:
    with scratch_review(tmp_path_factory, "credentials") as repo:
        (repo / "stacks/Pulumi.creds.yaml").write_text(stack(credentials=False))
        base = commit_all(repo, "base")
        (repo / "stacks/Pulumi.creds.yaml").write_text(stack(credentials=True))  # the head: the working tree
        yield Scratch(repo, base)


def command(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`python -m components ARGV` as the command line parses it, in this process (what `plan` runs: main would
    also close the event loop Pulumi's runtime keeps, which the next plan in this process needs)."""
    args = parser().parse_args(list(argv))
    code = run_plan(args.stack, None, as_json=args.json) if argv[0] == "plan" else cmd_diff(args)
    out, err = capsys.readouterr()
    assert not [raw for raw in RAW if raw in out + err], out + err  # never a value, in any form
    return code, out, err


def test_plan_shows_the_args_masked_and_every_warning_once_in_its_section(scratch: Scratch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = command(capsys, "plan", "--stack", "creds")
    assert code == 0, out + err
    assert "      pool 0 args: --epochs=3 --hf-token=<Hugging Face access token, not shown>\n" in out
    assert "      args: --notify <Slack bot token, not shown>\n" in out
    section = out.split("\nWarnings (they stop nothing):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    for field, kind in FIELDS:
        assert [line for line in section if line.startswith(f"    {field}: holds what looks like {kind}")], section
    assert [line for line in section if line.startswith(f"    {DATED} is newer than every")], section
    assert len(section) == len(set(section)) == 5
    assert "holds what looks like" not in err  # once: in the plan, not again on stderr


def test_plan_json_lists_each_jobs_warnings_and_masks_its_inputs(scratch: Scratch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = command(capsys, "plan", "--stack", "creds", "--json")
    assert code == 0, err
    jobs = {doc["name"]: doc for doc in json.loads(out)["resources"] if doc["type"].endswith("TrainingJob")}
    hub, tune = jobs["hub"], jobs["tune"]
    assert [(w["path"], w.get("credential")) for w in hub["warnings"]] == [
        (FIELDS[0][0], FIELDS[0][1]), (FIELDS[1][0], FIELDS[1][1]), (DATED.split(": ")[0], None)]
    assert [(w["path"], w["credential"]) for w in jobs["sweep"]["warnings"]] == [FIELDS[2]]
    assert [(w["path"], w["credential"]) for w in tune["warnings"]] == [FIELDS[3]]
    container = hub["inputs"]["job"]["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
    assert container["env"] == [{"name": "GH_TOKEN", "value": "<GitHub personal access token, not shown>"}]
    assert hub["details"]["pool 0 args"] == "--epochs=3 --hf-token=<Hugging Face access token, not shown>"
    assert hub["details"]["secret"] == "job (encrypted in state)"  # TrainingJob made each credential a secret


@pytest.mark.parametrize("form", ["text", "markdown", "json"])
def test_diff_shows_no_value_and_names_each_credential_by_field_and_kind(
        scratch: Scratch, capsys: pytest.CaptureFixture[str], form: str) -> None:
    flags = {"text": [], "markdown": ["--markdown"], "json": ["--json"]}[form]
    code, out, err = command(capsys, "diff", "--base", scratch.base, *flags)
    assert code == 0, out + err
    if form == "json":
        warnings = json.loads(out)["stacks"]["creds"]["warnings"]
        assert [(w["path"], w["credential"]) for name in ("hub", "sweep", "tune") for w in warnings[name]
                if "credential" in w] == FIELDS
        return
    if form == "markdown":
        assert "**Credentials in creds's jobs** (sent to Google in plain text" in out
        lines = [f"- `{field}`: {kind}" for field, kind in FIELDS]
    else:
        lines = [f"    credential (not shown): {field}: {kind}" for field, kind in FIELDS]
    for line in lines:
        assert out.count(line) == 1, (line, out)


def test_a_stack_without_the_setting_is_refused_by_plan_and_diff_naming_each_field_and_its_command(
        scratch: Scratch, capsys: pytest.CaptureFixture[str]) -> None:
    """The same credentials in plain text, with no `plaintextCredentials: allow`: `plan` and `diff` refuse the stack
    (exit 1), each field named with the command that encrypts it in place, never the value."""
    path = scratch.repo / "stacks/Pulumi.creds.yaml"
    path.write_text(stack(credentials=True, allow=False))
    try:
        for argv, refused in ((("plan", "--stack", "creds"), 1), (("diff", "--base", scratch.base), 2)):
            code, out, err = command(capsys, *argv)
            assert code == refused, (argv, out, err)  # diff: a side that cannot be planned
            for field, kind in FIELDS:
                assert (f"{field}: holds what looks like {kind}" in out + err
                        and f"`pulumi config set --secret --path '{field}' -- VALUE`" in out + err), (argv, field)
    finally:
        path.write_text(stack(credentials=True))

