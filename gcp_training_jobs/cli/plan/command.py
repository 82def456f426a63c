"""`gcp-training-jobs plan --stack NAME`: what `pulumi up` would make, offline, for a pull request.

It judges `stacks/Pulumi.NAME.yaml` first (every problem, one a line, with the guardrail breaks of the jobs that did
judge, exit 1), then runs the real
top-level `__main__.py` under Pulumi's mocks (plan/mocks.py: no engine, CLI, network or credentials), the
stack file's config set as the Pulumi CLI would pass it, and prints every resource the program
registers with the inputs a reviewer checks (plan/describe.py; plan/text.py renders it), or `--json`, with the
review of its jobs (plan/review.py). Values only Google knows (auto-named bucket suffixes, the TPU service
account, job ids) are marked as such. Exit 2: no such stack, unreadable file.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gcp_training_jobs.cli.plan.cheapest import add_to_document, choices_of
from gcp_training_jobs.cli.plan.describe import describe
from gcp_training_jobs.cli.plan.job_warnings import job_warnings, warnings_document
from gcp_training_jobs.cli.plan.mocks import (
    Recording,
    Registration,
    programs_own,
    project_root,
    pulumi_config,
    run_program,
)
from gcp_training_jobs.cli.plan.placement import placement_lines, placement_of
from gcp_training_jobs.cli.plan.review import Review, review, review_document
from gcp_training_jobs.cli.plan.text import render_text
from gcp_training_jobs.jobspec.catalog import prices
from gcp_training_jobs.jobspec.catalog.credentials import masked
from gcp_training_jobs.jobspec.core.errors import SpecError, TrainingJobsError, UnreadableError
from gcp_training_jobs.jobspec.core.names import EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE, JOB_TYPES
from gcp_training_jobs.jobspec.io.documents import read_yaml
from gcp_training_jobs.resources.settings import StackSettings, find_project_root, load_stack_file, settings_given
from gcp_training_jobs.resources.settings.guardrails import one_round
from gcp_training_jobs.resources.settings.stack_file import project_name, stack_file, stack_names, stacks_folder

#: The TrainingJob resource type's suffix, as the program registers it.
#: Display order of top-level components.
ORDER = ("ProjectServices", "TrainingBuckets", "TpuServiceAgent", "TrainerPackage", "TrainingJob")


# --- The plan as data ------------------------------------------------------------------------------------


def _short_type(typ: str) -> str:
    return typ.rsplit(":", 1)[-1]


@dataclass
class Node:
    reg: Registration
    children: list[Node] = field(default_factory=list)


def _tree(recording: Recording) -> list[Node]:
    nodes = {r.urn: Node(r) for r in recording.resources}
    roots: list[Node] = []
    for node in nodes.values():
        parent = nodes.get(node.reg.parent)
        (parent.children if parent else roots).append(node)

    def key(node: Node) -> tuple[int, str]:
        short = _short_type(node.reg.type)
        return (ORDER.index(short) if short in ORDER else len(ORDER), node.reg.name)

    def sort(level: list[Node]) -> list[Node]:
        for node in level:
            node.children = sort(node.children)
        return sorted(level, key=key)

    return sort(roots)


def _top_level_names(recording: Recording) -> Callable[[list[str]], list[str]]:
    """Dependencies (URNs) as the names of the top-level components (or resources) they belong to."""
    by_urn = recording.by_urn()

    def top(urn: str) -> str:
        reg = by_urn.get(urn)
        while reg is not None and reg.parent in by_urn:
            reg = by_urn[reg.parent]
        return reg.name if reg else urn.rsplit("::", 1)[-1]

    return lambda urns: sorted({top(u) for u in urns})


def plan_document(stack: str, file: Path, recording: Recording,
                  jobs: Mapping[str, Any] | None = None, choices: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The plan as data (what --json prints; the text form is rendered from it). `jobs`: each job as it was
    judged (JobSettings: its body and pools), by job name; `choices`: each job's cheapest placement within the
    stack's bounds (plan/cheapest.py)."""
    names = _top_level_names(recording)
    placements = {name: placement_of(job, name) for name, job in (jobs or {}).items()}
    for name, choice in (choices or {}).items():
        placements.setdefault(name, {}).update(choice.as_dict())

    def node_doc(node: Node) -> dict[str, Any]:
        reg = node.reg
        doc: dict[str, Any] = {"type": reg.type, "name": reg.name, "custom": reg.custom}
        if reg.custom:
            doc["details"] = dict(describe(reg, jobs))
            judged = (jobs or {}).get(str(reg.inputs.get("name") or reg.name)) if reg.type in JOB_TYPES else None
            if reg.type in JOB_TYPES:  # where it runs (cli.plan.placement)
                doc["details"].update(placement_lines(placements.get(str(reg.inputs.get("name") or reg.name)) or {}))
            if reg.secrets:  # a secret config key, or a credential TrainingJob made a secret where it stands
                doc["details"]["secret"] = f"{', '.join(reg.secrets)} (encrypted in state)"
            if judged is not None and (warnings := job_warnings({reg.name: judged}).get(reg.name)):
                doc["warnings"] = warnings_document(warnings)  # every warning of the one pass, once each
            doc["inputs"] = _plain({k: v for k, v in reg.inputs.items() if not k.startswith("__")})
        if reg.dependencies:
            doc["dependsOn"] = names(reg.dependencies)
        if node.children:
            doc["children"] = [node_doc(child) for child in node.children]
        return doc

    custom = sum(1 for r in recording.resources if r.custom)
    return {
        "stack": stack,
        "file": str(file),
        "resources": [node_doc(node) for node in _tree(recording)],
        "placement": placements,
        "outputs": recording.outputs,
        "summary": {"resources": len(recording.resources), "custom": custom,
                    "components": len(recording.resources) - custom},
    }


def _plain(value: Any) -> Any:
    """Inputs as JSON data: assets as their paths."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "path") and type(value).__name__.endswith("Asset"):
        return {"fileAsset": str(value.path)}
    if isinstance(getattr(value, "assets", None), dict) and type(value).__name__ == "AssetArchive":
        return {"assetArchive": {name: _plain(asset) for name, asset in value.assets.items()}}
    return value


# --- The command -----------------------------------------------------------------------------------------


class ProgramFailed(TrainingJobsError):
    """The Pulumi program raised while it ran under the mocks (its own error, named by the stack file)."""


@dataclass
class Planned:
    """One stack planned offline: its settings as judged, what the program registered, the review of its jobs
    and the plan as data (what --json prints)."""

    settings: StackSettings
    recording: Recording
    checked: Review
    document: dict[str, Any]
    siblings: str = ""
    """`organization/project/stack/`, the identity of each of the stack's jobs but its name (job_model.identity;
    the organization self-managed backends report), which finds the stack's live jobs; "" without a project name."""


def plan_stack(stack: str, path: Path, root: Path, data: Any = None) -> Planned:
    """The one pass of `plan` on one stack file: judged once, the program at `root` run under the mocks with it,
    reviewed (cost, guardrails), as data. `data`: the file already read. Raises UnreadableError (the file, a
    broken price table), SpecError (every problem of the file), ProgramFailed (the program's own error; a bug of
    this library raised while the program runs goes on as it is: main says it is one). `plan` prints it; `diff`
    compares two of them."""
    if data is None:
        data = read_yaml(path)
    settings = load_stack_file(path, data=data, root=root)
    config, secret_keys = pulumi_config(data, root)
    try:
        with settings_given(settings):  # the program takes the stack as judged above: judged once
            recording = run_program(stack, config, secret_keys, main=root / "__main__.py")
    except BaseException as error:  # a team's program may raise anything: its own error is said without a traceback,
        if not programs_own(error, root):  # a bug of this library goes on as it is (main says it is one)
            raise
        raise ProgramFailed(f"{path}: the program failed: {error}") from error
    return _reviewed(stack, path, root, settings, recording)


def judge_stack(stack: str, path: Path, root: Path) -> Planned:
    """A stack judged and reviewed from its file alone, its program not run (an empty recording): what `diff` takes
    for a stack whose inputs are the same on both sides (cli.diff.sides.same_inputs). Its jobs, their figures,
    placement, quota and warnings are its plan's by construction (the review prices and judges the settings); the
    program's other resources, and the fixed rules on them, are not read. Raises as plan_stack does, but for the
    program's own failure."""
    settings = load_stack_file(path, data=read_yaml(path), root=root)
    return _reviewed(stack, path, root, settings, Recording())


def _reviewed(stack: str, path: Path, root: Path, settings: StackSettings, recording: Recording) -> Planned:
    choices = choices_of(settings, prices.active_table())
    document = plan_document(stack, path, recording, settings.jobs, choices)
    checked = review(settings, recording.resources)
    document.update(review_document(checked))
    add_to_document(document, settings, choices)
    # what plan, plan --json and diff show: each credential as <KIND, not shown> (the recording keeps the values,
    # which the diff compares as the provider does)
    return Planned(settings, recording, checked, masked(document).value, _siblings(root, stack))


def _siblings(root: Path, stack: str) -> str:
    """The identity of the stack's jobs but their names (job_model.identity.identity_of, the project from Pulumi.yaml's
    `name`, the organization self-managed backends report); "" without a project name."""
    from gcp_training_jobs.cli.job_args import DEFAULT_ORGANIZATION
    from gcp_training_jobs.resources.job_model.identity import identity_of

    try:
        name = project_name(root)
    except UnreadableError:
        return ""
    return identity_of(DEFAULT_ORGANIZATION, name, stack, "") if name else ""


def run_plan(stack: str, stacks_dir: Path | None = None, as_json: bool = False, online: bool = False) -> int:
    """Judge, run and print the plan of one stack; the exit code (0 ok, 1 invalid, 2 unreadable). `stacks_dir`:
    where its file is (default: the project's stackConfigDir, as Pulumi looks for it)."""
    if stacks_dir is None:
        try:
            folder = stacks_folder(project_root())
            stacks_dir = folder.relative_to(Path.cwd()) if folder.is_relative_to(Path.cwd()) else folder
        except UnreadableError as error:
            print(error, file=sys.stderr)
            return EXIT_UNREADABLE
    path = stack_file(stacks_dir, stack)
    if path is None:
        stacks = stack_names(stacks_dir)
        print(f"{stacks_dir / f'Pulumi.{stack}.yaml'}: no such stack file; available stacks in {stacks_dir}: "
              f"{', '.join(stacks) or 'none'}", file=sys.stderr)
        return EXIT_UNREADABLE
    root = find_project_root(path.resolve().parent) or Path.cwd()
    try:
        planned = plan_stack(stack, path, root)
    except UnreadableError as error:  # the file; a broken price table file ($GCP_TRAINING_JOBS_PRICES_FILE, cache)
        print(error, file=sys.stderr)
        return EXIT_UNREADABLE
    except SpecError as error:  # the file's mistakes and its judged jobs' guardrail breaks, in one round
        problems, round_warnings = one_round(error, str(path))
        for said in round_warnings:
            print(said.warning(), file=sys.stderr)
        for problem in problems:
            print(problem)
        return EXIT_INVALID
    except ProgramFailed as error:
        print(error, file=sys.stderr)
        return EXIT_INVALID
    settings, checked, document = planned.settings, planned.checked, planned.document
    found = _online(settings, planned.siblings, document) if online else None
    for job_warning in dict.fromkeys(settings.warnings) if as_json else ():  # the text form has them in a section
        print(job_warning.within(file=str(path)).warning(), file=sys.stderr)  # (--json: each job's `warnings`)
    for warning in checked.warnings if as_json else ():  # the text form prints them with the cost
        print(f"warning: {warning}", file=sys.stderr)
    for plugin in (checked.plugins or []) if as_json else ():  # (the text form: in its review; --json: `plugins`)
        print(f"warning: {plugin['text']}", file=sys.stderr)
    if as_json:
        json.dump(document, sys.stdout, indent=2, default=str, sort_keys=True)
        print()
    else:
        print(render_text(document))
    # plan --online: Google's quotas
    for line in found.lines if found is not None else ():
        print(line, file=sys.stderr if as_json else sys.stdout)
    quota_problems = found.problems if found is not None else []
    if checked.problems or quota_problems:  # every guardrail a stack breaks, each naming the guardrail, job, value
        out = sys.stderr if as_json else sys.stdout
        print("", file=out)
        for problem in checked.problems:
            print(problem.within(file=str(path)), file=out)
        for line in quota_problems:
            print(f"{path}: {line}", file=out)
        return EXIT_INVALID
    return EXIT_OK


def _online(settings: StackSettings, siblings: str, document: dict[str, Any]) -> Any:
    """The quota check of `plan --online` (cli.plan.quota), and each job's placement candidates held to the quota
    free after the stack's other jobs, into the document (read before it is printed)."""
    from gcp_training_jobs.cli.plan.quota import online_review

    found = online_review(settings, siblings)
    if found.hold is not None and settings.candidates:
        choices = choices_of(settings, prices.active_table(), found.hold)
        add_to_document(document, settings, choices)  # the plan's placement section says them, quota read
    return found


__all__ = ["Planned", "ProgramFailed", "judge_stack", "plan_document", "plan_stack", "run_plan"]
