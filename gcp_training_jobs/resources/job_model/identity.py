"""The labels a training job is found by, computed in one place for everyone who looks: the provider puts them on
each job and adopts a live job carrying them; the CLI (`status`, `logs`, `spend`) finds a stack's jobs by them.

- `pulumi-resource`: whose job it is, a hash of the Pulumi organization, project, stack and resource name (the
  resource's `identity` input);
- `pulumi-spec`: what it runs, a hash of its canonical spec (inputs.spec_of; with its labels where a label change
  makes a new job, and its re-run token when one is set);
- `pulumi-stack`: which stack's it is, a hash of the Pulumi project and stack. Not part of what makes a job
  change (neither in `pulumi-spec` nor compared by diff).

Each value is the first IDENTITY_HEX hex digits of a sha256: a job made by an older release carries the same values
(tests/test_upgrade_labels.py holds them), so an upgrade finds its jobs. The label keys live in jobspec.core.names.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Container, Iterable
from typing import Any

from gcp_training_jobs.backends import get_backend
from gcp_training_jobs.jobspec.core.names import BACKENDS, RESOURCE_LABEL, SPEC_LABEL, STACK_LABEL
from gcp_training_jobs.jobspec.render.bodies import Renderable, job_labels
from gcp_training_jobs.resources.job_model.declared import RERUN
from gcp_training_jobs.resources.job_model.inputs import Inputs, canonical, spec_of

#: Hex digits of the identity label values (80 bits).
IDENTITY_HEX = 20


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:IDENTITY_HEX]


def identity_labels(identity: str, job: dict[str, Any], backend: str, parsed: Renderable | None = None,
                    rerun: str | None = None) -> dict[str, str]:
    """The labels a live job of this resource and spec is found by: `pulumi-resource` (whose job) and
    `pulumi-spec` (what it runs; with its labels on Vertex, where a label change makes a new job; with its re-run
    token when one is set, so that a fresh run never adopts the run it replaces). `parsed`: the job already parsed,
    when the caller has it."""
    spec: dict[str, Any] = {"spec": spec_of(job, parsed)}
    if backend in BACKENDS and not get_backend(backend).supports_label_update:
        spec["labels"] = canonical(job.get("labels") or {})
    if rerun is not None:  # keyed by the input's name: pinned by the upgrade tests (a new key would replace jobs)
        spec[RERUN.wire] = rerun
    return {RESOURCE_LABEL: _digest(identity), SPEC_LABEL: _digest(json.dumps(spec, sort_keys=True))}


def identity_of(organization: str | None, project: str | None, stack: str | None, name: str) -> str:
    """A resource's identity, the one spelling of it: `organization/project/stack/name` (a part unknown: empty)."""
    return "/".join(str(part or "") for part in (organization, project, stack, name))


def resource_label(identity: str) -> dict[str, str]:
    """The `pulumi-resource` label of a resource identity (organization/project/stack/name), as identity_labels."""
    return {RESOURCE_LABEL: _digest(identity)}


def is_live(siblings: str, name: str, regions: Iterable[str], live_in: Callable[[str], Container[str]]) -> bool:
    """Whether the stack's job `name` (its identity: `siblings`, the stack's, then the name) runs already: its
    `pulumi-resource` label among the live jobs of one of `regions` (`live_in`: a region's live jobs' labels, as
    backends.quotas.Held.live reads them). The quota and reservation reviews count such a job as live, not new."""
    label = resource_label(siblings + name)[RESOURCE_LABEL]
    return any(label in live_in(region) for region in regions)


def is_made(siblings: str, name: str, regions: Iterable[str], held_in: Callable[[str], Any]) -> bool:
    """Whether the stack's job `name` was made already, as Google says: a job with its `pulumi-resource` label in one
    of `regions`, live or ended (`held_in`: a region's jobs as backends.quotas.held reads them, `resources` the labels
    of every job listed there). A live one holds what it holds; an ended one (SUCCEEDED, FAILED, CANCELLED), which
    `pulumi preview` leaves as it is, holds nothing: either asks no quota or reservation of the stack's reviews."""
    return is_live(siblings, name, regions, lambda region: held_in(region).resources)


def stack_label(project: str, stack: str) -> dict[str, str]:
    """The label that finds a stack's jobs (`pulumi-stack`): a hash of the Pulumi project and stack."""
    return {STACK_LABEL: _digest(f"{project}/{stack}")}


def stack_label_of(identity: str) -> dict[str, str]:
    """The stack label of a resource identity (organization/project/stack/name); none for another form."""
    parts = identity.split("/", 3)
    return stack_label(parts[1], parts[2]) if len(parts) == 4 and parts[1] and parts[2] else {}


def labels_of(inputs: Inputs, job_id: str, parsed: Renderable | None = None) -> dict[str, str]:
    """The labels a job is created (or relabelled) with: the user's, its id's, its identity's and its stack's.
    `parsed`: the job already parsed, when the caller has it."""
    parsed = parsed if parsed is not None else inputs.parsed()
    return {**job_labels(parsed, job_id),
            **identity_labels(inputs.identity, inputs.job, inputs.backend, parsed, inputs.rerun),
            **stack_label_of(inputs.identity)}


def region_of_name(name: str | None) -> str | None:
    """The location in a Vertex AI resource name (projects/P/locations/R/...): where a job found by its labels (or
    made at a fallback) lives; None for another name (an ml v1 job's). This is the API's fact, not the job's: a job
    as the API holds it carries no region in its body, only in its name, and where it actually runs (a fallback's
    region) may differ from where it was written to run (JobFacts.region of the job as judged); it is read here,
    once, and handed to facts_of_body as the region of the job found."""
    found = re.match(r"projects/[^/]+/locations/([^/]+)/", name or "")
    return found.group(1) if found else None
