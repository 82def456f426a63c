"""Settings source: `pulumi.Config`, inside a Pulumi program (or under Pulumi's mocks)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from gcp_training_jobs.jobspec.core.env import EnvError, env_settings
from gcp_training_jobs.jobspec.core.errors import SpecError, TrainingJobsError
from gcp_training_jobs.jobspec.core.names import NAMESPACE
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.io.documents import read_yaml
from gcp_training_jobs.resources.settings.decimals import GCP_KEYS, OBJECT_KEYS, number_text, text_fields
from gcp_training_jobs.resources.settings.judge import judge
from gcp_training_jobs.resources.settings.model import StackSettings
from gcp_training_jobs.resources.settings.secrets import STAND_INS, bounds_problem, redact, secure_paths, value_at
from gcp_training_jobs.resources.settings.stack_file import stack_file, stacks_folder

#: Settings already judged from the same stack file by the caller that runs the program (`plan`), so the stack
#: is judged once. A context variable: local to the thread and task that set it, never shared between calls.
_GIVEN: ContextVar[StackSettings | None] = ContextVar("gcp_training_jobs_judged_settings", default=None)


@contextmanager
def settings_given(settings: StackSettings) -> Iterator[None]:
    """Within the block, `from_pulumi_config` returns `settings` (judged by the caller from the stack file whose
    config the program is given) instead of judging the stack a second time."""
    token = _GIVEN.set(settings)
    try:
        yield
    finally:
        _GIVEN.reset(token)


def given_by_caller() -> bool:
    """Whether the program runs inside `settings_given` (under `plan`, which reviews the stack itself)."""
    return _GIVEN.get() is not None


def from_pulumi_config(root: Path | None = None) -> StackSettings:
    """The stack's settings from `pulumi.Config` (inside a Pulumi program or under Pulumi's mocks), or those a
    caller judged already (`settings_given`).

    Invalid config raises pulumi.RunError, which Pulumi prints as a clean error (no traceback), one
    problem a line. `root`: the project root (default: the current directory, where Pulumi runs programs).
    """
    given = _GIVEN.get()
    if given is not None:
        return given
    import pulumi

    try:  # the process's GCP_TRAINING_JOBS_* variables, judged before the stack's config
        env_settings()
    except EnvError as error:
        lines = [str(p) for p in error.problems]
        raise pulumi.RunError(f"invalid environment ({len(lines)} problem{'s' if len(lines) != 1 else ''}):\n"
                              + "\n".join(lines)) from None
    root = root or Path.cwd()
    config: dict[str, Any] = {}
    secret_keys: set[str] = set()
    unreadable: list[Problem] = []
    for full_key, (raw, secret) in program_config().items():
        namespace, _, key = full_key.partition(":")
        if secret:  # a secret anywhere inside (--secret --path) counts
            secret_keys.add(STAND_INS.get(full_key, key))
        try:
            config[full_key] = _decode(key, raw) if namespace == NAMESPACE else raw
        except ValueError as error:
            unreadable.append(Problem(full_key, str(error)))
    paths = _secure_paths_in_file(root, pulumi.get_stack()) if secret_keys else frozenset()
    try:
        if unreadable:
            raise SpecError(unreadable)
        return judge(config, root, secret_keys=frozenset(secret_keys), secret_paths=paths)
    except SpecError as error:
        stack_file = _stack_file(root, pulumi.get_stack())
        hidden = _secret_values(config, paths, secret_keys)  # decrypted here: never in a message
        lines = [redact(str(p.within(file=stack_file)), hidden) for p in error.problems]
        failure = pulumi.RunError(f"invalid configuration of stack {pulumi.get_stack()!r} "
                                  f"({len(lines)} problem{'s' if len(lines) != 1 else ''}):\n" + "\n".join(lines))
        failure.problems = error.problems  # type: ignore[attr-defined]
        raise failure from None


def program_config() -> dict[str, tuple[str, bool]]:
    """The config the settings judge reads, as a Pulumi program is given it: `namespace:key` -> (its text, whether
    it is secret), the library's keys and gcp:project / gcp:region, those set only."""
    import pulumi
    from pulumi.runtime import config as runtime_config

    found: dict[str, tuple[str, bool]] = {}
    for full_key in sorted(_config_keys(runtime_config)):
        namespace, _, key = full_key.partition(":")
        if namespace != NAMESPACE and full_key not in GCP_KEYS:
            continue
        raw = pulumi.Config(namespace).get(key)
        if raw is not None:
            found[full_key] = (raw, runtime_config.is_config_secret(full_key))
    return found


def settings_of_config(config: Mapping[str, Any], root: Path) -> StackSettings:
    """The stack's settings from the config the engine hands a provider's `configure` (`namespace:key` -> value,
    object values as JSON text, decrypted), judged as `from_pulumi_config` judges the program's: the same keys, the
    same decoding, the same judge. SpecError with every problem (the program reports them; a provider only reads)."""
    flat: dict[str, Any] = {}
    problems: list[Problem] = []
    for full_key, raw in sorted(config.items()):
        namespace, _, key = str(full_key).partition(":")
        if (namespace != NAMESPACE and full_key not in GCP_KEYS) or raw is None:
            continue
        try:
            flat[full_key] = _decode(key, raw if isinstance(raw, str) else json.dumps(raw)) \
                if namespace == NAMESPACE else raw
        except ValueError as error:
            problems.append(Problem(full_key, str(error)))
    if problems:
        raise SpecError(problems)
    return judge(flat, root, secret_keys=frozenset(STAND_INS.get(k, k.partition(":")[2]) for k in flat))


def _secure_paths_in_file(root: Path, stack: str) -> frozenset[str]:
    """Where the stack file holds encrypted values (the program is given them decrypted, and Pulumi says only which
    whole keys hold one); none when the file cannot be read (its problems are reported elsewhere)."""
    try:
        found = stack_file(stacks_folder(root), stack)
        data = read_yaml(found) if found is not None else None
    except (TrainingJobsError, OSError):
        return frozenset()
    config = data.get("config") if isinstance(data, dict) else None
    return secure_paths(config) if isinstance(config, dict) else frozenset()


def _secret_values(config: dict[str, Any], paths: frozenset[str], secret_keys: set[str]) -> frozenset[str]:
    """The decrypted text of every secret value: at `paths` when the stack file said where; a secret key's whole
    value when it is text."""
    found: set[str] = set()
    for path in paths:
        key, _, rest = path.partition(".")
        value = value_at(config.get(f"{NAMESPACE}:{key}"), rest)
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            found.add(str(value))
    for key in secret_keys:
        whole = config.get(f"{NAMESPACE}:{key}", config.get(f"gcp:{key}"))
        if isinstance(whole, str):
            found.add(whole)
    return frozenset(found)


def _config_keys(runtime_config: Any) -> set[str]:
    """Every config key the program was given (Pulumi passes them all; there is no public listing)."""
    keys = set(runtime_config.CONFIG.get())
    keys |= set(runtime_config.get_config_env())
    return keys


def _stack_file(root: Path, stack: str) -> str | None:
    """The stack file's path relative to the root, for messages (in the project's stackConfigDir)."""
    try:
        found = stack_file(stacks_folder(root), stack)
    except TrainingJobsError:
        return None  # a message's detail: the program reports an unreadable Pulumi.yaml elsewhere
    if found is None:
        return None
    return str(found.relative_to(root)) if found.is_relative_to(root) else str(found)


def _decode(key: str, raw: str) -> Any:
    """Pulumi passes object values as JSON text; numbers in text fields (1.12) come back as text. ValueError
    for a value past the bounds on what is read (secrets.bounds_problem)."""
    if raw == "":
        return None  # Pulumi.yaml declares optional strings with the default "" ("not set")
    if key not in OBJECT_KEYS:
        return raw
    try:
        value = json.loads(raw)
    except RecursionError:
        raise ValueError("nested too deeply to be read; allowed: at most 64 levels") from None
    except ValueError:
        return raw  # not JSON: the model says what is expected
    problem = bounds_problem(value)
    if problem is not None:
        raise ValueError(problem)
    for where, container, name in text_fields(value, key):
        item = container[name]
        if isinstance(item, float):
            container[name] = number_text(item)
        elif isinstance(item, int) and not isinstance(item, bool) and where.endswith("Version"):
            container[name] = str(item)
    return value
