"""The text form of a plan, rendered from the plan as data (the document `--json` prints): every resource with
its details, indented under its parent, the outputs, the count, the jobs' warnings, then the review (what the jobs
cost, whether the stack keeps its guardrails).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gcp_training_jobs.cli.plan.cheapest import text_lines as cheapest_lines
from gcp_training_jobs.cli.plan.job_warnings import warnings_section
from gcp_training_jobs.cli.plan.mocks import AT_APPLY
from gcp_training_jobs.jobspec.review.guardrails import BUDGET_KEY, GUARDRAILS_KEY


def render_text(document: dict[str, Any]) -> str:
    out: list[str] = [f"Plan for stack {document['stack']} ({document['file']}), offline under Pulumi's mocks:", ""]

    def block(doc: dict[str, Any], depth: int) -> None:
        pad = "    " * depth
        kind = "" if doc["custom"] else "  (component)"
        out.append(f"{pad}+ {doc['type']}  {doc['name']}{kind}")
        for key, text in (doc.get("details") or {}).items():
            out.append(f"{pad}      {key}: {text}")
        if doc.get("dependsOn") and depth == 0:
            out.append(f"{pad}      after: {', '.join(doc['dependsOn'])}")
        for child in doc.get("children", []):
            block(child, depth + 1)

    for doc in document["resources"]:
        block(doc, 0)
        out.append("")
    out.append("Outputs:")
    out += [f"    {line}" for line in _output_lines(document["outputs"])]
    summary = document["summary"]
    custom, components = _count(summary["custom"], "custom resource"), _count(summary["components"], "component")
    out += ["", f"{_count(summary['resources'], 'resource')} to create ({custom}, {components})"]
    out += warnings_section(document)  # every job's warnings, once each
    out += _review_lines(document)
    out += cheapest_lines(document)  # the cheapest placement within the stack's bounds
    return "\n".join(out)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _output_lines(value: Any, depth: int = 0) -> Iterator[str]:
    for key in sorted(value):
        item = value[key]
        if isinstance(item, dict) and item:
            yield "    " * depth + f"{key}:"
            yield from _output_lines(item, depth + 1)
        else:
            yield "    " * depth + f"{key}: {item if item is not None else AT_APPLY}"


def _review_lines(document: dict[str, Any]) -> list[str]:
    """The text form of the review, appended to the plan."""
    cost, rails = document.get("cost"), document.get("guardrails")
    if cost is None or rails is None:
        return []
    out = ["", "Cost while every machine runs (estimate; no price is guessed):"]
    for name, job in cost["jobs"].items():
        out.append(f"    {name}: {job['text']}")
        out += [f"        {line}" for line in job["partLines"]]
    for name, held in cost.get("persistentResources", {}).items():
        out.append(f"    persistent resource {name}: {held['text']}")
        out += [f"        {line}" for line in held["partLines"]]
    out.append(f"    stack: {cost['stack']['text']}")
    table, *sources = cost["sources"]
    out.append(f"    prices: {table}, from:")
    out += [f"        {line}" for line in sources]
    out += [f"    warning: {line}" for line in cost["warnings"]]
    declared = ", ".join(f"{k} {_text(v)}" for k, v in rails["declared"].items()) or "none declared"
    out += ["", f"Guardrails ({GUARDRAILS_KEY}): {declared}; fixed rules: {', '.join(rails['fixedRules'])}"]
    problems = rails["problems"]
    out.append(f"    {len(problems)} broken (see below)" if problems else "    all hold")
    out += _budget_lines(document.get("budget"))
    reserved = document.get("reservations")
    out += _quota_lines(document.get("quota") or {}) + (["", f"Reservations: {reserved['text']}"] if reserved else [])
    plugins = document.get("plugins") or []
    return out + (["", "Plugins the stack needs:", *(f"    warning: {p['text']}" for p in plugins)] if plugins else [])


def _budget_lines(budget: dict[str, Any] | None) -> list[str]:
    """`Budget (gcp-training-jobs:budget): worst case $2,654.70 of the $2,000.00 monthly budget`, and its alerts."""
    if not budget:
        return []
    alerts = ", ".join(f"{t:.0%}" for t in budget["thresholds"])
    stops = "; enforce: the stack's running jobs are cancelled once the month's spend reaches it" \
        if budget["enforce"] else ""
    return ["", f"Budget ({BUDGET_KEY}): {budget['text']}" + ("" if budget["fits"] else " (refused: see below)"),
            f"    alerts at {alerts} of current spend and 100% of forecast spend{stops}"]


def _quota_lines(quota: dict[str, Any]) -> list[str]:
    """`us-east5: custom_model_training_nvidia_h100_gpus 16 (persistent resource h100-pool 16)`, a metric a line."""
    if not quota:
        return []
    out = ["", "Quotas asked (Vertex AI custom training, once `up` is done; `plan --online` checks the project's "
               "limits):"]
    for region, metrics in quota.items():
        for metric, asked in metrics.items():
            who = ", ".join(f"{name} {units}" for name, units in asked["by"].items())
            out.append(f"    {region}: {metric} {asked['units']} ({who})")
    return out


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
