"""What the stack asks, in the provider's process: the stack's jobs as the quotas and the reservations see them, job by
job in the stack's order, from the stack's config, never from a job's inputs.

The engine hands a dynamic provider's `configure` the stack's config (pulumi/dynamic/__main__.py: the `Configure`
request's args, decrypted, given to each provider it unpickles); provider_base keeps the library's keys of it
(`stack_config`), and here they are judged by the settings judge the program uses
(settings.pulumi_config.settings_of_config) into the one list `plan`, `plan --online` and the diff read
(settings.quota.askers, settings.quota.reservation_takers). Judged once per run and config
(gcp_training_jobs.backends.run_cache.RUN, keyed by the config itself: another config is another stack), so each job's
state holds only its own facts, and a stack of N jobs is judged once, not N times. Where each job lands
(training_job.quota: quota_fit.fit over these askers) is computed once per run from them too.

A config that is not a stack's (a program that builds no stack), or that does not judge (the program reports its
problems itself and never registers a job then), asks nothing: each job is held alone, as a TrainingJob outside a
stack is.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from gcp_training_jobs.backends.run_cache import RUN
from gcp_training_jobs.jobspec.core.errors import TrainingJobsError
from gcp_training_jobs.jobspec.core.names import NAMESPACE
from gcp_training_jobs.jobspec.review.quota_fit import Asker
from gcp_training_jobs.jobspec.review.reservations import Taker
from gcp_training_jobs.resources import provider_log as log
from gcp_training_jobs.resources.provider_base import StackConfig
from gcp_training_jobs.resources.settings.pulumi_config import settings_of_config
from gcp_training_jobs.resources.settings.quota import askers, reservation_takers


@dataclass(frozen=True)
class StackAsks:
    """What the stack's persistent resources and jobs ask of the quotas (`askers`) and what its jobs take from the
    reservations they name (`takers`), each in the stack's order; none: no stack. `config`: the config they were
    judged from, which keys what is computed from them once per run."""

    askers: tuple[Asker, ...] = ()
    takers: tuple[Taker, ...] = ()
    config: StackConfig = ()

    def asker(self, name: str) -> Asker | None:
        return next((a for a in self.askers if a.name == name), None)


NO_STACK = StackAsks()


def asks_of(config: StackConfig) -> StackAsks:
    """The stack's asks from its config, judged once per run and config."""
    if not any(key == f"{NAMESPACE}:jobs" for key, _ in config):
        return NO_STACK
    return RUN.once(("stack asks", config), partial(_judged, config))


def _judged(config: StackConfig) -> StackAsks:
    try:
        settings = settings_of_config(dict(config), Path.cwd())
    except TrainingJobsError as error:  # the program says what is wrong: it never registers a job then
        log.debug(f"the stack's config does not judge here ({error}); each job's quota is checked alone")
        return NO_STACK
    return StackAsks(askers(settings), reservation_takers(settings), config)
