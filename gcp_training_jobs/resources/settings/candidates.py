"""Each job's placement candidates within the stack's bounds (`gcp-training-jobs:placement`, settings/placement.py):
the job's own data with the candidate's region and `scheduling.strategy` put in (jobspec.io.placement.placed),
judged by the one pass as a fallback is (settings/jobs.py), held to the guardrails and the fixed job rules, and to
the stack's caps with the job there, priced (jobspec.review.placement.candidate). The settings' judge is the caller."""

from __future__ import annotations

from typing import Any

from gcp_training_jobs.jobspec.catalog.prices import PriceTable
from gcp_training_jobs.jobspec.core.names import NAMESPACE
from gcp_training_jobs.jobspec.io.placement import placed
from gcp_training_jobs.jobspec.io.vocabulary import is_spec
from gcp_training_jobs.jobspec.review.guardrails import (
    end_of_life_problems,
    guardrail_problems,
    stack_guardrail_problems,
)
from gcp_training_jobs.jobspec.review.placement import Candidate, candidate, kept, offering
from gcp_training_jobs.resources.settings.jobs import judge_job_spec
from gcp_training_jobs.resources.settings.placement import PlacementSettings


def _data(job: Any) -> dict[str, Any]:
    """The job's settings as written (its form, trainer, region, labels): what a candidate is built from."""
    return job.model_dump(by_alias=True, exclude_none=True, mode="json")


def judge_candidates(settings: Any, table: PriceTable | None = None) -> dict[str, tuple[Candidate, ...]]:
    """Each job's candidates in the stack's bounds (a judged StackSettings; none without `placement`), each judged
    by the one pass in its region (the settings' judge of a fallback), its guardrails and the stack's caps with the
    job there, priced from `table`."""
    bounds: PlacementSettings | None = settings.placement
    if bounds is None or settings.backend != "vertex":
        return {}
    found: dict[str, tuple[Candidate, ...]] = {}
    everyone = {n: j.facts for n, j in settings.jobs.items()}
    for name, job in sorted(settings.jobs.items()):
        if kept(job.facts) is not None:
            continue
        raw = _data(job)
        labels: dict[str, Any] = dict(job.facts.labels)  # as judged (an encrypted value kept opaque)
        spec = is_spec(raw)
        listed: list[Candidate] = []
        for region in offering(job.facts, bounds.regions):
            for strategy in bounds.strategies:
                if not spec and strategy != "STANDARD":
                    continue  # a trainingInput has no scheduling strategy
                data, bad = placed(raw, region=region, strategy=strategy if spec else None)
                if bad:
                    listed.append(candidate(region, strategy, None, name, table, [p.message for p in bad]))
                    continue
                judged, problems = judge_job_spec(data, name=name, backend=settings.backend, region=region,
                                                  region_key=f"{NAMESPACE}:placement", labels=labels)
                if judged is None or problems:
                    listed.append(candidate(region, strategy, None, name, table,
                                            [str(p) for p in problems] or ["refused by the judge"]))
                    continue
                facts = judged.facts
                refused = [str(p) for p in guardrail_problems(facts, name, settings.guardrails, table)]
                refused += [str(p) for p in end_of_life_problems(facts, name)]
                refused += [str(p) for p in stack_guardrail_problems({**everyone, name: facts}, settings.guardrails,
                                                                     table, settings.resources)]
                listed.append(candidate(region, strategy, facts, name, table, refused))
        found[name] = tuple(listed)
    return found
