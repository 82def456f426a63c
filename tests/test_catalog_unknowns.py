"""What the catalog cannot know is a warning with the catalog's date, not a refusal: a prebuilt training image of a
framework version newer than every one the prebuilt-containers page listed when it was read is accepted, priced and
rendered, with a warning on stderr naming the read date and saying its end of availability is not checked. What the
catalog knows to be wrong is still refused: an image past its end of availability, a malformed name of a known
version, a version older than the newest it lists that it does not list, and any tag but `latest`."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.names import TODAY_ENV
from gcp_training_jobs.jobspec.load import judge_custom_job, judge_job
from gcp_training_jobs.jobspec.review.cost import estimate
from gcp_training_jobs.jobspec.translate.facts import facts_of_body

ROOT = Path(__file__).resolve().parents[1]
READ = catalog.SOURCE_PREBUILT.read.isoformat()
TODAY = "2026-11-25"


def spec(image: str, *, custom: bool = False) -> dict[str, Any]:
    machine = {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 1}
    code: dict[str, Any] = ({"containerSpec": {"imageUri": image}} if custom else {"pythonPackageSpec": {
        "executorImageUri": image, "packageUris": ["gs://my-staging/trainer-0.1.tar.gz"],
        "pythonModule": "trainer.task"}})
    return {"workerPoolSpecs": [{"machineSpec": machine, "replicaCount": 1, **code}]}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", TODAY_ENV: TODAY}
    return subprocess.run([sys.executable, "-m", "components", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env=env)


@pytest.mark.parametrize(("image", "what"), [
    ("us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-6.py310:latest", "pytorch 2.6, gpu"),
    ("europe-docker.pkg.dev/vertex-ai/training/tf-gpu.2-19.py310:latest", "tensorflow 2.19, gpu"),
    ("asia-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-7:latest", "scikit-learn 1.7, cpu"),
    ("us-docker.pkg.dev/vertex-ai/training/pytorch-xla.2-5.py311:latest", "pytorch 2.5, cpu"),
])
def test_validate_accepts_a_newer_image_with_a_dated_warning_and_render_and_cost_treat_it_like_any(
        tmp_path: Path, image: str, what: str) -> None:
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(spec(image)))
    done = cli("validate", str(config), "--region", "us-central1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == f"{config}: ok (job)\n"
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"{config}: warning: workerPoolSpecs[0].pythonPackageSpec.executorImageUri: ")
    assert f"({what}) is newer than every" in line and f"read {READ}" in line
    assert line.endswith("accepted, its end of availability is not checked")
    rendered = cli("render", "--config", str(config), "--region", "us-central1")
    assert rendered.returncode == 0, rendered.stderr
    (pool,) = json.loads(rendered.stdout)["jobSpec"]["workerPoolSpecs"]
    assert pool["pythonPackageSpec"]["executorImageUri"] == image
    judged = judge_custom_job(spec(image), region="us-central1", today=date(2026, 11, 25))
    assert judged.ok and judged.body is not None and [w.path for w in judged.warnings] == [
        "workerPoolSpecs[0].pythonPackageSpec.executorImageUri"]
    priced = estimate(facts_of_body(judged.body, region="us-central1"), "job")
    own = judge_custom_job(spec("us-docker.pkg.dev/my-proj/trainers/resnet:1", custom=True), region="us-central1")
    assert own.body is not None and priced.on_demand.complete and priced.on_demand.known > 0
    own_facts = facts_of_body(own.body, region="us-central1")
    assert priced.on_demand == estimate(own_facts, "job").on_demand  # the machine's price, as any


def test_a_newer_image_as_a_custom_container_is_accepted_with_the_same_warning() -> None:
    judged = judge_custom_job(spec("us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-18.py310:latest", custom=True),
                              region="us-central1", today=date(2026, 11, 25))
    assert judged.ok and judged.warnings[0].path == "workerPoolSpecs[0].containerSpec.imageUri"
    assert judged.warnings[0].warning().endswith("its end of availability is not checked")


@pytest.mark.parametrize(("image", "says"), [
    ("us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:latest",
     "reached its end of availability on 2026-07-24"),                     # known, past its date
    ("us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py31:latest", "is not a prebuilt training container"),
    ("us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-6.py31:latest", "is not a prebuilt training container"),
    ("us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-10.py310:latest", "is not a prebuilt training container"),
    ("us-docker.pkg.dev/vertex-ai/training/scikit-learn-cpu.1-9:latest", "is not a prebuilt training container"),
    ("gcr.io/vertex-ai/training/pytorch-gpu.2-6.py310:latest", "is not a prebuilt training container"),
    ("us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-6.py310:2.6.0", "prebuilt images are used on their "
     "latest tag only"),
    ("us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-6.py310", "prebuilt images are used on their latest tag"),
])
def test_what_the_catalog_knows_is_wrong_is_still_refused(tmp_path: Path, image: str, says: str) -> None:
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(spec(image)))
    done = cli("validate", str(config), "--region", "us-central1")
    assert done.returncode == 1 and says in done.stdout and "warning" not in done.stderr
    assert "workerPoolSpecs[0].pythonPackageSpec.executorImageUri" in done.stdout


def test_a_runtime_version_is_a_closed_list_and_its_images_stay_dated() -> None:
    """AI Platform Training's runtime versions no longer grow (the service is shut down): an unknown one is refused,
    and a runtime translated to a past image is refused with its date, never a warning."""
    job = {"trainingInput": {"scaleTier": "BASIC_GPU", "region": "us-central1", "runtimeVersion": "2.12",
                             "pythonVersion": "3.7", "pythonModule": "trainer.task",
                             "packageUris": ["gs://my-staging/trainer-0.1.tar.gz"]}}
    judged = judge_job(job, backend="vertex", today=date(2026, 11, 25))
    assert not judged.ok and not judged.warnings
    assert any("'2.12' is not a runtime version" in p.message for p in judged.problems)
