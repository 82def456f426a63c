"""The real engine, killed: SIGKILL of `pulumi up` (every process of it, as a lost CI runner) while its creates
are slow, then the recovery the README gives, then exactly one live job per resource, on both backends. And a
secret label, set as a user sets it, never appears in plain text in the state.

Needs the `pulumi` CLI, as tests/test_e2e.py does.
"""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_support import (  # noqa: F401 (process_emulator: the emulator fixture)
    Emulator,
    Project,
    kill_session,
    offline_config,
    process_emulator,
    require_pulumi,
    session_processes,
    wait_until,
)

pytestmark = pytest.mark.e2e

PULUMI = require_pulumi()

JOBS = 6
CREATE = {"ai-platform": "jobs.create", "vertex": "customJobs.create"}
#: How long the emulator holds each create before making the job (the dead run never sees an answer).
SLOW_CREATE_SECONDS = 5


def stack_config(backend: str) -> dict[str, Any]:
    """JOBS container jobs (valid on both backends), no `gcp:` resources."""
    job = {"trainingInput": {"scaleTier": "CUSTOM", "masterType": "n1-standard-4",
                             "masterConfig": {"imageUri": "us-docker.pkg.dev/crash-project/trainers/t:1"}}}
    return offline_config("crash", {f"j{i}": job for i in range(JOBS)}, backend=backend, tpuAccess={"grant": False})



def live_per_resource(emulator: Emulator) -> Counter[str]:
    """How many live jobs each resource has (by the job id's stem: the resource name)."""
    return Counter(job_id.rsplit("_", 1)[0] for job_id in emulator.live())


@pytest.mark.parametrize("backend", ["ai-platform", "vertex"])
def test_a_killed_up_then_the_readme_recovery_leaves_one_live_job_per_resource(
        tmp_path: Path, emulator: Emulator, backend: str) -> None:
    emulator.control("reset", {})
    project = Project.copy(tmp_path, PULUMI, emulator, stack="crash", config=stack_config(backend))
    emulator.control("faults", {"delay": SLOW_CREATE_SECONDS, "count": JOBS, "method": CREATE[backend]})

    dead = subprocess.Popen(project.command("up", "--yes", "--skip-preview"), cwd=project.path, env=project.env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    wait_until(lambda: len(emulator.calls(CREATE[backend])) >= JOBS // 2, 120, "creates sent by the first up")
    killed = kill_session(dead)
    sent = len(emulator.calls(CREATE[backend]))
    assert len(killed) >= 3, killed  # the CLI, its language host and program, the dynamic provider
    wait_until(lambda: len(emulator.jobs()) == sent, 60, "the dead run's slow creates landing")
    left = len(emulator.live())
    assert 0 < left == sent <= JOBS
    assert project.resources() == []  # the dead run wrote none of them
    print(f"{backend}: the killed up sent {sent} creates; {left} live jobs and 0 in state before recovery")

    # The README's "Recovering after a crash", as written.
    locked = project.pulumi("up", "--yes", "--skip-preview", ok=False)
    assert locked.returncode != 0 and "locked" in locked.stdout + locked.stderr
    project.pulumi("cancel", "--yes")
    project.pulumi("refresh", "--yes", "--skip-preview", "--clear-pending-creates")
    project.up()

    assert live_per_resource(emulator) == Counter({f"j{i}": 1 for i in range(JOBS)})
    assert len(emulator.calls(CREATE[backend])) == sent + (JOBS - left)  # none of the dead run's jobs doubled
    state = project.deployment()
    assert not state.get("pending_operations")
    in_state = {r["outputs"]["jobId"] for r in project.resources()}
    assert in_state == set(emulator.live())
    print(f"{backend}: after recovery {len(emulator.live())} live jobs for {JOBS} resources, "
          f"{len(emulator.jobs())} jobs in all")


def test_a_secret_never_appears_in_plain_text_in_the_state(tmp_path: Path, emulator: Emulator) -> None:
    """A secret job argument (a label may not be secret: it reaches Google in plain text, and is refused)."""
    emulator.control("reset", {})
    canary = "canary-0f3b9d2e71c4"
    project = Project.copy(tmp_path, PULUMI, emulator, stack="local-ai-platform")  # ml v1: labels patched in place
    project.pulumi("config", "set", "--secret", "--path", "gcp-training-jobs:jobs.gpu.trainingInput.args[0]", canary)
    stack_file = (project.path / "stacks" / "Pulumi.local-ai-platform.yaml").read_text()
    assert canary not in stack_file and "secure:" in stack_file
    project.up()
    gpu = [job for job in emulator.jobs().values() if job["jobId"].startswith("gpu_")]
    assert [job["trainingInput"]["args"] for job in gpu] == [[canary]]  # it reached the API
    project.edit_job("gpu", lambda job: job["labels"].update(team="speech"))
    project.up()  # a label update (ml v1 patches in place) echoes the inputs again
    assert len(emulator.calls("jobs.patch")) == 1
    state = project.state()
    assert canary not in state
    assert canary in project.pulumi("stack", "export", "--show-secrets").stdout
    secret_sig = "4dabf18193072939515e22adb298388d"
    for resource in project.resources():  # secret where the value stands, never the whole input; the output whole
        assert secret_sig not in resource["inputs"]["job"], resource["urn"]
        assert json.dumps(resource["outputs"]["job"]).startswith(f'{{"{secret_sig}"')
    (gpu_state,) = [r for r in project.resources() if r["urn"].endswith("::gpu")]
    assert secret_sig in gpu_state["inputs"]["job"]["trainingInput"]["args"]


def test_a_vertex_create_answered_after_the_client_timeout_makes_one_job(tmp_path: Path, emulator: Emulator) -> None:
    """The server finishes each create after the client gave up: `up` adopts them by their labels."""
    emulator.control("reset", {})
    project = Project.copy(tmp_path, PULUMI, emulator, stack="crash", config=stack_config("vertex"))
    project.env["GCP_TRAINING_JOBS_HTTP_TIMEOUT_SECONDS"] = "1"
    emulator.control("faults", {"delay": 3, "count": JOBS, "method": "customJobs.create"})
    project.up()
    assert len(emulator.calls("customJobs.create")) == JOBS
    assert live_per_resource(emulator) == Counter({f"j{i}": 1 for i in range(JOBS)})
    assert {r["outputs"]["jobId"] for r in project.resources()} == set(emulator.live())


def test_a_plaintext_remote_endpoint_is_refused_before_anything_runs(tmp_path: Path, emulator: Emulator) -> None:
    project = Project.copy(tmp_path, PULUMI, emulator)
    project.pulumi("config", "set", "gcp-training-jobs:apiEndpoint", "http://192.0.2.2:18099/")
    done = project.pulumi("preview", ok=False)
    text = done.stdout + done.stderr
    assert done.returncode != 0
    assert "gcp-training-jobs:apiEndpoint: 'http://192.0.2.2:18099/': not https:// and not loopback: it would " \
           "carry Google credentials in clear text; allowed: " in text, text


#: How long the emulator holds each create of the run whose CLI is killed before refusing it (503): a provider left
#: running would then look for its job and send again.
HELD_SECONDS = 5
#: How many creates the dynamic provider serves at once (its gRPC server's workers, pulumi/dynamic/__main__.py).
IN_FLIGHT = 4
#: How soon after the CLI's SIGKILL no process of its run may be left (the provider ends within engine_watch's poll).
GONE_WITHIN_SECONDS = 8


def session_members(session: int) -> list[str]:
    """The processes of a session still running, as `pid command` (a zombie is gone: it runs nothing)."""
    return [f"{pid} {command}" for pid, command, state in session_processes(session) if state != "Z"]


def test_a_sigkill_of_the_cli_mid_create_leaves_no_process_of_its_run_and_sends_nothing_more(
        tmp_path: Path, emulator: Emulator) -> None:
    """Only the CLI is killed (its plugins run in process groups of their own, which the signal does not reach): the
    language host, the program and the dynamic provider go with it, and nothing reaches the emulator after it."""
    emulator.control("reset", {})
    project = Project.copy(tmp_path, PULUMI, emulator, stack="crash", config=stack_config("vertex"))
    emulator.control("faults", {"delay": HELD_SECONDS, "count": JOBS, "method": "customJobs.create"})
    emulator.control("faults", {"status": 503, "count": JOBS, "method": "customJobs.create"})
    cli = subprocess.Popen(project.command("up", "--yes", "--skip-preview"), cwd=project.path, env=project.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    # killed once the provider holds as many creates as it serves at once (the engine waits on them: its own writes
    # done; a kill amid the file backend's write of its checkpoint is another matter, see docs/recovery-and-security.md)
    wait_until(lambda: len(emulator.calls("customJobs.create")) >= IN_FLIGHT, 120, "creates held by the emulator")
    running = session_members(cli.pid)
    assert any("pulumi-language" in m for m in running) and sum("python" in m for m in running) >= 2, running
    cli.kill()  # SIGKILL, the CLI alone
    cli.wait(timeout=30)
    sent = len(emulator.control("requests"))
    wait_until(lambda: session_members(cli.pid) == [], GONE_WITHIN_SECONDS, "every process of the killed run gone")
    assert len(emulator.control("requests")) == sent  # nothing reached the emulator after the kill
    assert emulator.live() == {}  # each create held was refused: no job left behind

    emulator.control("reset", {})  # the faults the dead run did not reach
    project.pulumi("cancel", "--yes")  # the documented recovery: the lock of the killed run, then its pending creates
    project.pulumi("refresh", "--yes", "--skip-preview", "--clear-pending-creates")
    project.up()
    assert live_per_resource(emulator) == Counter({f"j{i}": 1 for i in range(JOBS)})


def post(emulator: Emulator, path: str, body: dict[str, Any]) -> Any:
    """A Vertex AI request to the emulator, as someone outside Pulumi sends it."""
    request = urllib.request.Request(emulator.url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read() or b"null")


def test_a_job_with_a_stack_jobs_labels_and_another_image_is_never_adopted(tmp_path: Path, emulator: Emulator) -> None:
    emulator.control("reset", {})
    one = {"j0": stack_config("vertex")["gcp-training-jobs:jobs"]["j0"]}
    project = Project.copy(tmp_path, PULUMI, emulator, stack="crash",
                           config=offline_config("crash", one, tpuAccess={"grant": False}))
    project.up()
    (made,) = emulator.live().values()
    post(emulator, f"v1/{made['name']}:cancel", {})
    impostor = {"displayName": "impostor", "labels": {**made["labels"], "pulumi-job": "impostor_1"},
                "jobSpec": json.loads(json.dumps(made["jobSpec"]))}
    impostor["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["imageUri"] = "docker.io/someone/miner:latest"
    post(emulator, "v1/projects/crash-project/locations/us-central1/customJobs", impostor)
    (resource,) = project.resources()
    project.pulumi("state", "delete", resource["urn"], "--yes")  # the stack's job is to be made again
    creates = len(emulator.calls("customJobs.create"))

    done = project.pulumi("up", "--yes", "--skip-preview", ok=False)
    text = done.stdout + done.stderr
    assert done.returncode != 0, text
    assert "impostor_1" in text and "not the job the stack declares" in text, text
    assert "docker.io/someone/miner:latest" in text and "imageUri" in text, text
    assert len(emulator.calls("customJobs.create")) == creates  # nothing created beside it
    assert list(emulator.live()) == ["impostor_1"]  # and not cancelled: it is not the stack's
    assert project.resources() == []
