"""The real engine across an upgrade: a stack deployed by a release (commits 59f59fa, 8b2f7fb, 4f85326 and 98df59e,
each taken with `git archive`), then this working tree's code in its place, same state and stack. Pulumi pickled the
release's provider into the state and runs that pickle (which imports the provider by its module path) for `read`
and `delete`; the new code's provider runs `check`, `diff` and `create`. The upgrade must replace no job, find
(adopt) the release's live job by its labels, cancel exactly the job a user removes, and create nothing.

Needs the `pulumi` CLI, as tests/test_e2e.py does, and the release commit in this clone's history: CI clones
main in full; under CI a missing commit fails the test, elsewhere it skips.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_support import (  # noqa: F401 (process_emulator: the emulator fixture)
    CANCEL,
    CANCELLED,
    CREATE,
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

#: The last release whose wheel installed the library as `components` (before it became gcp_training_jobs).
LAST_COMPONENTS_RELEASE = "4f85326"
#: The preview steps an upgrade may show: nothing (same) or an update in place (e.g. a new output); any other
#: op (create, delete, replace, create-replacement, delete-replaced, discard, import...) starts, stops or
#: replaces something.
UPGRADE_OPS = {"same", "update"}


@pytest.fixture(scope="module", params=sorted(RELEASES))
def release(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release's tree, from this clone's history (`git archive`)."""
    return release_tree(RELEASES[request.param], tmp_path_factory)


def by_resource(emulator: Emulator) -> dict[str, tuple[str, dict[str, Any]]]:
    """resource name -> (job id, job) of every job the emulator holds (one per resource in this test)."""
    jobs: dict[str, tuple[str, dict[str, Any]]] = {}
    for job_id, job in emulator.jobs().items():
        name = job_id.rsplit("_", 1)[0]
        assert name not in jobs, f"two jobs of resource {name}: {jobs[name][0]}, {job_id}"
        jobs[name] = (job_id, job)
    return jobs


def job_path(backend: str, job_id: str, job: dict[str, Any]) -> str:
    """The API path the job's requests carry (ml v1: its id; Vertex AI: its server-given name)."""
    return f"/v1/{job['name']}" if backend == "vertex" else f"/v1/projects/upgrade-project/jobs/{job_id}"


def pickled_providers(project: Project) -> dict[str, str]:
    """resource name -> the provider Pulumi pickled into its state entry (decrypted)."""
    exported = json.loads(project.pulumi("stack", "export", "--show-secrets").stdout)["deployment"]
    return {r["outputs"]["name"]: r["inputs"]["__provider"]["plaintext"]
            for r in exported.get("resources", []) if r["type"].endswith("TrainingJob")}


def recorded_providers(project: Project) -> dict[str, tuple[bytes, bytes]]:
    """resource name -> the pickles of its state entry's inputs and outputs (the engine reads and deletes a job with
    its outputs' provider)."""
    exported = json.loads(project.pulumi("stack", "export", "--show-secrets").stdout)["deployment"]

    def pickle(value: Any) -> bytes:
        return base64.b64decode(json.loads(value["plaintext"]) if isinstance(value, dict) else value)
    return {r["outputs"]["name"]: (pickle(r["inputs"]["__provider"]), pickle(r["outputs"]["__provider"]))
            for r in exported.get("resources", []) if r["type"].endswith("TrainingJob")}


@pytest.mark.parametrize("backend", ["vertex", "ai-platform"])
def test_an_upgrade_from_the_release_replaces_no_job_and_deletes_with_the_release_pickle(
        tmp_path: Path, emulator: Emulator, release: Path, backend: str) -> None:
    emulator.control("reset", {})
    project = Project.copy(tmp_path, PULUMI, emulator, stack="upgrade", config=stack_config(backend), code=release)
    project.up()
    assert len(emulator.calls(CREATE[backend])) == 2
    emulator.control("advance", {"seconds": TO_RUNNING_SECONDS})
    before = by_resource(emulator)
    assert {name: job["state"] for name, (_, job) in before.items()} == \
        {"kept": RUNNING[backend], "removed": RUNNING[backend]}
    (kept_id, _), (removed_id, removed_job) = before["kept"], before["removed"]
    urns = {r["outputs"]["name"]: r["urn"] for r in project.resources()}
    release_pickles = pickled_providers(project)

    project.switch_code()  # this working tree's code; the state still holds the release's pickled provider
    switched = len(emulator.control("requests"))

    # read: the release's pickle, importing the provider by its path in the new code
    project.pulumi("refresh", "--yes", "--skip-preview")
    assert {r["outputs"]["name"]: r["outputs"]["state"] for r in project.resources()} == \
        {"kept": "RUNNING", "removed": "RUNNING"}

    # check and diff: the new code against the release's inputs and outputs
    preview = json.loads(project.pulumi("preview", "--json").stdout)
    steps = {step["urn"]: step["op"] for step in preview["steps"]}  # "same" steps may be left out
    assert set(steps.values()) <= UPGRADE_OPS, json.dumps([preview["steps"], preview.get("diagnostics")], indent=1)
    assert set(preview["changeSummary"]) <= UPGRADE_OPS, preview["changeSummary"]
    assert pickled_providers(project) == release_pickles  # so the next up deletes with the release's pickle

    # The first up of the new code: `kept` lost its state entry (as after a crash), so its create must find the
    # release's live job by its identity labels and adopt it; `removed` left the stack, so the release's
    # pickle deletes it: its job, and only that one, is cancelled.
    project.pulumi("state", "delete", urns["kept"], "--yes")
    project.edit_config(lambda config: config["gcp-training-jobs:jobs"].pop("removed"))
    project.up()
    jobs = project.outputs()["jobs"]
    assert set(jobs) == {"kept"}
    assert jobs["kept"]["jobId"] == kept_id, "the new code did not find the release's live job by its labels"
    after = by_resource(emulator)
    assert after["removed"][1]["state"] == CANCELLED[backend]
    assert after["kept"][1]["state"] == RUNNING[backend]
    cancels = [r["path"] for r in emulator.control("requests")[switched:] if r["method"] == CANCEL[backend]]
    assert cancels == [f"{job_path(backend, removed_id, removed_job)}:cancel"]

    project.pulumi("destroy", "--yes", "--skip-preview")
    assert project.resources() == []
    assert by_resource(emulator)["kept"][1]["state"] == CANCELLED[backend]
    created = [r for r in emulator.control("requests")[switched:] if str(r["method"]).endswith(".create")]
    assert created == [], "a job was created after the upgrade: the new code labels a job otherwise than the release"


def test_a_finished_job_removed_after_the_upgrade_keeps_its_record(tmp_path: Path, emulator: Emulator,
                                                                  release: Path) -> None:
    """The release removed a finished Vertex AI job's record with its resource. After the upgrade its pickle runs
    that delete, and it imports the provider by its module path: this tree's `delete` runs, on the release's inputs
    (no `deleteRecordOnDelete`), and the record stays; the running job is cancelled as before."""
    emulator.control("reset", {})
    project = Project.copy(tmp_path, PULUMI, emulator, stack="upgrade", config=stack_config("vertex"), code=release)
    project.up()
    emulator.control("advance", {"seconds": TO_RUNNING_SECONDS})
    (removed_id, removed_job), (kept_id, _) = by_resource(emulator)["removed"], by_resource(emulator)["kept"]
    emulator.control("fail", {"job": removed_job["name"], "exitStatus": 1})  # finished: the release would delete it

    project.switch_code()
    switched = len(emulator.control("requests"))
    project.edit_config(lambda config: config["gcp-training-jobs:jobs"].pop("removed"))
    project.up()  # `removed` is deleted by the pickle in its state entry: the release's
    project.pulumi("destroy", "--yes", "--skip-preview")
    after = by_resource(emulator)
    assert after["removed"][1]["state"] == "JOB_STATE_FAILED" and after["removed"][0] == removed_id
    assert after["kept"][1]["state"] == CANCELLED["vertex"] and after["kept"][0] == kept_id
    writes = [str(r["method"]) for r in emulator.control("requests")[switched:]
              if not str(r["method"]).endswith((".get", ".list"))]
    assert writes == ["customJobs.cancel"], writes


@pytest.fixture(scope="module")
def components_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The last release that installed the library as `components`."""
    return release_tree(RELEASES[LAST_COMPONENTS_RELEASE], tmp_path_factory)


def installed_library_only(base: Path) -> Path:
    """This tree as a team has it after `pip install` of the new wheel: the program and `gcp_training_jobs`, and no
    `components` (the wheel installs none; the team's own `components/` package, unrelated, is there instead)."""
    tree = base / "wheel-tree"
    tree.mkdir()
    for name in ("Pulumi.yaml", "__main__.py", "gcp_training_jobs", "trainers", "requirements.txt"):
        (tree / name).symlink_to(ROOT / name)
    return tree


def test_a_team_that_installed_an_earlier_wheel_upgrades_with_one_up(tmp_path: Path, emulator: Emulator,
                                                                    components_release: Path) -> None:
    """A state deployed with a wheel that installed `components` names the provider by that path. After the team
    installs this wheel (no `components` in site-packages; here a `components/` package of the team's own), a
    preview and an `up` replace nothing and run no old pickle (check and diff run the new code's provider); that
    `up` records the provider's new path in every job's state entry, so the deletes and the destroy after it run
    this tree's code, and cancel exactly the jobs they name."""
    emulator.control("reset", {})
    project = Project.copy(tmp_path, PULUMI, emulator, stack="upgrade", config=stack_config("vertex"),
                           code=components_release)
    project.up()
    emulator.control("advance", {"seconds": TO_RUNNING_SECONDS})
    before = by_resource(emulator)
    assert all(b"components.resources.job_provider" in data
               for pickles in recorded_providers(project).values() for data in pickles)

    project.switch_code(installed_library_only(tmp_path))
    assert not (project.path / "components").exists()
    (project.path / "components").mkdir()  # the team's own package of that name
    (project.path / "components" / "__init__.py").write_text('"""The team\'s pipeline components."""\n')
    switched = len(emulator.control("requests"))

    preview = json.loads(project.pulumi("preview", "--json").stdout)
    assert {step["op"] for step in preview["steps"]} <= UPGRADE_OPS, json.dumps(preview["steps"], indent=1)
    project.up()  # an update in place of each job (a read, no API write): its outputs now pickle the new path
    recorded = recorded_providers(project)
    assert set(recorded) == {"kept", "removed"}
    for data in (data for pickles in recorded.values() for data in pickles):
        assert b"gcp_training_jobs.resources.job_provider" in data and b"components.resources" not in data

    project.edit_config(lambda config: config["gcp-training-jobs:jobs"].pop("removed"))
    project.up()
    assert by_resource(emulator)["removed"][1]["state"] == CANCELLED["vertex"]
    project.pulumi("destroy", "--yes", "--skip-preview")
    after = by_resource(emulator)
    assert after["kept"] == (before["kept"][0], after["kept"][1]) and after["kept"][1]["state"] == CANCELLED["vertex"]
    created = [r for r in emulator.control("requests")[switched:] if str(r["method"]).endswith(".create")]
    assert created == [], "the upgrade made a job: the new code labels a job otherwise than the release"
