"""Shared test helpers: building job specs and checking bodies against Google's discovery schemas."""

from __future__ import annotations

from collections.abc import Callable
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


def container_pool(machine_spec: dict[str, Any], replicaCount: int = 1, image: str = "us-docker.pkg.dev/p/r/t:1",  # noqa: N803
                   **extra: Any) -> dict[str, Any]:
    """One CustomJobSpec worker pool running a custom container."""
    return {"machineSpec": machine_spec, "replicaCount": replicaCount, "containerSpec": {"imageUri": image}, **extra}


def custom_job_spec(*pools: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A CustomJobSpec (what `gcloud ai custom-jobs create --config` reads) with these pools and fields."""
    return {"workerPoolSpecs": list(pools), **fields}


def leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """Every leaf of a JSON-like value with its path (an empty mapping or list counts as a leaf)."""
    if isinstance(value, dict) and value:
        return [leaf for key, item in value.items() for leaf in leaves(item, (*path, key))]
    if isinstance(value, list) and value:
        return [leaf for i, item in enumerate(value) for leaf in leaves(item, (*path, i))]
    return [(path, value)]


class FakeClock:
    """A clock that moves only when slept on: what the lifecycle gets instead of time.monotonic and time.sleep
    (`Jobs(clock=..., sleep=...)`, or `drive(provider)`), so that its retries, reconcile window and waits are
    counted, never timed, and a busy machine changes nothing. `sleeps` records every sleep; `then` runs after
    each one (e.g. the emulator's `state.advance`, so that its jobs move with this clock)."""

    def __init__(self, then: Callable[[float], Any] | None = None) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self.then = then

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0, f"a negative sleep: {seconds}"
        self.sleeps.append(seconds)
        self.now += seconds
        if self.then is not None:
            self.then(seconds)

    def drive(self, provider: Any) -> Any:
        """The provider, its lifecycle on this clock (set on the instance: the class's are time's own)."""
        provider.clock, provider.sleep = self.time, self.sleep
        return provider
