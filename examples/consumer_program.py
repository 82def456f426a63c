"""A Pulumi program of another repository that uses this library as an installed package.

Run under Pulumi's mocks, it prints each registered resource (`python consumer_program.py`); in a real
project the same body is the program's `__main__.py`, without the mocks block.
"""

from __future__ import annotations

import json

import pulumi

registered: list[dict[str, object]] = []


class Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        registered.append({"type": args.typ, "name": args.name})
        return f"{args.name}-id", {**args.inputs, "name": args.inputs.get("name", args.name)}

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list[tuple[str, str]] | None]:
        return {}, None


pulumi.runtime.set_mocks(Mocks(), project="consumer", stack="dev", preview=False)

# --- the program itself ------------------------------------------------------------------------------
from gcp_training_jobs import TrainingBuckets, TrainingBucketsArgs, TrainingJob, TrainingJobArgs  # noqa: E402

buckets = TrainingBuckets("ml", TrainingBucketsArgs(project="my-ml-project", location="US-CENTRAL1"))
job = TrainingJob("l4-trial", TrainingJobArgs(
    project="my-ml-project",
    backend="vertex",
    job={
        "labels": {"team": "ml-platform"},
        "trainingInput": {
            "scaleTier": "CUSTOM",
            "masterType": "n1-standard-8",
            "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 1},
                             "imageUri": "us-docker.pkg.dev/my-ml-project/trainers/resnet:1.0"},
            "region": "us-central1",
            "jobDir": buckets.job_dir_uri("l4-trial"),
        },
    },
))
pulumi.export("jobDirBucket", buckets.job_dir_bucket)
# ----------------------------------------------------------------------------------------------------

from pulumi.runtime.sync_await import _sync_await  # noqa: E402

_sync_await(buckets.job_dir_bucket.future())
_sync_await(job.urn.future())
print(json.dumps(sorted(registered, key=lambda r: (str(r["type"]), str(r["name"])))))
