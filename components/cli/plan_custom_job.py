"""How `plan` shows a TrainingJob written as a Vertex AI CustomJobSpec (`jobs.NAME.jobSpec`): its pools with
machines, replicas and accelerators, its code, output directory and scheduling (plan.py shows trainingInput
jobs)."""

from __future__ import annotations

from typing import Any

from components.cli.plan_text import job_tail
from components.jobspec.review.body_pools import pools


def describe_custom_job(inputs: dict[str, Any]) -> list[tuple[str, str]]:
    """A job written as a Vertex AI CustomJobSpec: its pools, code, output directory and scheduling."""
    job = inputs.get("job") or {}
    spec = job.get("jobSpec") or {}
    lines = [("backend", str(inputs.get("backend"))), ("project", str(inputs.get("project"))),
             ("region", str(job.get("region")))]
    totals: dict[str, int] = {}
    for pool in pools({"jobSpec": spec}):
        text = f"{pool.machine_type} x{pool.replicas}"
        if pool.accelerator_type:
            text += f" + {pool.accelerator_count} {pool.accelerator_type}"
            totals[pool.accelerator_type] = totals.get(pool.accelerator_type, 0) + pool.accelerators
        lines.append(("pool " + pool.path.rsplit("[", 1)[-1].rstrip("]"), text))  # jobSpec.workerPoolSpecs[N]
    if totals:
        lines.append(("accelerators", ", ".join(f"{n} {t}" for t, n in sorted(totals.items()))))
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
    return lines + job_tail(spec.get("scheduling"), job, inputs)
