"""One pass from file to body (ARCHITECTURE.md, "Data flow"): a job is parsed, translated, judged and rendered
once where it enters, and everything downstream takes that one result (load.Judged).

Counted with cProfile, which counts calls of the functions themselves wherever they are imported from, so a
second translation or a re-judging anywhere on the path shows up. And the provider keeps no state between calls:
checks of different jobs in many threads at once each get their own job's verdict.
"""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gcp_training_jobs.jobspec import load, rules
from gcp_training_jobs.jobspec.render import bodies
from gcp_training_jobs.jobspec.translate import pools
from gcp_training_jobs.jobspec.translate import training_input as translation
from gcp_training_jobs.jobspec.vocab import custom_job, training_input
from gcp_training_jobs.resources.training_job import TrainingJobProvider
from tests.helpers import as_container, l4_spot, props, spec_props, t4_job

#: stage -> the functions that do it (each counted wherever it is called from).
STAGES: dict[str, tuple[Callable[..., Any], ...]] = {
    "parse": (training_input.parse_job, custom_job.parse_custom_job_spec),
    "translate": (translation.training_input_pools, pools.spec_pools, pools.ml_pools),
    "judge": (rules.check_job, rules.check_custom_job, rules.check_tuning_job),
    "render": (bodies.render_judged,),  # render_body, a model's, renders through it too
}


def counted(call: Callable[[], Any]) -> tuple[Any, dict[str, int]]:
    """Run `call` under cProfile; how often each stage's functions ran."""
    profile = cProfile.Profile()
    result = profile.runcall(call)
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    codes = {stage: {(f.__code__.co_filename, f.__code__.co_firstlineno, f.__name__) for f in funcs}
             for stage, funcs in STAGES.items()}
    counts = {stage: sum(stats[key][1] for key in keys if key in stats) for stage, keys in codes.items()}
    return result, counts


def test_a_training_input_on_vertex_is_read_once_by_judge_job() -> None:
    judged, counts = counted(lambda: load.judge_job(as_container(t4_job()), backend="vertex"))
    assert judged.ok and judged.body is not None
    assert counts == {"parse": 1, "translate": 1, "judge": 1, "render": 1}
    assert {p.machine_type for p in judged.pools} == {"n1-standard-8"}


def test_check_reads_each_job_once_and_create_never_judges_it_again(
        provider: TrainingJobProvider) -> None:  # noqa: F811
    for news in (props("vertex"), spec_props(l4_spot())):
        result, counts = counted(lambda news=news: provider.check({}, news))
        assert result.failures == []
        # The job judged once. A job outside a stack's plan is placed beside every live job: the region's jobs are read
        # once per run (none live at the first check), and the one this run made before is counted from what its
        # create noted (its needs as judged), never read again from its body.
        assert counts == {"parse": 1, "translate": 1, "judge": 1, "render": 1}, news["job"].keys()
        created, counts = counted(lambda inputs=dict(result.inputs): provider.create(inputs))
        assert created.outs["jobId"].startswith(news["name"].replace("-", "_"))
        # Judged by the check the engine runs before every create: parsed, translated, rendered once, never judged.
        # The second parse and translation read the job as the API answered the create (it may be a live job
        # adopted at another placement), for its costUsd and placement outputs, by the same path (facts_of_body).
        assert counts == {"parse": 2, "translate": 2, "judge": 0, "render": 1}, news["job"].keys()


def test_concurrent_checks_of_different_jobs_each_get_their_own_verdict(
        provider: TrainingJobProvider) -> None:  # noqa: F811
    """Many checks at once in threads (the engine calls the provider from several): every verdict is its own
    job's, so no state is shared between calls."""
    cases: list[tuple[dict[str, Any], str | None]] = []
    for count in range(1, 9):
        job = l4_spot(count=count, machine="g2-standard-8")  # g2-standard-8 takes exactly 1 L4
        refused = None if count == 1 else f"{count} NVIDIA_L4 on g2-standard-8"
        cases.append((spec_props(job, name=f"l4-{count}"), refused))
    ti_ok, ti_bad = props("vertex"), props("vertex")
    ti_bad["job"]["trainingInput"]["masterConfig"]["acceleratorConfig"]["count"] = "3"
    cases += [(ti_ok, None), (ti_bad, "3 NVIDIA_TESLA_T4 on n1-standard-8")]

    def verdict(news: dict[str, Any]) -> list[str]:
        return [f"{f.field}: {f.reason}" for f in provider.check({}, news).failures]

    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(5):
            results = list(pool.map(verdict, [news for news, _ in cases] * 4))
            for (news, bad), found in zip(cases * 4, results, strict=True):
                if bad is None:
                    assert found == [], (news["name"], found)
                else:
                    assert len(found) == 1 and bad in found[0], (bad, found)


def test_plan_of_the_prod_stack_reads_its_one_job_once(capsys) -> None:
    """`plan --stack prod` (one job): the stack file is judged once, the program takes that judgement, and the
    plan's job lines, cost and guardrails read the judged body."""
    from pathlib import Path

    from gcp_training_jobs.cli.plan.command import run_plan

    root = Path(__file__).resolve().parent.parent
    code, counts = counted(lambda: run_plan("prod", root / "stacks", as_json=True))
    assert code == 0, capsys.readouterr()
    assert counts == {"parse": 1, "translate": 1, "judge": 1, "render": 1}
