"""Run semantics of a TrainingJob (README, "When Google has no capacity"), pure but for the reads it is handed:
where each try runs (`fallbacks`: placement 0 is the job as written), what a finished job means for the next
`pulumi up` (kept, reported, or made again at most `retries` times), and the labels that carry a run's story on the
job itself, so that a later `up` reads it from the API and never from a state that a crash may have lost; and
what a change of the inputs does (`changes_of`: a new job, new labels, or a change in place).

- SUCCEEDED: kept. FAILED because the user's code failed: kept and reported, never made again on its own.
- FAILED for Google's reasons (capacity, preemption, internal faults): made again, at most `retries` times (default
  2; the count is on the job, label `pulumi-retry`, and starts again with a new spec, whose `pulumi-spec` differs).
  After a capacity failure before the job ran, the next try goes to the next placement (after the last: the
  first); after a preemption or an internal fault, to the same one.
- CANCELLED outside Pulumi: reported; made again only on request (a new re-run token).
- A create refused for quota (HTTP 429, transport.QuotaExceeded) made nothing: the next placement is tried at once,
  and no retry is spent. With several placements, one whose quota free, read at create, cannot hold the job is
  skipped before it is sent, the same way (training_job.quota.AtCreate), and so is one whose reservation, read at
  create, cannot give it its machines (training_job.reserved.at_create).
Labels `pulumi-placement` and `pulumi-retry` are only set when not 0, so a job without fallbacks or retries carries
exactly the labels it always did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gcp_training_jobs.backends import get_backend
from gcp_training_jobs.backends.failures import Failure, failure_of_job
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.core.names import BACKENDS, CANCELLED, FAILED, PLACEMENT_LABEL, RETRY_LABEL
from gcp_training_jobs.resources.fallbacks import alternative_job
from gcp_training_jobs.resources.job_model.declared import IN_PLACE, REPLACING, RERUN
from gcp_training_jobs.resources.job_model.inputs import Inputs, canonical, region_of, spec_of


class RetriesExhausted(TrainingJobsError):
    """A job failed for Google's reasons more often than `retries` allows making it again."""


@dataclass(frozen=True)
class Placement:
    """Where one try runs: its index (0: the job as written), its `job` data and region."""

    index: int
    job: dict[str, Any]
    region: str


def placements(job: Mapping[str, Any], fallbacks: Any, cheapest: bool = False) -> list[Placement]:
    """The job as written, then each alternative of `fallbacks` (the input; an entry that is not a mapping, or
    that cannot be put in, is left out: check reported it). `cheapest` (`placement: cheapest`): the alternatives
    alone, in order, placement i being fallbacks[i] (the job as written is not a try of its own)."""
    found = [] if cheapest and fallbacks else [Placement(0, dict(job), region_of(job))]
    start = 0 if found == [] else 1
    for index, alternative in enumerate(fallbacks if isinstance(fallbacks, list) else [], start):
        if not isinstance(alternative, Mapping):
            continue
        data, problems = alternative_job(job, alternative)
        if not problems:
            found.append(Placement(index, data, region_of(data)))
    return found


def run_labels(index: int, retry: int) -> dict[str, str]:
    """The labels of a try: its placement and retry number, each only when not 0."""
    labels = {}
    if index:
        labels[PLACEMENT_LABEL] = str(index)
    if retry:
        labels[RETRY_LABEL] = str(retry)
    return labels


def _number(labels: Mapping[str, Any], key: str) -> int:
    try:
        return max(0, int(str(labels.get(key) or 0)))
    except ValueError:
        return 0


def placement_index(resource: Mapping[str, Any]) -> int:
    return _number(resource.get("labels") or {}, PLACEMENT_LABEL)


def retry_number(resource: Mapping[str, Any]) -> int:
    return _number(resource.get("labels") or {}, RETRY_LABEL)


@dataclass(frozen=True)
class NextTry:
    """Where the next job of a resource goes and which retry it is."""

    index: int
    retry: int
    why: str = ""


def next_try(previous: Mapping[str, Any] | None, failure: Failure | None, count: int, retries: int) -> NextTry:
    """After `previous` (the resource's last job of this spec, its `failure` if it FAILED), the next try: the first
    placement when there was none or it was not Google's fault; else retry + 1, at the next placement after a
    capacity failure before it ran, at the same one otherwise. RetriesExhausted past `retries`."""
    if previous is None or failure is None or not failure.googles:
        return NextTry(0, 0)
    retry = retry_number(previous) + 1
    if retry > retries:
        raise RetriesExhausted(f"the job failed because {failure.describe()}, and it was made again {retry - 1} "
                               f"time(s) already, the most jobs.NAME.retries ({retries}) allows")
    index = placement_index(previous)
    if failure.before_it_ran:
        index = (index + 1) % max(1, count)
    return NextTry(index, retry, f"retry {retry} of {retries}: the last job failed because {failure.describe()}")


@dataclass(frozen=True)
class Decision:
    """What a `pulumi preview` says of a job whose inputs did not change: `run_again` (replace it), and a line to log
    (`level` info or warn)."""

    run_again: bool
    line: str = ""
    level: str = "info"


def decide_finished_job(name: str, resource: Mapping[str, Any] | None, state: str, retries: int) -> Decision:
    """The run semantics applied to the job as the API just answered it (`state` in the common vocabulary)."""
    if resource is None or state not in (FAILED, CANCELLED):
        return Decision(False)
    if state == CANCELLED:
        return Decision(False, f"job {name} was CANCELLED outside Pulumi: kept as it is; change "
                              f"jobs.{name}.{RERUN.wire} to run it again", "warn")
    failure = failure_of_job(dict(resource))
    if not failure.googles:
        return Decision(False, f"job {name} FAILED because {failure.describe()}: kept and not made again (change its "
                              f"spec, or jobs.{name}.{RERUN.wire}, to run it again)", "warn")
    used = retry_number(resource)
    if used >= retries:
        return Decision(False, f"job {name} FAILED because {failure.describe()}, and was made again {used} time(s), "
                              f"the most jobs.{name}.retries ({retries}) allows: kept", "warn")
    return Decision(True, f"job {name} FAILED because {failure.describe()}: it will be made again (retry {used + 1} "
                         f"of {retries})")




@dataclass(frozen=True)
class Changes:
    """What a change of a job's inputs does, as the provider's diff decides it: the inputs that make a new job
    (`replaces`), whether its labels changed, and the inputs changed in place (`in_place`)."""

    replaces: tuple[str, ...]
    labels_changed: bool
    in_place: tuple[str, ...]

    @property
    def any(self) -> bool:
        return bool(self.replaces or self.labels_changed or self.in_place)


def changes_of(olds: Mapping[str, Any], news: Mapping[str, Any]) -> Changes:
    """The provider's diff from the inputs alone (no API call): a changed spec, or an input that replaces
    (declared.REPLACING: project, backend, the re-run token), makes a new job; a label change too where the API
    cannot patch labels (Vertex). `diff`, the quota check of a job about to be made, and `gcp-training-jobs diff`
    (offline) decide with it."""
    old, new = Inputs.of(dict(olds)), Inputs.of(dict(news))
    replaces = [key for key in REPLACING if canonical(olds.get(key)) != canonical(news.get(key))]
    if spec_of(old.job) != spec_of(new.job):
        replaces.append("job")
    labels_changed = canonical(old.job.get("labels")) != canonical(new.job.get("labels"))
    if labels_changed and "job" not in replaces and new.backend in BACKENDS \
            and not get_backend(new.backend).supports_label_update:
        replaces.append("job")
    # `identity` is not compared: it labels the job at create, and a renamed stack keeps its jobs.
    others = [k for k in IN_PLACE if canonical(olds.get(k)) != canonical(news.get(k))]
    return Changes(tuple(replaces), labels_changed, tuple(others))
