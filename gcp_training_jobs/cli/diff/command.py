"""`gcp-training-jobs diff --base REF`: what a change does to the stacks, job by job and stack by stack.

Both sides are planned offline through `plan`'s one pass (cli.plan.command.plan_stack): the base from git's objects
(cli.diff.sides, never checked out over the user's tree), the head from the working tree or a second ref, each
with the price table of the code running (the head's), so a price refresh never shows as a change of the jobs.
A job's figures are its plan's (`cost.jobs.NAME.atItsRate.knownUsdPerHour`, null when incomplete, and
`worstCaseUsd`), a stack's its plan's stack totals (`cost.stack`); whether a job is replaced or updated is what the
provider's diff decides on the inputs the program registers (resources.job_model.runs.changes_of). The guardrails
each side breaks are the plan's problems; one the head breaks and the base kept is the headline, and exit 1. A side
that cannot be read is exit 2, named.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gcp_training_jobs.cli.diff.persistent import compare_resources
from gcp_training_jobs.cli.diff.sides import (
    WORKTREE,
    Plans,
    Side,
    SideUnreadable,
    as_data,
    judge_side,
    plan_side,
    project_root,
    ref_side,
    same_inputs,
    worktree_side,
)
from gcp_training_jobs.cli.diff.text import render_markdown, render_text, render_unreadable
from gcp_training_jobs.cli.diff.words import added_words, words
from gcp_training_jobs.cli.plan.cheapest import cheaper_of
from gcp_training_jobs.cli.plan.command import Planned
from gcp_training_jobs.cli.plan.job_warnings import job_warnings, warnings_document
from gcp_training_jobs.jobspec.catalog.credentials import masked, masked_text
from gcp_training_jobs.jobspec.core.names import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_UNREADABLE,
    JOB_TYPES,
    NAMESPACE,
    PACKAGE_JOB_TYPE,
    PACKAGE_PROVIDER_TYPE,
)
from gcp_training_jobs.jobspec.review.guardrails import GUARDRAILS_KEY
from gcp_training_jobs.jobspec.translate.persistent import RESOURCE_TYPE
from gcp_training_jobs.resources.job_model.declared import NAME
from gcp_training_jobs.resources.job_model.inputs import spec_of
from gcp_training_jobs.resources.job_model.protection import Protection
from gcp_training_jobs.resources.job_model.runs import changes_of

#: The TrainingJob resource type's suffix, as the program registers it.
#: Digits the figures keep: $/h as plan --json gives them, USD in all to the cent.
HOURLY_DIGITS, TOTAL_DIGITS = 6, 2


def cmd_diff(args: argparse.Namespace) -> int:
    """The command: compare, print (text, --json or --markdown), and the exit code."""
    found = diff(args.base, args.head, args.stack or None, online=args.online)
    if isinstance(found, list):
        for line in found:
            print(line, file=sys.stderr)
        if args.markdown:  # the comment says so too, rather than keep the figures of an earlier push
            print(render_unreadable(found))
        return EXIT_UNREADABLE
    shown = masked(found).value  # each credential as <KIND, not shown>, in every form
    if args.json:
        json.dump(shown, sys.stdout, indent=2, sort_keys=True)
        print()
    else:
        print(masked_text(render_markdown(shown, args.program) if args.markdown else render_text(shown)))
    return exit_code(found)


def exit_code(document: Mapping[str, Any]) -> int:
    """1 when the head breaks a guardrail the base kept (or, with --online, a quota), else 0."""
    broken = any(stack["guardrails"]["broken"] or (stack.get("online") or {}).get("problems")
                 for stack in document["stacks"].values())
    return EXIT_INVALID if broken else EXIT_OK


def diff(base: str, head: str | None, stacks: list[str] | None = None, *, online: bool = False,
         cwd: Path | None = None) -> dict[str, Any] | list[str]:
    """The diff as data (what --json prints), or the lines saying why a side cannot be read."""
    try:
        root = project_root(cwd or Path.cwd())
        with ref_side(root, base) as before:
            if head is None:
                return _compare(before, worktree_side(root), stacks, online)
            with ref_side(root, head) as after:
                return _compare(before, after, stacks, online)
    except SideUnreadable as error:
        return [str(error)]


def _compare(before: Side, after: Side, wanted: list[str] | None, online: bool) -> dict[str, Any] | list[str]:
    names = sorted(set(before.stacks) | set(after.stacks))
    if wanted:
        unknown = [name for name in wanted if name not in names]
        if unknown:
            return [f"{name}: no stack file at {before.label} or {after.label}; available stacks: "
                    f"{', '.join(names) or 'none'}" for name in unknown]
        names = [name for name in names if name in wanted]
    same = same_inputs(before, after, names)  # judged once, the program not run: the same on both sides
    moved = [name for name in names if name not in same]
    old, new, once = plan_side(before, moved), plan_side(after, moved), judge_side(after, same)
    if old.errors or new.errors or once.errors:
        return old.errors + new.errors + once.errors
    old.planned.update(once.planned)
    new.planned.update(once.planned)
    return document(before, after, old, new, names, online, set(same))


def document(before: Side, after: Side, old: Plans, new: Plans, names: Iterable[str],
             online: bool = False, same: set[str] | None = None) -> dict[str, Any]:
    """The diff of two sides' plans, stack by stack, with the totals of the change: `total` sums the changed stacks
    (what the comment shows), `allStacks` each side of every stack compared, changed or not (labelled so).
    `same`: the stacks whose files are the same on both sides, judged once (`sameInputs`: their program not run)."""
    stacks = {name: {**compare_stack(old.planned.get(name), new.planned.get(name), online),
                     "sameInputs": name in (same or set())} for name in names}
    plans = [*new.planned.values(), *old.planned.values()]
    table = plans[0].document["cost"]["table"] if plans else None
    changed = {name: stack for name, stack in stacks.items() if stack["change"] != "unchanged"}
    saving = round(sum(s["cheaper"]["savingUsdPerHour"] for s in changed.values() if s.get("cheaper")), 6)
    return {
        "base": before.commit, "head": after.commit or WORKTREE,
        # whether it read Google's side (--online: the quotas, reservations and persistent resources of a changed stack)
        "online": any("online" in stack for stack in stacks.values()),
        "stacks": stacks,
        # what the changed stacks would save at their cheapest placements, where a stack has bounds that suggest one
        "total": {**_totals(changed.values()), "stacks": list(changed),
                  **({"placementSavingUsdPerHour": saving} if saving else {})},
        "allStacks": _side_sums(stacks.values()),
        "prices": table,
        "warnings": list(dict.fromkeys(w for p in plans for w in p.checked.warnings)),
    }


def compare_stack(before: Planned | None, after: Planned | None, online: bool = False) -> dict[str, Any]:
    """One stack: each job's change and figures, its totals, the guardrails each side breaks, what it asks of
    the quotas per region, and the other resources the program registers that change."""
    names = list(after.settings.jobs if after else ()) + [n for n in (before.settings.jobs if before else ())
                                                           if after is None or n not in after.settings.jobs]
    jobs = {name: compare_job(name, before, after) for name in names}
    held = compare_resources(before, after)  # priced like jobs, in the stack's totals
    rails_before, rails_after = _problems(before), _problems(after)
    kept = {_rail_key(text) for text in rails_before}
    found: dict[str, Any] = {
        "jobs": jobs,
        "before": _stack_figures(before),
        "after": _stack_figures(after),
        "guardrails": {"before": rails_before, "after": rails_after,
                       "broken": [text for text in rails_after if _rail_key(text) not in kept]},
        "quota": _quota(before, after),
        "resources": _resources(before, after),
        "persistentResources": held,
        "budget": after.document.get("budget") if after else None,  # the head's worst case against its budget
        "warnings": {name: warnings_document(found) for name, found in  # the head's, every one once
                     job_warnings(after.settings.jobs if after else {}).items()},
    }
    found.update(_deltas(found["before"], found["after"]))
    if after is not None and after.document.get("placementBounds"):  # plan/cheapest.py: the head's suggestions
        found["cheaper"] = cheaper_of(after.document)
    if before is None or after is None:
        found["change"] = "added" if before is None else "removed"
    else:
        moved = any(item["change"] != "unchanged" for item in [*jobs.values(), *held.values()]) \
            or rails_before != rails_after \
            or any(found["resources"].values())
        found["change"] = "changed" if moved else "unchanged"
    if online and after is not None and found["change"] != "unchanged":
        found["online"] = _online(after)
    return found


def compare_job(name: str, before: Planned | None, after: Planned | None) -> dict[str, Any]:
    """One job: its change as the provider's diff decides it, its figures on each side and their deltas."""
    old = _job_inputs(before, name)
    new = _job_inputs(after, name)
    found: dict[str, Any] = {"before": _figures(before, name) if old is not None else None,
                             "after": _figures(after, name) if new is not None else None}
    found.update(_deltas(found["before"], found["after"]))
    found["partLines"] = {"before": _part_lines(before, name) if old is not None else [],
                          "after": _part_lines(after, name) if new is not None else []}
    found["placement"] = {"before": _placement(before, name) if old is not None else None,
                          "after": _placement(after, name) if new is not None else None}
    if old is None:
        found.update(change="added", note="the next `up` starts it", changes=_added_words(after, name))
    elif new is None:
        found.update(change="removed", note=_removed_note(name, before, old))
    else:
        changes = changes_of(old, new)
        if changes.replaces:
            specs = spec_of(old.get("job") or {}), spec_of(new.get("job") or {})
            fields = changed_paths(*specs)
            what = [r for r in changes.replaces if r != "job"] + fields \
                + (["labels"] if changes.labels_changed else []) or ["job"]
            found.update(change="replaced", replaces=list(changes.replaces), fields=fields,
                         note=_replaced_note(name, Protection.of(old, new)),
                         changes=_words(before, after, name, what, found["placement"], specs))
        elif changes.any or old.get(TYPE_KEY) != new.get(TYPE_KEY):
            in_place = (["labels"] if changes.labels_changed else []) + list(changes.in_place)
            moved = [] if old.get(TYPE_KEY) == new.get(TYPE_KEY) else [
                f"moves to {'the provider package' if new.get(TYPE_KEY) == PACKAGE_JOB_TYPE else 'the dynamic'}'s "
                f"resource ({NAMESPACE}:jobResource), the job only read"]
            found.update(change="updated", inPlace=in_place + (["resource type"] if moved else []),
                         note="; ".join(moved + ([f"changed in place, no new run: {', '.join(in_place)}"]
                                                 if in_place else [])),
                         changes=_words(before, after, name, [], found["placement"]))
        else:
            found.update(change="unchanged")
    return found


def changed_paths(old: Any, new: Any, path: str = "") -> list[str]:
    """The paths where two jobs' specs (job_model.inputs.spec_of: what identifies a job's work) differ, in order."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [p for key in dict.fromkeys([*old, *new])
                for p in changed_paths(old.get(key), new.get(key), f"{path}.{key}" if path else str(key))]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [p for i, (a, b) in enumerate(zip(old, new, strict=True)) for p in changed_paths(a, b, f"{path}[{i}]")]
    return [] if old == new else [path or "job"]


def _replaced_note(name: str, protection: Protection) -> str:
    return "the next `up` makes a new job and cancels the running one, if it runs" + _protection(name, protection)


def _words(before: Planned | None, after: Planned | None, name: str, paths: list[str],
           placement: Mapping[str, Any], specs: tuple[Any, Any] = ({}, {})) -> list[str]:
    """What changed in the job, a line per field (cli.diff.words), from each side's facts as judged and, for the
    args, command and env, the values at the changed paths of its registered inputs."""
    if before is None or after is None:
        return []
    old, new = before.settings.jobs[name].facts, after.settings.jobs[name].facts
    return words(old, new, paths, (placement["before"] or {}, placement["after"] or {}), specs)


def _added_words(after: Planned | None, name: str) -> list[str]:
    return added_words(after.settings.jobs[name].facts, _placement(after, name)) if after is not None else []


def _placement(side: Planned | None, name: str) -> dict[str, Any] | None:
    """Where the job runs on a side (plan --json's `placement.NAME`)."""
    return side.document.get("placement", {}).get(name) if side is not None else None


def _removed_note(name: str, before: Planned | None, inputs: Mapping[str, Any]) -> str:
    job = before.settings.jobs.get(name) if before else None
    if job is not None and job.retain_on_delete:
        return "leaves the stack; retainOnDelete: a running one goes on running"
    return "the next `up` cancels it, if it runs" + _protection(name, Protection.of(inputs, None))


def _protection(name: str, protection: Protection) -> str:
    if not protection.any:
        return ""
    by = f"{NAMESPACE}:jobs.{name}.protect" if protection.by_job else f"{GUARDRAILS_KEY}.protectJobs"
    return f"; protected by {by}: `up` refuses while it is queued or running"


def _job_inputs(side: Planned | None, name: str) -> dict[str, Any] | None:
    """The job's inputs as its provider's diff takes them (the package's resource is given no `name`: it is the
    resource's, as TrainingJob sets it), its resource type under TYPE_KEY."""
    if side is None or name not in side.settings.jobs:
        return None
    for reg in side.recording.resources:
        if reg.type in JOB_TYPES and reg.name == name:
            return {NAME.wire: reg.name, **reg.inputs, TYPE_KEY: reg.type}
    return {}  # a job the program did not register (it always does): judged as changed by its figures only


#: Where _job_inputs keeps a job's resource type (no input is spelled so).
TYPE_KEY = " type"


def _figures(side: Planned | None, name: str) -> dict[str, float | None]:
    """A job's figures as plan --json gives them: $/h at its rate (null when a part has no price), worst case."""
    assert side is not None
    cost = side.document["cost"]["jobs"].get(name)
    if cost is None:
        return {"usdPerHour": None, "worstCaseUsd": None}
    rate = cost["atItsRate"]
    return {"usdPerHour": rate["knownUsdPerHour"] if rate["complete"] else None,
            "worstCaseUsd": cost["worstCaseUsd"]}


def _part_lines(side: Planned | None, name: str) -> list[str]:
    assert side is not None
    cost = side.document["cost"]["jobs"].get(name) or {}
    return [str(cost.get("text", ""))] + list(cost.get("partLines", []))


def _sum(values: Iterable[float | None], digits: int) -> float | None:
    """The sum, or None (unknown) when any value is unknown."""
    total = 0.0
    for value in values:
        if value is None:
            return None
        total += value
    return round(total, digits)


def _stack_figures(side: Planned | None) -> dict[str, float | None] | None:
    """A stack's figures as plan --json gives them (`cost.stack`: its jobs at their rates and its persistent resources
    at the most, and the worst case), never a sum of the rounded figures of its jobs."""
    if side is None:
        return None
    stack = side.document["cost"]["stack"]
    rate = stack["atJobRates"]
    return {"usdPerHour": rate["knownUsdPerHour"] if rate["complete"] else None,
            "worstCaseUsd": stack["worstCaseUsd"]}


def _deltas(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> dict[str, float | None]:
    """after - before; an absent side counts as 0, an unknown figure makes the delta unknown."""
    zero = {"usdPerHour": 0.0, "worstCaseUsd": 0.0}
    old, new = before or zero, after or zero
    return {"deltaUsdPerHour": _difference(new["usdPerHour"], old["usdPerHour"], HOURLY_DIGITS),
            "deltaWorstCaseUsd": _difference(new["worstCaseUsd"], old["worstCaseUsd"], TOTAL_DIGITS)}


def _difference(new: float | None, old: float | None, digits: int) -> float | None:
    return None if new is None or old is None else round(new - old, digits)


def _side_sums(stacks: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Each side's figures summed over `stacks` (a stack absent on a side counts nothing; unknown with any unknown)."""
    stacks = list(stacks)
    found: dict[str, Any] = {}
    for side in ("before", "after"):
        present = [s[side] for s in stacks if s[side] is not None]
        found[side] = {"usdPerHour": _sum((f["usdPerHour"] for f in present), HOURLY_DIGITS),
                       "worstCaseUsd": _sum((f["worstCaseUsd"] for f in present), TOTAL_DIGITS)}
    return found


def _totals(stacks: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The change: each side's figures summed over the changed stacks, and their deltas (unknown with any
    unknown)."""
    stacks = list(stacks)
    found = _side_sums(stacks)
    found["deltaUsdPerHour"] = _sum((s["deltaUsdPerHour"] for s in stacks), HOURLY_DIGITS)
    found["deltaWorstCaseUsd"] = _sum((s["deltaWorstCaseUsd"] for s in stacks), TOTAL_DIGITS)
    return found


def _problems(side: Planned | None) -> list[str]:
    return list(side.document["guardrails"]["problems"]) if side else []


#: The subject a guardrail problem names first: `job NAME`, `bucket NAME`, `the stack's`.
SUBJECT = re.compile(r"(?:job |bucket )?[^\s']+")


def _rail_key(text: str) -> tuple[str, str]:
    """(guardrail, subject) of a problem's text (`PATH: job NAME ...`): the same guardrail broken by the same job
    on both sides is kept broken, whatever its figures."""
    path, _, message = text.partition(": ")
    subject = SUBJECT.match(message)
    return path, subject.group(0) if subject else ""


def _quota(before: Planned | None, after: Planned | None) -> dict[str, dict[str, dict[str, int]]]:
    """What each side asks of Vertex AI's quotas, per region and metric: its plan's `quota` (plan/quota.quota_asked,
    read when the side was planned)."""
    found: dict[str, dict[str, dict[str, int]]] = {}
    for side, planned in (("before", before), ("after", after)):
        for region, metrics in (planned.document.get("quota", {}) if planned else {}).items():
            for metric, asked in metrics.items():
                found.setdefault(region, {}).setdefault(metric, {"before": 0, "after": 0})[side] = asked["units"]
    return {region: dict(sorted(metrics.items())) for region, metrics in sorted(found.items())}


#: Inputs that replace a resource when they change, by pulumi-gcp type (pulumi-gcp is bridged from Google's Terraform
#: provider): a bucket's name, location, project and enable_object_retention are ForceNew
#: (hashicorp/terraform-provider-google, google/services/storage/resource_storage_bucket.go at commit
#: 0262be693c00e5902e2190d2ae307d6112467e31, read 2026-11-26).
REPLACED_BY: dict[str, tuple[str, ...]] = {
    "gcp:storage/bucket:Bucket": ("name", "location", "project", "enableObjectRetention"),
}


def _resources(before: Planned | None, after: Planned | None) -> dict[str, list[str]]:
    """The other resources the program registers (buckets, APIs, grants, packages): added, removed, changed in
    place, and replaced (an input its provider cannot change in place: REPLACED_BY), each replaced one with why."""
    if before is None or after is None:
        return {"added": [], "removed": [], "changed": [], "replaced": []}
    old, new = _others(before), _others(after)
    changed = sorted(k for k in set(old) & set(new) if old[k] != new[k])
    replaced = {key: why for key in changed if (why := _replaced_why(old[key], new[key]))}
    return {"added": sorted(set(new) - set(old)), "removed": sorted(set(old) - set(new)),
            "changed": [key for key in changed if key not in replaced],
            "replaced": [f"{key} ({why})" for key, why in replaced.items()]}


def _replaced_why(old: tuple[str, Any], new: tuple[str, Any]) -> str:
    """`its location US-CENTRAL1 -> US-EAST4: ...` when an input its type cannot change in place moved, else ``."""
    kind, was = old
    now = new[1]
    moved = [f"{key} {was.get(key)} -> {now.get(key)}" for key in REPLACED_BY.get(kind, ())
             if was.get(key) != now.get(key)]
    if not moved:
        return ""
    held = " (with forceDestroy false, that fails while it holds objects)" if kind.endswith(":Bucket") else ""
    return f"its {', '.join(moved)}: the next `up` deletes it and makes it again{held}"


def _others(side: Planned) -> dict[str, tuple[str, Any]]:
    return {f"{reg.type.rsplit(':', 1)[-1]} {reg.name}": (reg.type, as_data({k: v for k, v in reg.inputs.items()
                                                                             if not k.startswith("__")}))
            for reg in side.recording.resources
            # (the package's stack provider: its inputs are the stack's config, whose jobs the diff reviews itself)
            if reg.custom and reg.type not in (*JOB_TYPES, RESOURCE_TYPE, PACKAGE_PROVIDER_TYPE)}


def _online(after: Planned) -> dict[str, list[str]]:
    from gcp_training_jobs.cli.plan.quota import online_review

    found = online_review(after.settings, after.siblings)
    return {"lines": found.lines, "problems": found.problems, "headings": found.headings}
