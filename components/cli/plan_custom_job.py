"""How `plan` shows a TrainingJob written as a Vertex AI CustomJobSpec (`jobs.NAME.jobSpec`): its pools with
machines, replicas and accelerators, its code, output directory and scheduling (plan.py shows trainingInput
jobs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.cli.plan_text import job_tail
from components.jobspec.translate.pools import Pool


def describe_custom_job(inputs: dict[str, Any], pools: Sequence[Pool]) -> list[tuple[str, str]]:
    """A job written as a Vertex AI CustomJobSpec: its pools (as judged, load.Judged.pools), code, output
    directory and scheduling."""
    job = inputs.get("job") or {}
    spec = job.get("jobSpec") or {}
    lines = [("backend", str(inputs.get("backend"))), ("project", str(inputs.get("project"))),
             ("region", str(job.get("region")))]
    totals: dict[str, int] = {}
    for pool in (p for p in pools if p.runs):
        kind, count, _ = pool.held
        text = f"{pool.machine_type} x{pool.replica_count}"
        if kind:
            text += f" + {count} {kind}"
            totals[kind] = totals.get(kind, 0) + pool.accelerators
        lines.append((f"pool {pool.index}", text))
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
