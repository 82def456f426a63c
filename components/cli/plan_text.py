"""How `plan` writes values: yes/no, labels, and the lines every job ends with (both job vocabularies)."""

from __future__ import annotations

from typing import Any


def yes(value: Any) -> str:
    return "true" if value else "false"


def labels_text(value: Any) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted((value or {}).items())) or "none"


def job_tail(scheduling: dict[str, Any] | None, job: dict[str, Any], inputs: dict[str, Any]) -> list[tuple[str, str]]:
    """scheduling, labels and waitForCompletion: the last lines of every job's description."""
    lines: list[tuple[str, str]] = []
    if scheduling:
        lines.append(("scheduling", ", ".join(f"{k}={v}" for k, v in sorted(scheduling.items()))))
    lines.append(("labels", labels_text(job.get("labels"))))
    wait = inputs.get("waitForCompletion")
    timeout = inputs.get("waitTimeoutSeconds")
    lines.append(("waitForCompletion", yes(wait) + (f" (at most {timeout:g} s)" if wait and timeout else "")))
    return lines
