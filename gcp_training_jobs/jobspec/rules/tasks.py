"""What the rules share: how complete a job must be (Options), and the job seen as its task roles."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.core.env import env_settings
from gcp_training_jobs.jobspec.core.names import VERTEX
from gcp_training_jobs.jobspec.core.problems import Problem
from gcp_training_jobs.jobspec.translate.pools import TI, scale_tier
from gcp_training_jobs.jobspec.vocab.training_input import Job, Task, TrainingInput


@dataclass(frozen=True)
class Options:
    """How complete a job must be.

    `partial`: a gcloud config.yaml, whose region, runtime version, module and package gcloud fills from
    its flags at submit time: values present are judged, absent ones are not required.
    `package_supplied`: a stack job whose trainer package is built by the stack (packageUris come later).
    """

    partial: bool = False
    package_supplied: bool = False
    backend: str | None = None
    """The backend the job is judged for: "vertex" judges hardware, regions and containers by Vertex AI's
    catalog (and translates a trainingInput first); None or "ai-platform" by AI Platform Training's."""
    today: date | None = None
    """The day date rules judge against (end of support, end of availability); None: `today()`."""

    @property
    def vertex(self) -> bool:
        return self.backend == VERTEX


def support_ended(accelerator: str | None, today: date) -> date | None:
    """The end-of-support date of an accelerator if it has passed by `today` (catalog.GPU_END_OF_SUPPORT), else
    None: the one test of "past its end of support" for the rules and the guardrails' fixed rule."""
    ended = catalog.GPU_END_OF_SUPPORT.get(accelerator or "")
    return ended if ended is not None and today >= ended else None


def in_support(accelerators: Iterable[str], today: date) -> list[str]:
    """The accelerators not past their end of support by `today`, in their order: what an `allowed:` list of a
    Vertex AI job offers (a GPU past its end is refused there, so never offered)."""
    return [a for a in accelerators if support_ended(a, today) is None]


def today(opts: Options | None = None) -> date:
    """The day date rules judge against: Options.today, else $GCP_TRAINING_JOBS_TODAY (YYYY-MM-DD), else the
    system's date. A malformed variable is an EnvError (a SpecError) naming it (never silently ignored)."""
    if opts is not None and opts.today is not None:
        return opts.today
    configured = env_settings().today
    return configured if configured is not None else date.today()


def tasks(ti: TrainingInput) -> tuple[Task, ...]:
    """The four roles as written (TrainingInput.tasks: computed once per model, which every rule asks)."""
    return ti.tasks


def uses_tpu(ti: TrainingInput) -> bool:
    """BASIC_TPU, or a CUSTOM cluster with a cloud_tpu worker."""
    return scale_tier(ti) == "BASIC_TPU" or ti.worker_type == catalog.CLOUD_TPU


def gpus_used(ti: TrainingInput) -> list[tuple[str, str]]:
    """(field path, GPU type) for every GPU the job asks for: attached, built into a type, or a tier's."""
    found: list[tuple[str, str]] = []
    tier = scale_tier(ti)
    if tier in catalog.TIER_GPUS:
        found.append((f"{TI}.scaleTier", catalog.TIER_GPUS[tier][0]))
    if tier != "CUSTOM":
        return found
    for task in tasks(ti):
        if not task.runs:
            continue
        builtin = catalog.LEGACY_GPUS.get(task.machine_type or "")
        if builtin:
            found.append((task.type_path, builtin[0]))
        acc = task.accelerator
        if task.is_compute_engine and acc and acc.type in catalog.GPU_TYPES:
            found.append((f"{task.config_path}.acceleratorConfig.type", acc.type))
    return found


Rule = Callable[[Job, Options], Iterator[Problem]]
