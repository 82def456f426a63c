"""A stack's job warnings as `plan` and `diff` show them: every warning of the one pass (load.Judged.warnings, kept
per job by the settings, named at the stack file's keys), each once: a section of the text plan, a `warnings` list
per job in `plan --json` and the diff's JSON (whose text and comment list the credentials by field and kind, never
the value: cli.diff.text). Warnings stop nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gcp_training_jobs.jobspec.core.problems import CredentialWarning, Problem

#: The heading of the text plan's section.
HEADING = "Warnings (they stop nothing):"


def job_warnings(jobs: Mapping[str, Any]) -> dict[str, tuple[Problem, ...]]:
    """Each job's warnings, once each, by job name (`jobs`: the settings' JobSettings by name); jobs without any
    left out."""
    found = {name: tuple(dict.fromkeys(getattr(job, "warnings", ()))) for name, job in jobs.items()}
    return {name: warnings for name, warnings in found.items() if warnings}


def warnings_document(warnings: tuple[Problem, ...]) -> list[dict[str, Any]]:
    """A job's warnings as JSON data: the field path, the message, and for a credential its kind."""
    return [{"path": w.path, "message": w.message, **({"credential": w.kind} if isinstance(w, CredentialWarning)
                                                      else {})} for w in warnings]


def warnings_section(document: Mapping[str, Any]) -> list[str]:
    """The text plan's section, from the plan as data (each TrainingJob's `warnings`): a heading, then one line per
    warning (`PATH: message`); nothing when there is none."""
    lines: list[str] = []
    pending = list(document.get("resources") or [])
    while pending:
        doc = pending.pop(0)
        lines += [f"    {w['path']}: {w['message']}" for w in doc.get("warnings") or ()]
        pending[:0] = doc.get("children") or []
    return ["", HEADING, *dict.fromkeys(lines)] if lines else []
