"""The fixed rules on a stack's Pulumi resources (no stack can turn them off): buckets private, IAM additive
members only. Judged on a resource's type and inputs as the engine registers them, by `plan` (its program's
registrations) and by the policy pack (the resources the engine hands over): one implementation, the
provider-independent half of the fixed rules (the job half, no end-of-life accelerators, is
jobspec.review.guardrails')."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gcp_training_jobs.jobspec.core.problems import Problem

#: The fixed rules, by the name plan and the policy pack report.
RULE_PRIVATE_BUCKETS = "private-buckets"
RULE_ADDITIVE_IAM = "additive-iam-only"
BUCKET_TYPE = "gcp:storage/bucket:Bucket"


def is_authoritative_iam(type_: str) -> bool:
    """IAMBinding / IAMPolicy resources of any gcp module own a whole role or policy (not additive)."""
    return type_.startswith("gcp:") and type_.rsplit(":", 1)[-1].endswith(("IAMBinding", "IAMPolicy"))


def resource_problems(type_: str, name: str, inputs: Mapping[str, Any]) -> list[Problem]:
    """Fixed rules on a Pulumi resource's inputs: buckets private, IAM additive members only."""
    problems: list[Problem] = []
    if type_ == BUCKET_TYPE:
        uniform = inputs.get("uniformBucketLevelAccess")
        if uniform is not True:
            problems.append(Problem(RULE_PRIVATE_BUCKETS, f"bucket {name} has uniformBucketLevelAccess "
                                    f"{_value(uniform)}; allowed: true"))
        prevention = inputs.get("publicAccessPrevention")
        if prevention != "enforced":
            problems.append(Problem(RULE_PRIVATE_BUCKETS, f"bucket {name} has publicAccessPrevention "
                                    f"{_value(prevention)}; allowed: enforced"))
    if is_authoritative_iam(type_):
        kind = type_.rsplit(":", 1)[-1]
        problems.append(Problem(RULE_ADDITIVE_IAM, f"{name} is a {kind} ({type_}), which owns a whole role or "
                                "policy and removes grants made elsewhere; allowed: additive IAMMember resources"))
    return problems


def _value(value: Any) -> str:
    return "unset" if value is None else str(value).lower() if isinstance(value, bool) else repr(value)
