"""Persistent resources in a stack (`gcp-training-jobs:persistentResources`): judged by the pool rules, a job on a
declared one held to Vertex's fit rule offline, priced, counted against quotas and guardrails as its machines."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from components.emulator import vertex_limits
from components.jobspec.catalog import vertex_jobspec

ROOT = Path(__file__).resolve().parents[1]
T4 = "{machineType: n1-standard-8, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 2}"


def stack(resources: str, jobs: str, extra: str = "") -> str:
    return textwrap.dedent("""\
        config:
          gcp:project: my-project-123
          gcp-training-jobs:backend: vertex
          gcp-training-jobs:region: us-central1
        """) + textwrap.indent(extra + "gcp-training-jobs:persistentResources:\n" + textwrap.indent(
        resources, "  ") + "gcp-training-jobs:jobs:\n" + textwrap.indent(jobs, "  "), "  ")


TEAM_POOL = f"""\
team-pool:
  labels: {{team: ml}}
  resourcePools:
    - machineSpec: {T4}
      autoscalingSpec: {{minReplicaCount: 1, maxReplicaCount: 4}}
"""


def job_on(resource: str, replicas: int, machine: str = T4, disk: str = "") -> str:
    return f"""\
on-pool:
  jobSpec:
    persistentResourceId: {resource}
    scheduling: {{timeout: 7200s}}
    workerPoolSpecs:
      - machineSpec: {T4}
        replicaCount: 1
        containerSpec: {{imageUri: us-docker.pkg.dev/p/r/t:1}}
      - machineSpec: {machine}
        replicaCount: {replicas}
        containerSpec: {{imageUri: us-docker.pkg.dev/p/r/t:1}}{disk}
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "components", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def validate(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "Pulumi.pr.yaml"
    path.write_text(text)
    return run("validate", str(path))


def test_a_job_that_fits_a_declared_resource_passes(tmp_path: Path) -> None:
    done = validate(tmp_path, stack(TEAM_POOL, job_on("team-pool", 3)))
    assert done.returncode == 0, done.stderr
    assert "ok (stack)" in done.stdout


def test_more_replicas_than_the_resource_pool_holds_is_refused_naming_both_pools(tmp_path: Path) -> None:
    done = validate(tmp_path, stack(TEAM_POOL, job_on("team-pool", 5)))
    assert done.returncode == 1
    line = next(x for x in done.stdout.splitlines() + done.stderr.splitlines() if "does not fit" in x)
    assert "gcp-training-jobs:jobs.on-pool.jobSpec.workerPoolSpecs[1]: n1-standard-8 x5 + 2 NVIDIA_TESLA_T4" in line
    assert "its replicaCount is more than the matching pool's" in line
    assert "resourcePools[0] n1-standard-8 x1..4 + 2 NVIDIA_TESLA_T4, disk pd-ssd 100 GB" in line
    assert "persistent-resource-train" in line
    assert "Traceback" not in done.stderr


def test_a_different_disk_does_not_fit_while_the_default_disk_written_out_does(tmp_path: Path) -> None:
    other = "\n        diskSpec: {bootDiskType: pd-standard}"
    same = "\n        diskSpec: {bootDiskType: pd-ssd, bootDiskSizeGb: 100}"
    refused = validate(tmp_path, stack(TEAM_POOL, job_on("team-pool", 2, disk=other)))
    assert refused.returncode == 1
    assert "disk pd-standard 100 GB does not fit persistent resource team-pool (its machineSpec and diskSpec " \
           "match none of its pools)" in refused.stdout + refused.stderr
    assert validate(tmp_path, stack(TEAM_POOL, job_on("team-pool", 2, disk=same))).returncode == 0


def test_another_machine_does_not_fit(tmp_path: Path) -> None:
    l4 = "{machineType: g2-standard-8, acceleratorType: NVIDIA_L4, acceleratorCount: 1}"
    done = validate(tmp_path, stack(TEAM_POOL, job_on("team-pool", 1, machine=l4)))
    assert done.returncode == 1
    assert "workerPoolSpecs[1]: g2-standard-8 x1 + 1 NVIDIA_L4, disk pd-ssd 100 GB does not fit" in done.stdout


def test_an_id_the_stack_does_not_declare_is_an_existing_resource_not_checked_offline(tmp_path: Path) -> None:
    done = validate(tmp_path, stack(TEAM_POOL, job_on("made-elsewhere", 50)))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_resource_is_judged_by_the_pool_rules_and_its_keys_named(tmp_path: Path) -> None:
    bad = """\
team-pool:
  zone: us-central1-a
  resourcePools:
    - machineSpec: {machineType: n1-standard-8}
other:
  region: europe-west4
  resourcePools:
    - machineSpec: {machineType: n1-standard-8, acceleratorType: NVIDIA_H100_80GB, acceleratorCount: 2}
      replicaCount: 2
Bad_Name:
  resourcePools: []
"""
    done = validate(tmp_path, stack(bad, ""))
    out = done.stdout
    assert done.returncode == 1
    assert "gcp-training-jobs:persistentResources.team-pool.zone: unknown field 'zone'" in out
    assert ("gcp-training-jobs:persistentResources.other.resourcePools[0].machineSpec.acceleratorType: "
            "NVIDIA_H100_80GB on n1-standard-8 is not offered") in out
    assert "'Bad_Name' is not a persistent resource id" in out


def test_the_client_and_the_emulator_hold_vertex_disk_defaults_alike() -> None:
    assert vertex_jobspec.BOOT_DISK_DEFAULT_TYPE == vertex_limits.BOOT_DISK_TYPE
    assert vertex_jobspec.BOOT_DISK_DEFAULT_TYPE_A3_ULTRA == vertex_limits.BOOT_DISK_TYPE_A3_ULTRA
    assert vertex_jobspec.BOOT_DISK_DEFAULT_SIZE_GB == vertex_limits.BOOT_DISK_SIZE_GB
    for machine in ("n1-standard-8", "a3-ultragpu-8g", "a2-highgpu-1g"):
        assert vertex_jobspec.boot_disk_of(machine, None, None) == vertex_limits.boot_disk(machine, None)
