"""The harness `plan` and `diff` run the Pulumi program in: the real top-level `__main__.py`, run with `runpy` under
Pulumi's mocks (no engine, CLI, network or credentials), every resource it registers recorded with its inputs,
parent and dependencies, and the stack file's config given to it as the Pulumi CLI would pass it
(`pulumi_config`). Values only Google knows (auto-named bucket suffixes, the TPU service account, job ids) come
back marked as such. Pulumi itself is imported when the program runs, not with this module.
"""

from __future__ import annotations

import json
import runpy
import sys
import sysconfig
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gcp_training_jobs.jobspec.core.errors import TrainingJobsError, UnreadableError
from gcp_training_jobs.jobspec.core.names import JOB_TYPES, NAMESPACE
from gcp_training_jobs.jobspec.io.documents import read_yaml
from gcp_training_jobs.resources.job_model.declared import CONSOLE_URL, JOB_ID, RESOURCE_NAME, STATE
from gcp_training_jobs.resources.settings import find_project_root
from gcp_training_jobs.resources.settings.stack_file import project_name

#: This library's own folder: an error raised in its code while the program runs is a bug of the library.
LIBRARY = Path(__file__).resolve().parents[2]

#: What the mocks answer for a value only Google knows (a job's id and state, an output the program exports).
AT_APPLY = "(known after apply)"
TPU_ACCOUNT_AT_APPLY = "(from projects.getConfig at apply)"


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
    elif typ == "gcp:serviceaccount/account:Account":  # the budget's stop function's account
        outputs["email"] = f"{inputs.get('accountId')}@{inputs.get('project')}.iam.gserviceaccount.com"
    elif typ == "gcp:billing/budget:Budget":  # its id (the stop function's BUDGET_ID) is Google's to give
        outputs["name"] = f"billingAccounts/{inputs.get('billingAccount')}/budgets/{AT_APPLY}"
    elif typ == "gcp:projects/iAMCustomRole:IAMCustomRole":
        outputs["name"] = f"projects/{inputs.get('project')}/roles/{inputs.get('roleId')}"
    elif typ in JOB_TYPES:
        outputs.update({JOB_ID: AT_APPLY, STATE: AT_APPLY, CONSOLE_URL: AT_APPLY, RESOURCE_NAME: AT_APPLY})
    return outputs


def _make_mocks() -> Any:
    import pulumi
    from pulumi.runtime import mocks

    class PlanMocks(pulumi.runtime.Mocks):
        def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict[str, Any]]:
            if args.typ == "gcp:pubsub/topic:Topic":  # its id is its name, as the budget and its function name it
                return f"projects/{args.inputs.get('project')}/topics/{args.name}", _mock_outputs(
                    args.typ, args.name, args.inputs)
            return f"{args.name}-id", _mock_outputs(args.typ, args.name, args.inputs)

        def call(self, args: mocks.MockCallArgs) -> tuple[dict[str, Any], list[Any]]:
            if args.token == "gcp:organizations/getProject:getProject":  # the budget filter's project number
                project = args.args.get("projectId")
                return {"projectId": project, "number": f"(the number of {project}, known after apply)"}, []
            return {}, []

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
def mocked_pulumi(stack: str, config: dict[str, str], secret_keys: list[str] | None = None,
                  project: str = NAMESPACE) -> Iterator[Any]:
    """Pulumi's mocks with a recording monitor and the given config, under the Pulumi project `project` (what
    `pulumi.get_project()` gives); the runtime restored after.

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
    mocks.set_mocks(mocks_, project=project, stack=stack, preview=True, monitor=monitor)
    runtime_config.set_all_config(config, secret_keys or [])
    try:
        yield monitor
    finally:
        runtime_settings.configure(saved_settings)
        runtime_settings.ROOT.set(saved_root)
        runtime_config.set_all_config(saved_config, list(saved_secrets))


def programs_own(error: BaseException, root: Path) -> bool:
    """Whether an error the program at `root` raised while it ran is its own failure, to say in one line: one this
    library or Pulumi raises to say what is wrong with it (a TrainingJobsError, a pulumi.RunError), or one raised
    in the program's own code or in what it called (its packages, its virtualenv's). Not an interrupt or an exit,
    and not an error raised in this library's own code (a KeyError in build_stack): a bug, to show as one."""
    import pulumi

    if not isinstance(error, Exception):  # KeyboardInterrupt, SystemExit
        return False
    if isinstance(error, TrainingJobsError | pulumi.RunError | pulumi.InputPropertyError |
                  pulumi.InputPropertiesError):
        return True  # words meant for the program's author
    for frame in reversed(traceback.extract_tb(error.__traceback__)):  # the innermost first
        where = Path(frame.filename)
        if where.is_relative_to(LIBRARY):
            return False  # raised in this library's code
        if where.is_relative_to(root):
            return True  # in the program's own code (its own packages, its virtualenv's)
    return True  # raised where neither runs (a library the program called, installed elsewhere)


def run_program(stack: str, config: dict[str, str], secret_keys: list[str] | None = None,
                main: Path | None = None) -> Recording:
    """Run the Pulumi program (default: the project's `__main__.py`) under mocks, under its project's name
    (Pulumi.yaml's `name`, as `up` runs it: the jobs' identity and the budget's stack label are `up`'s); what it
    registered. What the program raises goes on as it is (`programs_own` tells its own failure from a bug of this
    library)."""
    import pulumi
    from pulumi.runtime import settings as runtime_settings
    from pulumi.runtime.stack import run_pulumi_func
    from pulumi.runtime.sync_await import _sync_await

    program = main or project_root() / "__main__.py"
    with mocked_pulumi(stack, config, secret_keys, _project_of(program)) as monitor:
        _sync_await(run_pulumi_func(lambda: _run_path(program)))
        root = runtime_settings.get_root_resource()
        exported = dict(getattr(root, "outputs", {}) or {})
        monitor.recording.outputs = _sync_await(pulumi.Output.from_input(exported).future()) or {}
        return monitor.recording


def _project_of(program: Path) -> str:
    """The name of the project a program belongs to (its folder's Pulumi.yaml); the library's for a program outside
    any project, or with a Pulumi.yaml that names none (plan has read it already, and says what is wrong with it)."""
    try:
        return project_name(program.resolve().parent) or NAMESPACE
    except UnreadableError:
        return NAMESPACE


def project_root() -> Path:
    """The Pulumi project the plan runs: the nearest Pulumi.yaml at or above the working directory."""
    return find_project_root(Path.cwd()) or Path.cwd()


def _run_path(program: Path) -> None:
    """Run the program as Pulumi's language host runs it: its project folder first on the path, so that it imports
    the team's own packages beside it (`teamlib/`). After, the path is as it was, and the modules the program
    imported from its folder are forgotten (not this library's, which a checkout holds there too, nor an installed
    package's: a project's own virtualenv may stand in its folder, as a checkout's `venv` does), so that the other side
    of a `diff` imports its own."""
    folder = str(program.resolve().parent)
    installed = [Path(p).resolve() for p in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
                                             sys.prefix, sys.exec_prefix}]
    before = set(sys.modules)
    sys.path.insert(0, folder)
    try:
        runpy.run_path(str(program), run_name="__main__")
    finally:
        sys.path.remove(folder)  # the first one: the one put there (a folder may be on the path twice)
        for name in set(sys.modules) - before:
            where = getattr(sys.modules[name], "__file__", None)
            found = Path(where).resolve() if where else None
            if found is not None and found.is_relative_to(folder) and not found.is_relative_to(LIBRARY) \
                    and not any(found.is_relative_to(place) for place in installed):
                del sys.modules[name]


# --- Config as the Pulumi CLI passes it ----------------------------------------------------------------


def pulumi_config(data: Any, root: Path | None = None) -> tuple[dict[str, str], list[str]]:
    """The stack file's config as the program would receive it: every value a string, objects as JSON,
    the project's declared defaults (Pulumi.yaml) for keys the stack leaves out, encrypted values opaque."""
    from gcp_training_jobs.resources.settings.secrets import opaque, secure_keys

    config = dict((data or {}).get("config") or {}) if isinstance(data, dict) else {}
    secret = [f"{NAMESPACE}:{key}" for key in secure_keys(config)]
    secret += [str(k) for k, v in config.items() if isinstance(v, dict) and set(v) == {"secure"}]
    for key, default in _project_defaults(root or project_root()).items():
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
