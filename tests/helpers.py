"""Shared test helpers: building job specs and checking bodies against Google's discovery schemas."""

from __future__ import annotations

from typing import Any

from components.emulator.discovery import validate_body


def gpu_job(machine: str, gpu: str | None = None, count: int | None = None, *, region: str = "us-central1",
            **extra: Any) -> dict[str, Any]:
    """A complete CUSTOM job with one master, optionally with an acceleratorConfig."""
    ti: dict[str, Any] = {
        "scaleTier": "CUSTOM",
        "masterType": machine,
        "region": region,
        "runtimeVersion": "2.11",
        "pythonVersion": "3.7",
        "pythonModule": "trainer.task",
        "packageUris": ["gs://my-staging-bucket/trainer-0.1.tar.gz"],
    }
    if gpu is not None:
        acc: dict[str, Any] = {"type": gpu}
        if count is not None:
            acc["count"] = count
        ti["masterConfig"] = {"acceleratorConfig": acc}
    ti.update(extra)
    return {"trainingInput": ti}


def assert_ml_body_valid(body: dict[str, Any]) -> None:
    problems = validate_body("ml", "GoogleCloudMlV1__Job", body, strict_int64=True, reject_output_only=True)
    assert problems == [], problems


def assert_vertex_body_valid(body: dict[str, Any]) -> None:
    problems = validate_body("aiplatform", "GoogleCloudAiplatformV1CustomJob", body, strict_int64=True,
                             reject_output_only=True)
    assert problems == [], problems
