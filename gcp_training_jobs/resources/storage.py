"""TrainingBuckets: the staging bucket (trainer packages) and the job-dir bucket (outputs and checkpoints).

Both are private (uniform bucket-level access, public access prevention enforced) and live next to the jobs (the stack's
region). The job-dir bucket keeps object versions: GPU VMs are restarted by Compute Engine maintenance events (the AI
Platform Training GPU guide), and a trainer that checkpoints into its job dir resumes from the last checkpoint, which an
overwrite or a bad write can no longer destroy. A bucket named in the config already exists and is used as it is:
nothing is created for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_gcp as gcp

from gcp_training_jobs.resources.args import resolve_args

TYPE = "gcp-training:index:TrainingBuckets"


@dataclass
class TrainingBucketsArgs:
    """What the buckets are and where."""

    project: pulumi.Input[str]
    """The Google Cloud project that owns created buckets."""
    location: pulumi.Input[str]
    """Location of created buckets (upper case, e.g. US-CENTRAL1: the jobs' region)."""
    labels: pulumi.Input[dict[str, str]] = field(default_factory=dict)
    """Labels on created buckets."""
    staging_bucket: str | None = None
    """An existing staging bucket's name; None: one is created."""
    job_dir_bucket: str | None = None
    """An existing job-dir bucket's name; None: one is created (versioned)."""
    staging_retention_days: int = 30
    """Created staging bucket: delete objects older than this many days (0: never)."""
    noncurrent_retention_days: int = 30
    """Created job-dir bucket: delete overwritten versions this many days after they became noncurrent (0: never)."""
    force_destroy: bool = False
    """Whether `pulumi destroy` may delete created buckets that still hold objects."""


class TrainingBuckets(pulumi.ComponentResource):
    """The two buckets a training stack uses, created or given."""

    staging_bucket: pulumi.Output[str]
    """Name of the bucket trainer packages are uploaded to."""
    job_dir_bucket: pulumi.Output[str]
    """Name of the bucket jobs write outputs and checkpoints to."""

    def __init__(self, name: str, args: TrainingBucketsArgs | None = None, opts: pulumi.ResourceOptions | None = None,
                 **kwargs: Any) -> None:
        args = resolve_args(TrainingBucketsArgs, args, kwargs)
        super().__init__(TYPE, name, None, opts)
        # The buckets this component created (none when both are given). Annotated here, not on the class: the SDK
        # resolves a component's class annotations at each registration, and `gcp.storage` would import pulumi_gcp's
        # whole storage module (~0.1 s) into a program whose buckets are all given.
        self.created: list[gcp.storage.Bucket] = []
        self.staging_bucket = self._staging(name, args)
        self.job_dir_bucket = self._job_dir(name, args)
        self._given_job_dir = args.job_dir_bucket if isinstance(args.job_dir_bucket, str) and args.job_dir_bucket \
            else None
        self.register_outputs({"stagingBucket": self.staging_bucket, "jobDirBucket": self.job_dir_bucket})

    def job_dir_uri(self, job_name: str) -> pulumi.Input[str]:
        """gs://BUCKET/jobs/NAME: where a job writes (its jobDir). Text when the bucket is given (its name is known:
        the same value, without an Output and its apply per job), else an Output of the created bucket's name."""
        if self._given_job_dir is not None:
            return _job_dir_uri(self._given_job_dir, job_name)
        return self.job_dir_bucket.apply(lambda bucket: _job_dir_uri(bucket, job_name))

    def _staging(self, name: str, args: TrainingBucketsArgs) -> pulumi.Output[str]:
        if args.staging_bucket:
            return pulumi.Output.from_input(args.staging_bucket)
        rules = []
        if args.staging_retention_days > 0:
            rules.append(gcp.storage.BucketLifecycleRuleArgs(
                action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
                condition=gcp.storage.BucketLifecycleRuleConditionArgs(age=args.staging_retention_days),
            ))
        bucket = self._bucket(f"{name}-packages", args, versioned=False, rules=rules)
        return bucket.name

    def _job_dir(self, name: str, args: TrainingBucketsArgs) -> pulumi.Output[str]:
        if args.job_dir_bucket:
            return pulumi.Output.from_input(args.job_dir_bucket)
        rules = []
        if args.noncurrent_retention_days > 0:
            rules.append(gcp.storage.BucketLifecycleRuleArgs(
                action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
                condition=gcp.storage.BucketLifecycleRuleConditionArgs(
                    days_since_noncurrent_time=args.noncurrent_retention_days,
                    with_state="ARCHIVED",
                ),
            ))
        bucket = self._bucket(f"{name}-job-dir", args, versioned=True, rules=rules)
        return bucket.name

    def _bucket(self, resource_name: str, args: TrainingBucketsArgs, *, versioned: bool,
                rules: list[gcp.storage.BucketLifecycleRuleArgs]) -> gcp.storage.Bucket:
        bucket = gcp.storage.Bucket(
            resource_name,
            project=args.project,
            location=args.location,
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            versioning=gcp.storage.BucketVersioningArgs(enabled=versioned),
            lifecycle_rules=rules or None,
            labels=args.labels or None,
            force_destroy=args.force_destroy,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.created.append(bucket)
        return bucket


def _job_dir_uri(bucket: str, job_name: str) -> str:
    return f"gs://{bucket}/jobs/{job_name}"
