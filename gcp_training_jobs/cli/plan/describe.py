"""What `plan` says of each resource the program registered: the inputs a reviewer checks, as (key, text) lines
(the `details` of the plan document). A TrainingJob is shown from the job as the stack judged it (its body and
pools), in either vocabulary: `trainingInput` (its tasks, runtime or image, package and module) or a Vertex AI
CustomJobSpec (`jobSpec`: its pools, their code, the output directory); every job ends with its scheduling, labels
and whether `up` waits for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gcp_training_jobs.cli.plan.mocks import Registration
from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.names import JOB_TYPES, PACKAGE_PROVIDER_TYPE, STACK_CONFIG_INPUT, TUNING_JOB
from gcp_training_jobs.jobspec.io.vocabulary import is_spec, runs_spec, written_region
from gcp_training_jobs.jobspec.translate.facts import JobFacts, facts_of_body
from gcp_training_jobs.jobspec.translate.pools import VERTEX_SPEC_KEYS
from gcp_training_jobs.resources.job_model.declared import WAIT, WAIT_TIMEOUT


def _yes(value: Any) -> str:
    return "true" if value else "false"


def _labels_text(value: Any) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted((value or {}).items())) or "none"


def _job_tail(scheduling: dict[str, Any] | None, job: dict[str, Any], inputs: dict[str, Any]) -> list[tuple[str, str]]:
    """scheduling, labels and waitForCompletion: the last lines of every job's description."""
    lines: list[tuple[str, str]] = []
    if scheduling:
        lines.append(("scheduling", ", ".join(f"{k}={v}" for k, v in sorted(scheduling.items()))))
    lines.append(("labels", _labels_text(job.get("labels"))))
    wait = inputs.get(WAIT.wire)
    timeout = inputs.get(WAIT_TIMEOUT.wire)
    lines.append((WAIT.wire, _yes(wait) + (f" (at most {timeout:g} s)" if wait and timeout else "")))
    return lines


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
        ("uniformBucketLevelAccess", _yes(inputs.get("uniformBucketLevelAccess"))),
        ("publicAccessPrevention", str(inputs.get("publicAccessPrevention"))),
        ("versioning", "enabled" if versioning else "disabled"),
        ("lifecycle", "; ".join(rules) or "none"),
        ("forceDestroy", _yes(inputs.get("forceDestroy"))),
        ("labels", _labels_text(inputs.get("labels"))),
    ]


def _describe_object(inputs: dict[str, Any]) -> list[tuple[str, str]]:
    source = inputs.get("source")
    assets = getattr(source, "assets", None)
    if isinstance(assets, dict):  # an archive of named files (the budget's stop function)
        files = ", ".join(f"{name} ({getattr(asset, 'path', asset)})" for name, asset in assets.items())
        return [("bucket", str(inputs.get("bucket"))), ("name", str(inputs.get("name"))), ("source", f"zip of {files}")]
    path = getattr(source, "path", None) or str(source)
    size = ""
    file = Path(path)  # relative to the working directory, as Pulumi reads file assets
    if file.is_file():
        size = f" ({file.stat().st_size:,} bytes)"
    return [("bucket", str(inputs.get("bucket"))), ("name", str(inputs.get("name"))),
            ("source", f"{path}{size}"), ("contentType", str(inputs.get("contentType")))]


def _accelerator_line(facts: JobFacts) -> list[tuple[str, str]]:
    """`accelerators: 32 NVIDIA_A100_80GB`: what the job holds at once (JobFacts.accelerator_totals, the one sum),
    after a tuning job's trials at once (`holds: 4 trials at once, each ...`, JobFacts.machines_text, as status
    says)."""
    totals = facts.accelerator_totals
    held = [("holds", facts.machines_text())] if facts.parallel_runs > 1 else []
    return held + ([("accelerators", ", ".join(f"{n} {t}" for t, n in totals.items()))] if totals else [])


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
        lines.append((role, facts.pool_text(pool) + (f" ({pool.note})" if pool.note else "")))
    return lines + _accelerator_line(facts)


def _describe_job(inputs: dict[str, Any], judged: Any) -> list[tuple[str, str]]:
    """A TrainingJob's lines; `judged`: the job as the stack judged it (JobSettings: its body and facts), None
    for a job the program made itself (its facts then read from its inputs, as a body's: one that does not read
    has no pools, and validate names what is wrong with it)."""
    job = inputs.get("job") or {}
    body: Mapping[str, Any] | None = judged.body if judged is not None else None
    tuning = job.get(TUNING_JOB)
    as_body: Mapping[str, Any] = tuning if isinstance(tuning, Mapping) else job  # a tuning job's: its config
    facts: JobFacts = judged.facts if judged is not None else facts_of_body(as_body, region=written_region(job) or None)
    if is_spec(job):
        return _describe_custom_job(inputs, facts)
    ti = job.get("trainingInput") or {}
    master = ti.get("masterConfig") or {}
    backend = str(inputs.get("backend"))
    lines = [("backend", backend), ("project", str(inputs.get("project"))), ("region", str(facts.region))]
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
    return lines + _job_tail(ti.get("scheduling"), job, inputs)


def _vertex_executor(body: Mapping[str, Any]) -> str:
    """The prebuilt container Vertex AI runs the package in (pool 0 of the body the job was judged with)."""
    spec: Mapping[str, Any] = next((body[key] for key in VERTEX_SPEC_KEYS if isinstance(body.get(key), Mapping)), {})
    pools_ = spec.get("workerPoolSpecs") or [{}]
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
        return [("service", str(inputs.get("service"))), ("disableOnDestroy", _yes(inputs.get("disableOnDestroy"))),
                ("disableDependentServices", _yes(inputs.get("disableDependentServices")))]
    if reg.type == "gcp:projects/iAMMember:IAMMember":
        return [("project", str(inputs.get("project"))), ("role", str(inputs.get("role"))),
                ("member", str(inputs.get("member")))]
    if reg.type.endswith("training:TpuServiceAccount"):
        return [("project", str(inputs.get("project"))),
                ("lookup", "projects.getConfig -> config.tpuServiceAccount (at apply)")]
    if reg.type in JOB_TYPES:
        return _describe_job(inputs, (jobs or {}).get(str(inputs.get("name") or reg.name)))
    if reg.type == PACKAGE_PROVIDER_TYPE:  # its inputs are the stack's config, which the plan reviews itself
        given = inputs.get(STACK_CONFIG_INPUT)
        return [("configured with", f"the stack's config ({len(given) if isinstance(given, dict) else 0} keys)")]
    return [(k, json.dumps(v, default=str)) for k, v in sorted(inputs.items()) if not k.startswith("__")]


def _describe_custom_job(inputs: dict[str, Any], facts: JobFacts) -> list[tuple[str, str]]:
    """A job written as a Vertex AI CustomJobSpec: its pools (as judged, load.Judged.facts), code, output
    directory and scheduling."""
    job = inputs.get("job") or {}
    spec = runs_spec(job)
    lines = [("backend", str(inputs.get("backend"))), ("project", str(inputs.get("project"))),
             ("region", str(facts.region))]
    if TUNING_JOB in job:  # a tuning job's pools are each trial's
        lines.append(("trials", f"{facts.trials}, {facts.parallel_runs} at once"))
    lines += [(f"pool {pool.index}", facts.pool_text(pool)) for pool in facts.running]
    lines += _accelerator_line(facts)
    for i, pool in enumerate(spec.get("workerPoolSpecs") or []):
        box, package = pool.get("containerSpec") or {}, pool.get("pythonPackageSpec") or {}
        if box.get("imageUri"):
            lines.append((f"pool {i} image", box["imageUri"]))
        if package:
            lines.append((f"pool {i} package", ", ".join(package.get("packageUris") or []) or "none"))
            lines.append((f"pool {i} module", f"{package.get('pythonModule')} in {package.get('executorImageUri')}"))
        if (box or package).get("args"):
            lines.append((f"pool {i} args", " ".join((box or package)["args"])))
    lines.append(("outputDir", str((spec.get("baseOutputDirectory") or {}).get("outputUriPrefix"))))
    return lines + _job_tail(spec.get("scheduling"), job, inputs)
