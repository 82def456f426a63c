"""The real engine across a move to the provider package: a stack deployed by an earlier release (its tree taken with
`git archive`, its stack program building the jobs from the stack file's `gcp-training-jobs:jobs`, as its users ran
it), then a program of this tree in its place that declares the same jobs as the package's resource
(`gcp-training-jobs:index:TrainingJob`) with an alias to the dynamic resource's type, same project, stack and state.

The releases' jobs are children of the stack itself (no component between: the URNs of their `pulumi stack export`
are `urn:pulumi:STACK::gcp-training-jobs::pulumi-python:dynamic/training:TrainingJob::NAME`), so an alias naming the
old type alone gives the old URN. The engine must take each job as the same resource: an update in place whose calls
to the API are reads only (no job made, replaced or cancelled), the same id and jobId, the same identity (the package
computes it from the URN: the job's identity labels stay), the state entry the package's and no pickle in it; the
next `pulumi preview --expect-no-changes` passes, and a destroy cancels exactly the stack's jobs. A stack file that
still lists its jobs (`gcp-training-jobs:jobs`) does not configure the package (resources/package/provider.NOT_CONFIG).

Needs what tests/test_e2e_upgrade.py needs (the `pulumi` CLI, the release commits in this clone's history) and the
package's executable plugin (provider/bin), found on PATH.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_support import (  # noqa: F401 (process_emulator: the emulator fixture)
    CANCELLED,
    RELEASES,
    ROOT,
    RUNNING,
    TO_RUNNING_SECONDS,
    Emulator,
    Project,
    process_emulator,
    release_tree,
    require_pulumi,
    stack_config,
)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()

#: The package's executable plugin (pulumi-resource-gcp-training-jobs), which the engine runs from PATH: no language
#: host is needed, unlike the plugin folder tests/test_e2e_provider_package.py adds.
PLUGIN = ROOT / "provider" / "bin"

#: The releases a move to the package starts from: the first release, the last before TrainingJob's inputs were
#: declared once (job_model/declared.py; its state holds the stack's quota needs by region), and the last before the
#: package (its state holds the stack's quota plan by job, as `stackQuota`).
PACKAGE_RELEASES = {"59f59fa": RELEASES["59f59fa"], "98df59e": RELEASES["98df59e"],
                    "3d0cfa3": "3d0cfa36e1f67625f85bbebe3f28c370101f620d"}
OLD_TYPE = "pulumi-python:dynamic/training:TrainingJob"
NEW_TYPE = "gcp-training-jobs:index:TrainingJob"
STACK = "upgrade"
STACK_URN = f"urn:pulumi:{STACK}::gcp-training-jobs::pulumi:pulumi:Stack::gcp-training-jobs-{STACK}"
#: The releases' component of the stack's buckets (named, not made, in these stacks): the new program declares none.
BUCKETS_TYPE = "gcp-training:index:TrainingBuckets"
#: The job directory the releases' stack program gives a job of the named job-dir bucket (offline_config's).
JOB_DIR = "gs://upgrade-job-dir/jobs/{name}"
#: The steps the move may take: an update in place of each job (its provider changes), and the delete of the
#: release's bucket component, which the new program leaves out (a state entry only: it is no job and calls no API).
#: No create, replace, create-replacement or delete-replaced.
MOVE_OPS = {"same", "update", "delete"}
#: What the package's diff finds changed in a job the release made: the guardrails the release recorded (its
#: defaults spelled out; the stack's are now `{}`) and waitForCompletion's default (recorded false, now unset), both
#: changed in place, and the pickled provider the outputs hold (`__provider`, taken out by the update). Not the job:
#: the same spec, its int64 fields as text (the release's) or as numbers (the program's).
IN_PLACE = {"guardrails", "waitForCompletion", "__provider"}

#: A program of this tree: the stack's jobs, each as the package's resource aliased to the dynamic resource's type.
NEW_PROGRAM = '''"""The stack's jobs as the provider package's resource, each aliased to the type a release gave it."""
import pulumi

JOBS = JOBS_DATA
jobs = {name: pulumi.CustomResource(
    "gcp-training-jobs:index:TrainingJob", name,
    {"project": "upgrade-project", "backend": "vertex", **job, "jobId": None, "state": None, "consoleUrl": None},
    pulumi.ResourceOptions(aliases=[pulumi.Alias(type_="pulumi-python:dynamic/training:TrainingJob")]))
    for name, job in JOBS.items()}
pulumi.export("jobs", {name: {"jobId": job.jobId, "state": job.state, "consoleUrl": job.consoleUrl}
                       for name, job in jobs.items()})
'''


def stack_jobs() -> dict[str, dict[str, Any]]:
    """The stack file's jobs: a CustomJobSpec job (on Spot) and a trainingInput job, which every release translates to
    a CustomJob on Vertex AI (e2e_support.stack_config's, named for what they are)."""
    jobs = stack_config("vertex")["gcp-training-jobs:jobs"]
    return {"custom-job": jobs["kept"], "training-input": jobs["removed"]}


def declared(name: str, job: dict[str, Any]) -> dict[str, Any]:
    """The job as a program declares it to the package: its parts as the stack program handed them to TrainingJob
    (the job dir filled in where the stack file writes `${jobDir}`, and as baseOutputDirectory or jobDir; the stack's
    labels beside the job's; a jobSpec's region, the stack's)."""
    job_dir = JOB_DIR.format(name=name)
    made: dict[str, Any] = json.loads(json.dumps(job).replace("${jobDir}", job_dir))
    labels = {"env": "upgrade", **made.pop("labels", {})}
    if "jobSpec" in made:
        made["jobSpec"]["baseOutputDirectory"] = {"outputUriPrefix": job_dir}
        return {**made, "region": "us-central1", "labels": labels}
    made["trainingInput"]["jobDir"] = job_dir
    return {**made, "labels": labels}


def urn(type_: str, name: str) -> str:
    """A resource's URN in the stack: a child of the stack itself, as the releases' jobs are."""
    return f"urn:pulumi:{STACK}::gcp-training-jobs::{type_}::{name}"


def as_text(value: Any) -> Any:
    """`value` with every number as text: a job's int64 fields compared whichever way they are written."""
    if isinstance(value, dict):
        return {key: as_text(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_text(item) for item in value]
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def new_program() -> str:
    """NEW_PROGRAM declaring the stack file's jobs (stack_jobs) as the release's stack program made them."""
    return NEW_PROGRAM.replace("JOBS_DATA", repr({name: declared(name, job) for name, job in stack_jobs().items()}))


@pytest.fixture(scope="module", params=sorted(PACKAGE_RELEASES))
def release(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release's tree, from this clone's history (`git archive`)."""
    return release_tree(PACKAGE_RELEASES[request.param], tmp_path_factory)


def writes_since(emulator: Emulator, since: int) -> list[str]:
    """The API methods called since request `since` that are not reads (.get, .list)."""
    return [str(r["method"]) for r in emulator.control("requests")[since:]
            if not str(r["method"]).endswith((".get", ".list"))]


def test_a_releases_stack_moves_to_the_package_by_an_alias_with_no_job_made_replaced_or_cancelled(
        tmp_path: Path, emulator: Emulator, release: Path) -> None:
    emulator.control("reset", {})
    config = stack_config("vertex")
    config["gcp-training-jobs:jobs"] = stack_jobs()
    project = Project.copy(tmp_path, PULUMI, emulator, stack=STACK, config=config, code=release)
    project.env["PATH"] = f"{PLUGIN}:{project.env['PATH']}"  # the package's plugin, found on PATH
    project.up()
    assert len(emulator.calls("customJobs.create")) == 2
    emulator.control("advance", {"seconds": TO_RUNNING_SECONDS})
    live = {job["labels"]["pulumi-job"]: job for job in emulator.jobs().values()}
    assert {job["state"] for job in live.values()} == {RUNNING["vertex"]}

    before = {r["urn"].rsplit("::", 1)[1]: r for r in project.resources()}
    assert set(before) == set(stack_jobs())
    for name, entry in before.items():  # what the alias must name: the old type, under the stack itself
        assert entry["urn"] == urn(OLD_TYPE, name)
        assert entry["type"] == OLD_TYPE and entry.get("parent") == STACK_URN and "__provider" in entry["outputs"]

    project.switch_code()  # this tree's Pulumi.yaml (the same project name) and library
    (project.path / "__main__.py").write_text(new_program())
    # the program declares the jobs now: the stack file's list of them goes (the package configures with it too,
    # leaving it out: test_the_package_configures_in_a_stack_whose_file_still_lists_its_jobs)
    project.edit_config(lambda config: config.pop("gcp-training-jobs:jobs"))
    since = len(emulator.control("requests"))

    preview = json.loads(project.pulumi("preview", "--json").stdout)
    steps = {step["urn"]: step for step in preview["steps"]}
    assert {step["op"] for step in steps.values()} <= MOVE_OPS, json.dumps(
        [preview["steps"], preview.get("diagnostics")], indent=1)
    for name in before:  # each job: the new URN, updated in place from the old one, its job unchanged
        step = steps[urn(NEW_TYPE, name)]
        assert step["op"] == "update" and set(step["diffReasons"]) <= IN_PLACE, step
    assert [u for u, step in steps.items() if step["op"] == "delete"] == [urn(BUCKETS_TYPE, STACK)]

    project.up()
    assert writes_since(emulator, since) == []  # nothing made, replaced or cancelled: reads only
    after = {r["urn"].rsplit("::", 1)[1]: r for r in project.resources()}
    assert set(after) == set(before)
    for name, entry in after.items():
        old = before[name]
        assert entry["urn"] == urn(NEW_TYPE, name) and entry["type"] == NEW_TYPE and entry["parent"] == STACK_URN
        assert entry["provider"].startswith(urn("pulumi:providers:gcp-training-jobs", "default"))
        assert entry["id"] == old["id"] and entry["outputs"]["jobId"] == old["outputs"]["jobId"]
        identity = f"organization/gcp-training-jobs/{STACK}/{name}"  # the package's, from the URN: the same
        assert entry["inputs"]["identity"] == old["inputs"]["identity"] == identity
        assert as_text(entry["inputs"]["job"]) == as_text(old["inputs"]["job"])  # the same job, declared anew
        for gone in ("__provider", "stackQuota"):  # no pickle; no stack quota plan (98df59e, 3d0cfa3 wrote one)
            assert gone not in entry["inputs"] and gone not in entry["outputs"], gone
    assert [r["type"] for r in project.deployment()["resources"] if r["type"] == "pulumi:providers:pulumi-python"] == []
    assert {job["labels"]["pulumi-job"]: job for job in emulator.jobs().values()} == live  # labels, state: as they were
    assert {name: job["jobId"] for name, job in project.outputs()["jobs"].items()} == \
        {name: entry["outputs"]["jobId"] for name, entry in before.items()}
    project.pulumi("preview", "--expect-no-changes")  # fails (exit 255) on any change
    assert writes_since(emulator, since) == []

    project.pulumi("destroy", "--yes", "--skip-preview")  # the package's delete, on the moved state: each job cancelled
    assert sorted(writes_since(emulator, since)) == ["customJobs.cancel", "customJobs.cancel"]
    assert {job["state"] for job in emulator.jobs().values()} == {CANCELLED["vertex"]}


def test_the_package_configures_in_a_stack_whose_file_still_lists_its_jobs(tmp_path: Path, emulator: Emulator) -> None:
    """A stack moved to the package by changing its program only: the stack file still lists the jobs the program
    now declares. The package leaves that key out of its configuration: the preview runs, and makes nothing."""
    config = stack_config("vertex")
    config["gcp-training-jobs:jobs"] = stack_jobs()
    project = Project.copy(tmp_path, PULUMI, emulator, stack=STACK, config=config)
    project.env["PATH"] = f"{PLUGIN}:{project.env['PATH']}"
    (project.path / "__main__.py").write_text(new_program())
    before = len(emulator.calls("customJobs.create"))
    preview = json.loads(project.pulumi("preview", "--json").stdout)
    assert preview["changeSummary"].get("create", 0) >= 2, preview["changeSummary"]  # the program's two jobs
    assert len(emulator.calls("customJobs.create")) == before
