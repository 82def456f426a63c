"""`python -m components plan --stack NAME`: what `pulumi up` would make, offline, for a pull request.

It judges `stacks/Pulumi.NAME.yaml` first (every problem, one a line, exit 1), then runs the real
top-level `__main__.py` with `runpy` under Pulumi's mocks (no engine, CLI, network or credentials), the
stack file's config set as the Pulumi CLI would pass it, and prints every resource the program
registers with the inputs a reviewer checks (or `--json`). Values only Google knows (auto-named bucket
suffixes, the TPU service account, job ids) are marked as such. Exit 2: no such stack, unreadable file.
"""

from __future__ import annotations

import json
import runpy
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.cli.plan_text import job_tail, labels_text, yes
from components.cli.review import Review, review, review_document, review_lines
from components.jobspec import catalog
from components.jobspec.core.errors import SpecError, TrainingJobsError, UnreadableError
from components.jobspec.core.names import EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE, NAMESPACE
from components.jobspec.io.documents import read_yaml
from components.jobspec.translate.facts import JobFacts, facts_of_body
from components.resources.settings import OPAQUE, StackSettings, find_project_root, load_stack_file, settings_given
from components.resources.settings.stack_file import stack_file, stack_names, stacks_folder

#: The project root: the folder holding Pulumi.yaml and the program (`__main__.py`).
AT_APPLY = "(known after apply)"
TPU_ACCOUNT_AT_APPLY = "(from projects.getConfig at apply)"
#: Display order of top-level components.
ORDER = ("ProjectServices", "TrainingBuckets", "TpuServiceAgent", "TrainerPackage", "TrainingJob")


# --- Running the program under mocks ---------------------------------------------------------------


@dataclass
class Registration:
    """One resource the program registered, as the engine would have received it."""

    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    inputs: dict[str, Any]
    dependencies: list[str]
    secrets: list[str] = field(default_factory=list)
    """Inputs marked secret (their values are shown unwrapped here: they hold no decrypted data offline)."""


@dataclass
class Recording:
    """Everything one run of the program registered and exported."""

    resources: list[Registration] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)

    def of_type(self, suffix: str) -> list[Registration]:
        return [r for r in self.resources if r.type == suffix or r.type.endswith(suffix)]

    def by_urn(self) -> dict[str, Registration]:
        return {r.urn: r for r in self.resources}


def _mock_outputs(typ: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Plausible outputs: the inputs, plus what the provider would compute."""
    outputs = {k: v for k, v in inputs.items() if k != "__provider"}
    if typ == "gcp:storage/bucket:Bucket":
        outputs.setdefault("name", name)  # real names get a random suffix (Pulumi's auto-naming)
        outputs["url"] = f"gs://{outputs['name']}"
    elif typ.endswith("training:TpuServiceAccount"):
        outputs["serviceAccount"] = TPU_ACCOUNT_AT_APPLY
    elif typ.endswith("training:TrainingJob"):
        outputs.update({"jobId": AT_APPLY, "state": AT_APPLY, "consoleUrl": AT_APPLY, "resourceName": AT_APPLY})
    return outputs


def _make_mocks() -> Any:
    import pulumi
    from pulumi.runtime import mocks

    class PlanMocks(pulumi.runtime.Mocks):
        def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict[str, Any]]:
            return f"{args.name}-id", _mock_outputs(args.typ, args.name, args.inputs)

        def call(self, args: mocks.MockCallArgs) -> tuple[dict[str, Any], None]:
            return {}, None

    class RecordingMonitor(mocks.MockMonitor):
        """The mock monitor, also keeping each registration's parent and dependencies."""

        def __init__(self, mocks_: Any) -> None:
            super().__init__(mocks_)
            self.recording = Recording()
            self._lock = threading.Lock()

        def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - the gRPC method's name
            from pulumi.runtime import rpc
            from pulumi.runtime.sync_await import _sync_await

            answer = super().RegisterResource(request)
            if request.type != "pulumi:pulumi:Stack":
                inputs = _sync_await(_deserialize(rpc, request.object))
                secrets = sorted(k for k, v in inputs.items() if rpc.is_rpc_secret(v) and not k.startswith("__"))
                inputs = {k: _unwrap_secrets(rpc, v) for k, v in inputs.items()}
                with self._lock:
                    self.recording.resources.append(Registration(
                        request.type, request.name, answer.urn, request.parent, bool(request.custom),
                        inputs, list(request.dependencies), secrets))
            return answer

    mocks_ = PlanMocks()
    return mocks_, RecordingMonitor(mocks_)


async def _deserialize(rpc: Any, struct: Any) -> dict[str, Any]:
    return dict(rpc.deserialize_properties(struct))


def _unwrap_secrets(rpc: Any, value: Any) -> Any:
    value = rpc.unwrap_rpc_secret(value)
    if isinstance(value, dict):
        return {k: _unwrap_secrets(rpc, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap_secrets(rpc, v) for v in value]
    return value


@contextmanager
def mocked_pulumi(stack: str, config: dict[str, str], secret_keys: list[str] | None = None) -> Iterator[Any]:
    """Pulumi's mocks with a recording monitor and the given config; the runtime restored after.

    Yields the monitor; its `.recording` fills as the program registers resources.
    """
    from pulumi.runtime import config as runtime_config
    from pulumi.runtime import mocks
    from pulumi.runtime import settings as runtime_settings

    saved_settings = runtime_settings.SETTINGS
    saved_root = runtime_settings.ROOT.get()
    saved_config = dict(runtime_config.CONFIG.get())
    saved_secrets = set(runtime_config._SECRET_KEYS.get())
    runtime_settings.ROOT.set(None)
    mocks_, monitor = _make_mocks()
    mocks.set_mocks(mocks_, project=NAMESPACE, stack=stack, preview=True, monitor=monitor)
    runtime_config.set_all_config(config, secret_keys or [])
    try:
        yield monitor
    finally:
        runtime_settings.configure(saved_settings)
        runtime_settings.ROOT.set(saved_root)
        runtime_config.set_all_config(saved_config, list(saved_secrets))


def run_program(stack: str, config: dict[str, str], secret_keys: list[str] | None = None,
                main: Path | None = None) -> Recording:
    """Run the Pulumi program (default: the project's `__main__.py`) under mocks; what it registered."""
    import pulumi
    from pulumi.runtime import settings as runtime_settings
    from pulumi.runtime.stack import run_pulumi_func
    from pulumi.runtime.sync_await import _sync_await

    program = main or _project_root() / "__main__.py"
    with mocked_pulumi(stack, config, secret_keys) as monitor:
        _sync_await(run_pulumi_func(lambda: _run_path(program)))
        root = runtime_settings.get_root_resource()
        exported = dict(getattr(root, "outputs", {}) or {})
        monitor.recording.outputs = _sync_await(pulumi.Output.from_input(exported).future()) or {}
        return monitor.recording


def _project_root() -> Path:
    """The Pulumi project the plan runs: the nearest Pulumi.yaml at or above the working directory."""
    return find_project_root(Path.cwd()) or Path.cwd()


def _run_path(program: Path) -> None:
    runpy.run_path(str(program), run_name="__main__")


# --- Config as the Pulumi CLI passes it ----------------------------------------------------------------


def pulumi_config(data: Any, root: Path | None = None) -> tuple[dict[str, str], list[str]]:
    """The stack file's config as the program would receive it: every value a string, objects as JSON,
    the project's declared defaults (Pulumi.yaml) for keys the stack leaves out, encrypted values opaque."""
    from components.resources.settings.secrets import opaque, secure_keys

    config = dict((data or {}).get("config") or {}) if isinstance(data, dict) else {}
    secret = [f"{NAMESPACE}:{key}" for key in secure_keys(config)]
    secret += [str(k) for k, v in config.items() if isinstance(v, dict) and set(v) == {"secure"}]
    for key, default in _project_defaults(root or _project_root()).items():
        config.setdefault(key, default)
    return {str(k): _as_config_text(opaque(v)) for k, v in config.items()}, sorted(set(secret))


def _project_defaults(root: Path) -> dict[str, Any]:
    try:
        project = read_yaml(root / "Pulumi.yaml")
    except UnreadableError:
        return {}
    declared = project.get("config") if isinstance(project, dict) else None
    defaults: dict[str, Any] = {}
    for key, declaration in (declared or {}).items():
        full = key if ":" in str(key) else f"{NAMESPACE}:{key}"
        if isinstance(declaration, dict) and "default" in declaration:
            defaults[full] = declaration["default"]
        elif isinstance(declaration, dict) and "value" in declaration:
            defaults[full] = declaration["value"]
    return defaults


def _as_config_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return "" if value is None else str(value)


# --- Describing what would be made ---------------------------------------------------------------------


def _short_type(typ: str) -> str:
    return typ.rsplit(":", 1)[-1]


def _num(value: Any) -> str:
    """Pulumi hands numbers over as floats: 30.0 reads 30."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _describe_bucket(inputs: dict[str, Any], name: str) -> list[tuple[str, str]]:
    rules = []
    for rule in inputs.get("lifecycleRules") or []:
        condition = rule.get("condition") or {}
        action = (rule.get("action") or {}).get("type", "?").lower()
        if condition.get("daysSinceNoncurrentTime"):
            rules.append(f"{action} noncurrent versions after {_num(condition['daysSinceNoncurrentTime'])} days")
        elif condition.get("age"):
            rules.append(f"{action} objects older than {_num(condition['age'])} days")
        else:
            rules.append(f"{action} when {json.dumps(condition, sort_keys=True)}")
    versioning = (inputs.get("versioning") or {}).get("enabled")
    return [
        ("name", f"{inputs.get('name') or name} (+ a random suffix at apply)"),
        ("location", str(inputs.get("location"))),
        ("uniformBucketLevelAccess", yes(inputs.get("uniformBucketLevelAccess"))),
        ("publicAccessPrevention", str(inputs.get("publicAccessPrevention"))),
        ("versioning", "enabled" if versioning else "disabled"),
        ("lifecycle", "; ".join(rules) or "none"),
        ("forceDestroy", yes(inputs.get("forceDestroy"))),
        ("labels", labels_text(inputs.get("labels"))),
    ]


def _describe_object(inputs: dict[str, Any]) -> list[tuple[str, str]]:
    source = inputs.get("source")
    path = getattr(source, "path", None) or str(source)
    size = ""
    file = Path(path)  # relative to the working directory, as Pulumi reads file assets
    if file.is_file():
        size = f" ({file.stat().st_size:,} bytes)"
    return [("bucket", str(inputs.get("bucket"))), ("name", str(inputs.get("name"))),
            ("source", f"{path}{size}"), ("contentType", str(inputs.get("contentType")))]


def _task_lines(job: dict[str, Any], facts: JobFacts) -> list[tuple[str, str]]:
    """One line per task role with machines, replica count and accelerators; then the accelerators in all, read
    from the job's facts as it was judged (load.Judged.facts: on Vertex AI its translation, whose pools are the
    roles in order, catalog.ROLES; on AI Platform the machines as written)."""
    ti = job.get("trainingInput") or {}
    lines: list[tuple[str, str]] = [("scaleTier", str(ti.get("scaleTier") or catalog.DEFAULT_SCALE_TIER))]
    for pool in facts.running:
        role = str(pool.role)
        if pool.machine_type is None:
            lines.append((role, pool.note))
            continue
        text = f"{pool.machine_type} x{pool.replica_count}"
        if pool.accelerators:
            text += f" + {pool.held[1]} {pool.held[0]}"
        lines.append((role, text + (f" ({pool.note})" if pool.note else "")))
    totals = facts.accelerator_totals
    if totals:
        lines.append(("accelerators", ", ".join(f"{n} {t}" for t, n in totals.items())))
    return lines


def _describe_job(inputs: dict[str, Any], judged: Any) -> list[tuple[str, str]]:
    """A TrainingJob's lines; `judged`: the job as the stack judged it (JobSettings: its body and pools), None
    for a job the program made itself (its pools then read from its inputs, as a body's)."""
    job = inputs.get("job") or {}
    body: Mapping[str, Any] | None = judged.body if judged is not None else None
    facts = judged.facts if judged is not None else facts_of_body(job)  # one that does not read: validate says why
    if "jobSpec" in job:
        from components.cli.plan_custom_job import describe_custom_job

        return describe_custom_job(inputs, facts.pools)
    ti = job.get("trainingInput") or {}
    master = ti.get("masterConfig") or {}
    backend = str(inputs.get("backend"))
    lines = [("backend", backend), ("project", str(inputs.get("project"))), ("region", str(ti.get("region")))]
    lines += _task_lines(job, facts)
    if master.get("imageUri"):
        lines.append(("image", master["imageUri"]))
    else:
        runtime = ti.get("runtimeVersion") or "(default)"
        lines.append(("runtime", f"{runtime}, Python {ti.get('pythonVersion') or '(default)'}"))
        lines.append(("package", ", ".join(ti.get("packageUris") or []) or "none"))
        lines.append(("module", str(ti.get("pythonModule"))))
        if backend == "vertex" and body is not None:
            lines.append(("container", _vertex_executor(body)))
    if ti.get("args"):
        lines.append(("args", " ".join(ti["args"])))
    lines.append(("jobDir", str(ti.get("jobDir"))))
    return lines + job_tail(ti.get("scheduling"), job, inputs)


def _vertex_executor(body: Mapping[str, Any]) -> str:
    """The prebuilt container Vertex AI runs the package in (pool 0 of the body the job was judged with)."""
    pools_ = (body.get("jobSpec") or body.get("trialJobSpec") or {}).get("workerPoolSpecs") or [{}]
    return str(pools_[0].get("pythonPackageSpec", {}).get("executorImageUri", "?")) + " (prebuilt)"


def describe(reg: Registration, jobs: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
    """The inputs of a registration worth reading in a review, as (key, text) lines; `jobs`: each job as it was
    judged (JobSettings: its body and pools), by job name."""
    inputs = reg.inputs
    if reg.type == "gcp:storage/bucket:Bucket":
        return _describe_bucket(inputs, reg.name)
    if reg.type == "gcp:storage/bucketObject:BucketObject":
        return _describe_object(inputs)
    if reg.type == "gcp:projects/service:Service":
        return [("service", str(inputs.get("service"))), ("disableOnDestroy", yes(inputs.get("disableOnDestroy"))),
                ("disableDependentServices", yes(inputs.get("disableDependentServices")))]
    if reg.type == "gcp:projects/iAMMember:IAMMember":
        return [("project", str(inputs.get("project"))), ("role", str(inputs.get("role"))),
                ("member", str(inputs.get("member")))]
    if reg.type.endswith("training:TpuServiceAccount"):
        return [("project", str(inputs.get("project"))),
                ("lookup", "projects.getConfig -> config.tpuServiceAccount (at apply)")]
    if reg.type.endswith("training:TrainingJob"):
        return _describe_job(inputs, (jobs or {}).get(str(inputs.get("name") or reg.name)))
    return [(k, json.dumps(v, default=str)) for k, v in sorted(inputs.items()) if not k.startswith("__")]


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
                  jobs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The plan as data (what --json prints; the text form is rendered from it). `jobs`: each job as it was
    judged (JobSettings: its body and pools), by job name."""
    names = _top_level_names(recording)

    def node_doc(node: Node) -> dict[str, Any]:
        reg = node.reg
        doc: dict[str, Any] = {"type": reg.type, "name": reg.name, "custom": reg.custom}
        if reg.custom:
            doc["details"] = dict(describe(reg, jobs))
            if reg.secrets:
                doc["details"]["secret"] = f"{', '.join(reg.secrets)} (encrypted in state)"
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
    return value


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
    out += review_lines(document)
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


def plan_stack(stack: str, path: Path, root: Path, data: Any = None) -> Planned:
    """The one pass of `plan` on one stack file: judged once, the program at `root` run under the mocks with it,
    reviewed (cost, guardrails), as data. `data`: the file already read. Raises UnreadableError (the file, a
    broken price table), SpecError (every problem of the file), ProgramFailed. `plan` prints it; `diff` compares
    two of them."""
    if data is None:
        data = read_yaml(path)
    settings = load_stack_file(path, data=data, root=root)
    config, secret_keys = pulumi_config(data, root)
    try:
        with settings_given(settings):  # the program takes the stack as judged above: judged once
            recording = run_program(stack, config, secret_keys, main=root / "__main__.py")
    except Exception as error:  # noqa: BLE001 - the program's own error, shown without a traceback
        raise ProgramFailed(f"{path}: the program failed: {error}") from error
    document = plan_document(stack, path, recording, settings.jobs)
    checked = review(settings, recording.resources)
    document.update(review_document(checked))
    return Planned(settings, recording, checked, document)


def run_plan(stack: str, stacks_dir: Path | None = None, as_json: bool = False, online: bool = False) -> int:
    """Judge, run and print the plan of one stack; the exit code (0 ok, 1 invalid, 2 unreadable). `stacks_dir`:
    where its file is (default: the project's stackConfigDir, as Pulumi looks for it)."""
    if stacks_dir is None:
        try:
            folder = stacks_folder(_project_root())
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
    except SpecError as error:
        for problem in error.problems:
            print(problem.within(file=str(path)))
        return EXIT_INVALID
    except ProgramFailed as error:
        print(error, file=sys.stderr)
        return EXIT_INVALID
    settings, checked, document = planned.settings, planned.checked, planned.document
    for job_warning in settings.warnings:  # what a job's translation changed (it does not stop the plan)
        print(job_warning.within(file=str(path)).warning(), file=sys.stderr)
    for warning in checked.warnings if as_json else ():  # the text form prints them with the cost
        print(f"warning: {warning}", file=sys.stderr)
    if as_json:
        json.dump(document, sys.stdout, indent=2, default=str, sort_keys=True)
        print()
    else:
        print(render_text(document))
    quota_problems = _online_quotas(settings, as_json) if online else []  # plan --online: Google's quotas
    if checked.problems or quota_problems:  # every guardrail a stack breaks, each naming the guardrail, job, value
        out = sys.stderr if as_json else sys.stdout
        print("", file=out)
        for problem in checked.problems:
            print(problem.within(file=str(path)), file=out)
        for line in quota_problems:
            print(f"{path}: {line}", file=out)
        return EXIT_INVALID
    return EXIT_OK


def _online_quotas(settings: Any, as_json: bool) -> list[str]:
    """The quota check of `plan --online` (cli.plan_quota): its lines printed, its excesses returned."""
    from components.cli.plan_quota import online_review

    found = online_review(settings)
    for line in found.lines:
        print(line, file=sys.stderr if as_json else sys.stdout)
    return found.problems


__all__ = ["OPAQUE", "Planned", "ProgramFailed", "Recording", "Registration", "mocked_pulumi", "plan_document",
           "plan_stack", "pulumi_config", "render_text", "run_plan", "run_program"]
