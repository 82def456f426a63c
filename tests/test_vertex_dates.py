"""Date rules judge against "today": prebuilt containers past their end of availability are refused with the date
and the newest replacement (or, when every image of the framework is gone, a custom container); tests and
users set another today with Options/`today=` or $GCP_TRAINING_JOBS_TODAY."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import TODAY_ENV
from gcp_training_jobs.jobspec.load import judge_job, load_custom_job, load_job, render_body
from gcp_training_jobs.jobspec.rules import Options, today
from tests.helpers import container_pool, custom_job_spec, gpu_job

US = "us-docker.pkg.dev/vertex-ai/training/"


def python_pool(image: str) -> dict[str, Any]:
    return custom_job_spec({"machineSpec": {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4",
                                            "acceleratorCount": 1}, "replicaCount": 1,
                            "pythonPackageSpec": {"executorImageUri": image, "packageUris": ["gs://bkt/t.tar.gz"],
                                                  "pythonModule": "trainer.task"}})


def problems(data: dict[str, Any], on: date | None) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_custom_job(data, region="us-central1", today=on)
    return [str(p) for p in caught.value.problems]


def test_today_comes_from_options_then_the_environment_then_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TODAY_ENV, raising=False)
    assert today() == date.today()
    monkeypatch.setenv(TODAY_ENV, "2025-01-31")
    assert today() == date(2025, 1, 31)
    assert today(Options(today=date(2024, 1, 1))) == date(2024, 1, 1)
    monkeypatch.setenv(TODAY_ENV, "31/01/2025")
    with pytest.raises(SpecError) as caught:
        load_custom_job(python_pool(US + "tf-gpu.2-17.py310:latest"), region="us-central1")
    assert str(caught.value.problems[0]) == (f"{TODAY_ENV}: '31/01/2025' is not a date; allowed: YYYY-MM-DD (e.g. "
                                             "2026-11-22), or unset for the system's date")


def test_an_image_past_its_date_names_the_date_and_the_newest_replacement() -> None:
    image = "europe-docker.pkg.dev/vertex-ai/training/tf-gpu.2-16.py310:latest"
    load_custom_job(python_pool(image), region="us-central1", today=date(2026, 6, 28))
    (text,) = problems(python_pool(image), date(2026, 6, 29))
    assert text == (
        "workerPoolSpecs[0].pythonPackageSpec.executorImageUri: tf-gpu.2-16.py310 (tensorflow 2.16, gpu) reached its "
        "end of availability on 2026-06-28 (https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-"
        "learning/framework-support-policy); allowed: europe-docker.pkg.dev/vertex-ai/training/tf-gpu.2-17.py310:"
        "latest (available until 2026-07-11)")


def test_when_every_image_of_a_framework_is_gone_a_custom_container_is_suggested() -> None:
    (text,) = problems(python_pool(US + "xgboost-cpu.1-6:latest"), date(2026, 11, 22))
    assert text.endswith("allowed: a custom container (containerSpec.imageUri): no prebuilt xgboost image is "
                         "available any more (the last, xgboost-cpu.2-1, until 2026-07-11)")
    assert "reached its end of availability on 2025-06-30" in text


def test_executor_images_are_prebuilt_and_latest() -> None:
    (text,) = problems(python_pool("gcr.io/my-proj/trainer:1"), date(2026, 6, 1))
    assert text.startswith("workerPoolSpecs[0].pythonPackageSpec.executorImageUri: 'gcr.io/my-proj/trainer:1' is "
                           "not a prebuilt training container")
    (text,) = problems(python_pool(US + "pytorch-gpu.2-4.py310:2024-09"), date(2026, 6, 1))
    assert text.endswith("prebuilt images are used on their latest tag only ('You must use an image with the latest "
                         f"tag'); allowed: us-docker.pkg.dev/{'vertex-ai/training/pytorch-gpu.2-4.py310:latest'}")


def test_a_prebuilt_image_used_as_a_custom_container_is_judged_by_its_date_too() -> None:
    data = custom_job_spec(container_pool({"machineType": "n1-standard-4"}, image=US + "sklearn-cpu.1-6:latest"))
    load_custom_job(data, region="us-central1", today=date(2026, 7, 11))
    (text,) = problems(data, date(2026, 7, 12))
    assert text.startswith("workerPoolSpecs[0].containerSpec.imageUri: sklearn-cpu.1-6 (scikit-learn 1.6, cpu) "
                           "reached its end of availability on 2026-07-11")


def test_a_runtime_version_translated_to_a_past_container_is_refused() -> None:
    data = gpu_job("n1-standard-8", "NVIDIA_TESLA_T4", 2)  # runtime 2.11: tf-gpu.2-11
    before = judge_job(data, backend="vertex", today=date(2024, 11, 15))
    assert before.ok and before.body is not None and before.body["jobSpec"]["workerPoolSpecs"][0]
    after = judge_job(data, backend="vertex", today=date(2026, 11, 22))
    assert after.body is None
    (problem,) = after.problems
    assert problem.path == "trainingInput.runtimeVersion"
    assert problem.message.startswith("translates to the prebuilt container tf-gpu.2-11, which reached its end of "
                                      "availability on 2024-11-15")
    assert problem.message.endswith("allowed: a custom container (masterConfig.imageUri): no prebuilt tensorflow "
                                    "image is available any more (the last, tf-gpu.2-17.py310, until 2026-07-11)")
    with pytest.raises(SpecError):
        load_job(gpu_job("n1-standard-8", "NVIDIA_TESLA_T4", 2), backend="vertex", today=date(2026, 11, 22))


def test_the_environment_sets_today_for_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    job = load_job(gpu_job("n1-standard-8", "NVIDIA_TESLA_T4", 2))
    monkeypatch.setenv(TODAY_ENV, "2024-06-01")
    render_body(job, "vertex", "j")
    monkeypatch.setenv(TODAY_ENV, "2026-11-22")
    with pytest.raises(SpecError, match="end of availability on 2024-11-15"):
        render_body(job, "vertex", "j")
