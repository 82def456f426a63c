"""Upgrading replaces no running job: the labels every job of the repository's stacks is created with are
pinned, as the current release (commit 59f59fa) computes them.

A live job is found again by its labels (ARCHITECTURE.md, "Job identity and adoption"): `pulumi-resource`
(whose job: a hash of organization/project/stack/resource name) and `pulumi-spec` (what it runs: a hash of
`job_wire.spec_of`, with its labels on Vertex AI). If a new release computed either differently for the same
stack, a create after a lost answer or a crashed `pulumi up` would no longer find the job the previous
release started, and would start a second one beside it; a changed user label would relabel (ml v1) or
replace (Vertex AI) every running job. So these values must never change, whatever is refactored.

The values are computed through the path a stack takes: `python -m components plan --stack NAME --json`
runs the real program (`__main__.py`, settings, `build_stack`, `TrainingJob`) under Pulumi's mocks and shows
each TrainingJob's inputs as the engine would receive them; the provider (`TrainingJobProvider`, at the import
path pickled into every stack's state) then checks and creates each job against the loopback emulator, and
the labels are read off the job the emulator holds, as Google would hold it.

Under the plan's mocks the Pulumi organization is empty, so `identity` reads "/gcp-training-jobs/STACK/NAME"
(the engine's file backend says "organization/..."), and created buckets have no random suffix; both are the
same on every run, so the values are reproducible. They were taken by running this same path on a
`git archive` of commit 59f59fa (the release), in a temporary folder, with the project's venv.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pulumi.dynamic import Config, ConfigureRequest

from components.emulator import Emulator
from components.resources.training_job import TrainingJobProvider

ROOT = Path(__file__).resolve().parents[1]
STACKS = ("dev", "staging", "prod", "local")
JOB_TYPE = "training:TrainingJob"
#: The label holding the job's id (name + 8 random hex digits, drawn at create: pinned by its form).
JOB_LABEL = "pulumi-job"


@dataclass(frozen=True)
class Pinned:
    identity: str
    """The `identity` input the program gives the resource (organization/project/stack/name)."""
    job_id_stem: str
    """The job id before its random suffix (the `pulumi-job` label is STEM_ + 8 hex digits)."""
    labels: dict[str, str]
    """Every other label the job is created with."""


# TAKEN FROM COMMIT 59f59fa (the current release), never to be edited to make a refactor pass: these are the
# labels the jobs that release started carry, and an upgrade finds (adopts) them only by the same values.
# The one legitimate reason to change a value is a change of the job itself in the same commit (its stack
# file, or the trainer folder dev builds its package from, whose content hash is in dev's package URI): then
# the job is meant to be replaced, and its new values are pinned with the reason said in the commit.
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


def _plan(stack: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "components", "plan", "--stack", stack, "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"plan --stack {stack} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    plan: dict[str, Any] = json.loads(done.stdout)
    return plan


@pytest.fixture(scope="module")
def registered() -> dict[str, dict[str, Any]]:
    """Every TrainingJob the repository's stacks register, "STACK/NAME" -> its inputs (the plans run at once)."""
    with ThreadPoolExecutor(len(STACKS)) as pool:
        plans = dict(zip(STACKS, pool.map(_plan, STACKS), strict=True))
    return {f"{stack}/{resource['name']}": resource["inputs"]
            for stack, plan in plans.items() for resource in plan["resources"]
            if resource["type"].endswith(JOB_TYPE)}


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
    return job_id, dict(job["labels"])


def test_the_repository_stacks_hold_exactly_the_pinned_jobs(registered: dict[str, dict[str, Any]]) -> None:
    assert sorted(registered) == sorted(PINNED), \
        "a job was added to, removed from or renamed in stacks/: pin its labels here (from the commit before " \
        "the change) or explain in the commit why the job is meant to change"


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
    """The spec label is of the job's canonical form (job_wire.spec_of), not of how its numbers and keys arrive:
    the same pinned values for the job with its numbers as floats and its keys reordered."""
    inputs = {**registered[key], "job": _noisy(registered[key]["job"])}
    assert json.dumps(inputs["job"]) != json.dumps(registered[key]["job"])
    _, labels = created_labels(emulator, inputs)
    labels.pop(JOB_LABEL)
    assert labels == PINNED[key].labels
