"""Numbers that Pulumi would change: YAML and Pulumi read an unquoted `1.10` as the number 1.1.

The offline reader keeps the text as written; these helpers find the text fields a number may be written
in (versions, label values, arguments), so both readers can put the text back or say what Pulumi would do.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.errors import UnreadableError
from gcp_training_jobs.jobspec.core.names import NAMESPACE
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.io.documents import read_yaml

#: Keys whose value is a mapping (Pulumi hands them to the program as JSON text).
OBJECT_KEYS = ("labels", "buckets", "tpuAccess", "jobs", "persistentResources")
#: Stack-file keys of other namespaces that this project reads.
GCP_KEYS = ("gcp:project", "gcp:region")


def text_fields(value: Any, key: str) -> Iterator[tuple[str, Any, Any]]:
    """(path, container, key) of the text fields of a config value that a number may be written in:
    versions, label values, arguments and environment values (of a trainingInput or a jobSpec). Pulumi reads
    unquoted 1.10 in them as the number 1.1."""
    if key == "labels" and isinstance(value, dict):
        for name in value:
            yield f"labels.{name}", value, name
    if key != "jobs" or not isinstance(value, dict):
        return
    for job_name, job in value.items():
        if not isinstance(job, dict):
            continue
        base = f"jobs.{job_name}"
        labels = job.get("labels")
        if isinstance(labels, dict):
            for name in labels:
                yield f"{base}.labels.{name}", labels, name
        yield from _job_spec_fields(f"{base}.jobSpec", job.get("jobSpec"))
        ti = job.get("trainingInput")
        if not isinstance(ti, dict):
            continue
        for name in ("runtimeVersion", "pythonVersion"):
            if name in ti:
                yield f"{base}.trainingInput.{name}", ti, name
        yield from _list_items(f"{base}.trainingInput.args", ti.get("args"))
        for role in catalog.ROLES:
            config = ti.get(f"{role}Config")
            if not isinstance(config, dict):
                continue
            if "tpuTfVersion" in config:
                yield f"{base}.trainingInput.{role}Config.tpuTfVersion", config, "tpuTfVersion"
            for name in ("containerCommand", "containerArgs"):
                yield from _list_items(f"{base}.trainingInput.{role}Config.{name}", config.get(name))


def _job_spec_fields(base: str, spec: Any) -> Iterator[tuple[str, Any, Any]]:
    """The text fields of a CustomJobSpec a number may be written in: each pool's command, args and env values
    (`workerPoolSpecs` a list, or one mapping as gcloud's example writes it)."""
    pools = spec.get("workerPoolSpecs") if isinstance(spec, dict) else None
    single = isinstance(pools, dict)
    for index, pool in enumerate([pools] if single else pools if isinstance(pools, list) else []):
        if not isinstance(pool, dict):
            continue
        at = f"{base}.workerPoolSpecs" + ("" if single else f"[{index}]")
        for kind in ("containerSpec", "pythonPackageSpec"):
            code = pool.get(kind)
            if not isinstance(code, dict):
                continue
            for name in ("command", "args"):
                yield from _list_items(f"{at}.{kind}.{name}", code.get(name))
            env = code.get("env")
            for i, variable in enumerate(env if isinstance(env, list) else []):
                if isinstance(variable, dict) and "value" in variable:
                    yield f"{at}.{kind}.env[{i}].value", variable, "value"


def _list_items(where: str, items: Any) -> Iterator[tuple[str, Any, Any]]:
    if isinstance(items, list):
        for index in range(len(items)):
            yield f"{where}[{index}]", items, index


def lossy_decimals(path: Path, config: dict[str, Any]) -> list[Problem]:
    """Unquoted decimals that Pulumi would change: its CLI reads `runtimeVersion: 1.10` as the number 1.1
    (in object values and top-level values alike, and `pulumi config set` writes 1.1 back).

    The offline reader keeps the text, so without this check `validate` would pass a stack that
    `pulumi up` runs on another version. Found by reading the file again with YAML's own number rules.
    """
    try:  # read as every file is (bounded), with YAML's own number rules
        as_pulumi_reads = read_yaml(path, numbers=True)
    except UnreadableError:  # it passed this reader a moment ago: changed since, or keys equal only as numbers
        return []
    their_config = as_pulumi_reads.get("config") if isinstance(as_pulumi_reads, dict) else None
    if not isinstance(their_config, dict):
        return []
    found: list[tuple[str, Any, Any]] = []
    for full, text in config.items():
        if str(full).startswith(f"{NAMESPACE}:") or full in GCP_KEYS:
            found.append((str(full), text, their_config.get(full)))
    for key in OBJECT_KEYS:
        full = f"{NAMESPACE}:{key}"
        theirs = {where: container[name] for where, container, name in text_fields(their_config.get(full), key)}
        found += [(f"{NAMESPACE}:{where}", container[name], theirs.get(where))
                  for where, container, name in text_fields(config.get(full), key)]
    return [Problem(where, f"{text} unquoted: Pulumi reads it as the number {number_text(number)}; write it in "
                    f"quotes: \"{text}\"")
            for where, text, number in found
            if isinstance(text, str) and isinstance(number, float) and number_text(number) != text]


def number_text(number: float) -> str:
    return str(int(number)) if math.isfinite(number) and number.is_integer() else repr(number)
