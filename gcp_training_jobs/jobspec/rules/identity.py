"""Rules on what names a job: its id, its labels, URIs, network, service account, key and durations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gcp_training_jobs.jobspec.catalog.credentials import INSTEAD, credential_in, found_in
from gcp_training_jobs.jobspec.core.names import (
    DURATION_ALLOWED,
    JOB_ID,
    KMS_KEY,
    LABEL_KEY,
    LABEL_VALUE,
    MAX_LABELS,
    NETWORK,
    SERVICE_ACCOUNT,
    SYSTEM_LABELS,
    gcs_uri_problem,
    is_duration,
)
from gcp_training_jobs.jobspec.core.problems import CredentialWarning, Problem
from gcp_training_jobs.jobspec.rules.tasks import TI, Options, tasks
from gcp_training_jobs.jobspec.vocab.training_input import Job


def rule_job_id(job: Job, opts: Options) -> Iterator[Problem]:
    if job.job_id is None:
        return
    if not JOB_ID.fullmatch(job.job_id) or len(job.job_id) > 128:
        yield Problem(
            "jobId",
            f"{job.job_id!r} is not a valid job id; allowed: letters, digits and underscores, "
            "starting with a letter, at most 128 characters",
        )


def rule_labels(job: Job, opts: Options) -> Iterator[Problem]:
    labels = job.labels or {}
    most = MAX_LABELS - len(SYSTEM_LABELS)  # the project adds its own to every job
    if len(labels) > most:
        yield Problem("labels", f"{len(labels)} labels; allowed: at most {most} (a job carries at most "
                      f"{MAX_LABELS}, {len(SYSTEM_LABELS)} of them the project's own: {', '.join(SYSTEM_LABELS)})")
    for key, value in labels.items():
        found = credential_in(value) if isinstance(value, str) else None
        if found is not None:  # never echoed: a message lands in CI logs
            yield Problem(f"labels.{key}", f"the value looks like {found.named()}, so it is not shown; a label is "
                          "sent to Google in plain text (anyone who can view the job sees it, and billing exports "
                          f"carry it); allowed: a value that is no credential; for a credential, {INSTEAD}")
            continue
        if not LABEL_KEY.fullmatch(key):
            yield Problem(
                f"labels.{key}",
                f"{key!r} is not a valid label key; allowed: lowercase letters, digits, _ and -, "
                "starting with a letter, at most 63 characters",
            )
        if not LABEL_VALUE.fullmatch(value):
            yield Problem(
                f"labels.{key}",
                f"{value!r} is not a valid label value; allowed: lowercase letters, digits, _ and -, "
                "at most 63 characters",
            )


def credential_warnings(data: Any) -> list[Problem]:
    """A warning per text value of a job (args, container env, commands, a tuning trial's spec, at any depth; labels
    are refused by rule_labels) that holds what looks like a credential: the field and the kind named, never the
    value, found by the one walk (catalog.credentials.found_in, masked's). Such a value reaches Google in plain text,
    visible to anyone who can view the job."""
    return [CredentialWarning(found.path, f"holds what looks like {found.kind.named()} (not shown): it is sent to "
                              f"Google in plain text, visible to anyone who can view the job; {INSTEAD}",
                              kind=found.kind.what)
            for found in found_in(data) if "labels" not in found.keys]


def rule_uris_and_names(job: Job, opts: Options) -> Iterator[Problem]:
    """gs:// where URIs are expected; well-formed network, service account, KMS key and durations."""
    ti = job.training_input
    for i, uri in enumerate(ti.package_uris or []):
        if (problem := gcs_uri_problem(uri, needs_object=True)) is not None:
            yield Problem(f"{TI}.packageUris[{i}]", problem)
    if ti.job_dir is not None and (problem := gcs_uri_problem(ti.job_dir)) is not None:
        yield Problem(f"{TI}.jobDir", problem)
    if ti.network is not None and not NETWORK.fullmatch(ti.network):
        yield Problem(f"{TI}.network", f"{ti.network!r}; allowed: projects/PROJECT/global/networks/NAME")
    if ti.service_account is not None and not SERVICE_ACCOUNT.fullmatch(ti.service_account):
        yield Problem(f"{TI}.serviceAccount", f"{ti.service_account!r} is not a service account email")
    kms = ti.encryption_config.kms_key_name if ti.encryption_config else None
    if kms is not None and not KMS_KEY.fullmatch(kms):
        yield Problem(f"{TI}.encryptionConfig.kmsKeyName", f"{kms!r}; allowed: projects/P/locations/L/"
                      "keyRings/R/cryptoKeys/K")
    sched = ti.scheduling
    for field, value in (("maxRunningTime", sched and sched.max_running_time),
                         ("maxWaitTime", sched and sched.max_wait_time)):
        if value and not is_duration(value):
            yield Problem(f"{TI}.scheduling.{field}", f"{value[:60]!r} is not a duration; allowed: "
                          f"{DURATION_ALLOWED}")
    for task in tasks(ti) if not opts.vertex else ():  # Vertex AI's disks: rules.vertex_pools, on the pools
        disk = task.config.disk_config if task.config else None
        if disk and disk.boot_disk_size_gb is not None and not 100 <= disk.boot_disk_size_gb <= 64000:
            yield Problem(f"{task.config_path}.diskConfig.bootDiskSizeGb", f"{disk.boot_disk_size_gb}; "
                          "allowed: 100 to 64000")
        if disk and disk.boot_disk_type not in (None, "pd-ssd", "pd-standard"):
            yield Problem(f"{task.config_path}.diskConfig.bootDiskType", f"{disk.boot_disk_type!r}; "
                          "allowed: pd-ssd, pd-standard")
