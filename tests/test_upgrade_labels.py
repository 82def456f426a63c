"""Upgrading replaces no running job: the labels every job of the release's stacks is created with are pinned,
as the release (commit 59f59fa) computes them.

A live job is found again by its labels (ARCHITECTURE.md, "Job identity and adoption"): `pulumi-resource`
(whose job: a hash of organization/project/stack/resource name) and `pulumi-spec` (what it runs: a hash of
`job_model.inputs.spec_of`, with its labels on Vertex AI). If a new release computed either differently for the same
stack, a create after a lost answer or a crashed `pulumi up` would no longer find the job the previous
release started, and would start a second one beside it; a changed user label would relabel (ml v1) or
replace (Vertex AI) every running job. So these values must never change, whatever is refactored.

The jobs are the release's: its stack files, kept verbatim in tests/fixtures/release_stacks/ (each with a first
line naming the commit; `test_the_release_copies_are_verbatim` holds them against git). Changing a stack file is
a user's deliberate change of its jobs, not an upgrade (`dev` and `local` moved to Vertex AI after the release,
their AI Platform jobs to `dev-ai-platform` and `local-ai-platform`); what must hold is that new code labels the
release's jobs as the release did. A repository stack whose jobs are still the release's (its config the same,
guardrails aside, which never reach a label) is held to the same values as it is today.

The values are computed through the path a stack takes: `python -m components plan --stack NAME --json`
(`--stacks-dir tests/fixtures/release_stacks`) runs the real program (`__main__.py`, settings, `build_stack`,
`TrainingJob`) under Pulumi's mocks and shows each TrainingJob's inputs as the engine would receive them; the
provider (`TrainingJobProvider`, at the import path pickled into every stack's state) then checks and creates each
job against the loopback emulator, and the labels are read off the job the emulator holds, as Google would hold it.

Under the plan's mocks the Pulumi organization is empty, so `identity` reads "/gcp-training-jobs/STACK/NAME"
(the engine's file backend says "organization/..."), and created buckets have no random suffix; both are the
same on every run, so the values are reproducible. They were taken by running this same path on a
`git archive` of commit 59f59fa (the release), in a temporary folder, with the project's venv.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pulumi.dynamic import Config, ConfigureRequest

from gcp_training_jobs.emulator import Emulator
from gcp_training_jobs.jobspec.io.documents import read_yaml
from gcp_training_jobs.resources.training_job import TrainingJobProvider

ROOT = Path(__file__).resolve().parents[1]
STACKS = ("dev", "staging", "prod", "local")
#: The release these labels are pinned from, and where its stack files are kept (verbatim after their first line).
RELEASE = "59f59fa0b0f8b52f6532d8a522392cc858976d37"
RELEASE_STACKS = ROOT / "tests" / "fixtures" / "release_stacks"
#: Config that never reaches a job's labels (the guardrails only judge it).
UNLABELLED_KEYS = frozenset({"gcp-training-jobs:guardrails"})
JOB_TYPE = "training:TrainingJob"
#: The label holding the job's id (name + 8 random hex digits, drawn at create: pinned by its form).
JOB_LABEL = "pulumi-job"
#: The label that finds a stack's jobs (`status`, `logs`, `spend`), added after the release: an extra label, never
#: part of what the release pinned (not in `pulumi-spec`, not compared by diff), so the release's jobs are neither
#: replaced nor relabelled by it. Its values (a hash of the Pulumi project and stack) are pinned here as well, as
#: this tree first computed them: status finds the jobs made from now on only by the same values.
STACK_LABEL = "pulumi-stack"
STACK_LABELS = {"dev": "6b4b0796c6a882a2c801", "staging": "10326673fb8a5b80cdb0", "prod": "1c9f61fe50564b9e45bb",
                "local": "37c304ef1a4edadb1186"}


@dataclass(frozen=True)
class Pinned:
    identity: str
    """The `identity` input the program gives the resource (organization/project/stack/name)."""
    job_id_stem: str
    """The job id before its random suffix (the `pulumi-job` label is STEM_ + 8 hex digits)."""
    labels: dict[str, str]
    """Every other label the job is created with."""


# TAKEN FROM COMMIT 59f59fa (the release), never to be edited to make a refactor pass: these are the labels
# the jobs that release started carry, and an upgrade finds (adopts) them only by the same values. They are
# computed from the release's own stack files (RELEASE_STACKS), so a later change of a repository stack file
# (a deliberate change of its jobs) leaves them as they are. The one legitimate reason to change a value is a
# change of the trainer folder the release's dev builds its package from (its content hash is in dev's package
# URI): then that job is meant to be replaced, and its new values are pinned with the reason said in the commit.
PINNED: dict[str, Pinned] = {
    "dev/resnet": Pinned("/gcp-training-jobs/dev/resnet", "resnet", {
        "env": "dev",
        "team": "ml-platform",
        "pulumi-resource": "d896b7b75555f098c36d",
        "pulumi-spec": "b94aecf27bb7f0427542",
    }),
    "staging/l4-trial": Pinned("/gcp-training-jobs/staging/l4-trial", "l4_trial", {
        "env": "staging",
        "purpose": "trial",
        "team": "ml-platform",
        "pulumi-resource": "eb0be5ee3bedf98dc948",
        "pulumi-spec": "bd31cc9c33c9e38cb5bd",
    }),
    "prod/distributed": Pinned("/gcp-training-jobs/prod/distributed", "distributed", {
        "env": "prod",
        "team": "ml-platform",
        "pulumi-resource": "4ac7d07fc8f800fbd242",
        "pulumi-spec": "65f50afb5694321ffafc",
    }),
    "local/gpu": Pinned("/gcp-training-jobs/local/gpu", "gpu", {
        "env": "local",
        "team": "vision",
        "pulumi-resource": "6764d9cf33843b9e7c34",
        "pulumi-spec": "dda335fe435d73a027ee",
    }),
    "local/tpu": Pinned("/gcp-training-jobs/local/tpu", "tpu", {
        "env": "local",
        "pulumi-resource": "8d09c44afa7d62edc39e",
        "pulumi-spec": "65c02c32274b03dc5b13",
    }),
}


def _plan(stack: str, stacks_dir: Path = RELEASE_STACKS) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "components", "plan", "--stack", stack, "--stacks-dir",
                           str(stacks_dir), "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"plan --stack {stack} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    plan: dict[str, Any] = json.loads(done.stdout)
    return plan


def _jobs_of(plans: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """"STACK/NAME" -> the inputs of every TrainingJob the plans register."""
    return {f"{stack}/{resource['name']}": resource["inputs"]
            for stack, plan in plans.items() for resource in plan["resources"]
            if resource["type"].endswith(JOB_TYPE)}


def _labelled_config(folder: Path, stack: str) -> dict[str, Any]:
    """A stack file's config but the keys that never reach a label."""
    config = (read_yaml(folder / f"Pulumi.{stack}.yaml") or {}).get("config") or {}
    return {key: value for key, value in config.items() if key not in UNLABELLED_KEYS}


#: The repository's stacks whose jobs are still the release's: planned as they are today too.
UNCHANGED = tuple(stack for stack in STACKS if (ROOT / "stacks" / f"Pulumi.{stack}.yaml").is_file()
                  and _labelled_config(ROOT / "stacks", stack) == _labelled_config(RELEASE_STACKS, stack))


@pytest.fixture(scope="module")
def registered() -> dict[str, dict[str, Any]]:
    """Every TrainingJob the release's stacks register, "STACK/NAME" -> its inputs (the plans run at once)."""
    with ThreadPoolExecutor(len(STACKS)) as pool:
        return _jobs_of(dict(zip(STACKS, pool.map(_plan, STACKS), strict=True)))


@pytest.fixture(scope="module")
def registered_today() -> dict[str, dict[str, Any]]:
    """Every TrainingJob the repository's stacks that are unchanged since the release register today."""
    with ThreadPoolExecutor(max(len(UNCHANGED), 1)) as pool:
        plans = pool.map(lambda stack: _plan(stack, ROOT / "stacks"), UNCHANGED)
        return _jobs_of(dict(zip(UNCHANGED, plans, strict=True)))


def test_the_release_copies_are_verbatim() -> None:
    """Each copy is the release's stack file, after its first line (a comment naming the commit)."""
    for stack in STACKS:
        copy = (RELEASE_STACKS / f"Pulumi.{stack}.yaml").read_text()
        header, _, body = copy.partition("\n")
        assert header.startswith("# RELEASE COPY") and RELEASE in header, header
        try:
            shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{RELEASE}:stacks/Pulumi.{stack}.yaml"],
                                   capture_output=True, text=True, timeout=60)
        except FileNotFoundError:
            shown = None
        if shown is None or shown.returncode != 0:
            why = f"the release commit {RELEASE} cannot be read from {ROOT}: clone main in full, as CI does"
            if os.environ.get("CI"):
                pytest.fail(why, pytrace=False)
            pytest.skip(why)
        assert body == shown.stdout, f"tests/fixtures/release_stacks/Pulumi.{stack}.yaml is not the release's file"


def test_the_stacks_unchanged_since_the_release_are_known() -> None:
    """staging and prod still run the release's jobs (only their guardrails changed); dev and local moved to
    Vertex AI, a deliberate change of their jobs."""
    assert UNCHANGED == ("staging", "prod")


def created_labels(emulator: Emulator, inputs: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The job id and the labels of the job the provider creates for these inputs, as the emulator holds it:
    configure (the stack's apiEndpoint), check, then create with the checked inputs, as the engine calls them."""
    provider = TrainingJobProvider()
    provider.configure(ConfigureRequest(Config({"gcp-training-jobs:apiEndpoint": emulator.url}, "gcp-training-jobs")))
    checked = provider.check({}, inputs)
    created = provider.create(checked.inputs)
    job_id = str((created.outs or {})["jobId"])
    (job,) = [entry["job"] for entry in emulator.state.jobs()
              if (entry["job"].get("labels") or {}).get(JOB_LABEL) == job_id.lower()]
    labels = dict(job["labels"])
    stack = str(inputs["identity"]).split("/")[2]
    assert labels.pop(STACK_LABEL) == STACK_LABELS[stack], f"the {STACK_LABEL} label of a job of stack {stack}"
    return job_id, labels


def test_the_release_stacks_hold_exactly_the_pinned_jobs(registered: dict[str, dict[str, Any]]) -> None:
    assert sorted(registered) == sorted(PINNED), \
        "the release's stacks (tests/fixtures/release_stacks) register other jobs than those pinned"


@pytest.mark.parametrize("key", [key for key in sorted(PINNED) if key.split("/")[0] in UNCHANGED])
def test_a_repository_stack_unchanged_since_the_release_creates_its_jobs_with_the_release_labels(
        key: str, registered_today: dict[str, dict[str, Any]], emulator: Emulator) -> None:
    inputs = registered_today[key]
    assert inputs["identity"] == PINNED[key].identity
    _, labels = created_labels(emulator, inputs)
    labels.pop(JOB_LABEL)
    assert labels == PINNED[key].labels


@pytest.mark.parametrize("key", sorted(PINNED))
def test_each_job_is_created_with_exactly_the_release_labels(
        key: str, registered: dict[str, dict[str, Any]], emulator: Emulator) -> None:
    pinned = PINNED[key]
    inputs = registered[key]
    assert inputs["identity"] == pinned.identity
    job_id, labels = created_labels(emulator, inputs)
    assert re.fullmatch(rf"{re.escape(pinned.job_id_stem)}_[0-9a-f]{{8}}", labels.pop(JOB_LABEL)), labels
    assert re.fullmatch(rf"{re.escape(pinned.job_id_stem)}_[0-9a-f]{{8}}", job_id)
    assert labels == pinned.labels, (
        f"{key}: an upgrade would no longer find the jobs the release started (or would relabel / replace "
        f"them). The job input the provider got:\n{json.dumps(inputs['job'], indent=1, sort_keys=True)}")



def _noisy(value: Any) -> Any:
    """The same job as Pulumi may hand it over: integers as floats (8 -> 8.0), int64 fields as numbers instead of
    decimal strings ("3" -> 3.0), every mapping's keys in reverse order."""
    if isinstance(value, dict):
        return {k: _noisy(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_noisy(v) for v in value]
    if isinstance(value, bool):
        return value
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        return float(value)
    return value


@pytest.mark.parametrize("key", sorted(PINNED))
def test_the_labels_hold_through_the_noise_pulumi_adds_to_a_job(
        key: str, registered: dict[str, dict[str, Any]], emulator: Emulator) -> None:
    """The spec label is of the job's canonical form (inputs.spec_of), not of how its numbers and keys arrive:
    the same pinned values for the job with its numbers as floats and its keys reordered."""
    inputs = {**registered[key], "job": _noisy(registered[key]["job"])}
    assert json.dumps(inputs["job"]) != json.dumps(registered[key]["job"])
    _, labels = created_labels(emulator, inputs)
    labels.pop(JOB_LABEL)
    assert labels == PINNED[key].labels
