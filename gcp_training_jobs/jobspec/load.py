"""One pass from data to request body: a job is parsed, translated, judged and rendered once, here, and
everything downstream (validate, render, the settings, the provider, the plan, cost, guardrails, the policy
pack) takes the one result, `Judged`.

The stages, in the order data flows (each consumes the one before and never calls back up):
parse (`vocab`: the vocabulary model) -> translate (`translate.pools`: the worker pools in one form) -> judge
(`rules`, against the catalog, on the model and its pools) -> render (`render.bodies`: the body of the job's
backend, from the same pools). What the backend cannot express, found while rendering, is a problem like any
other. Three vocabularies enter: an ml v1 Job with trainingInput (`judge_job`), a Vertex AI CustomJobSpec
(`judge_custom_job`) and a Vertex AI tuning config (`judge_tuning_job`). `judge` is the one entry point every
caller uses: it tells the vocabulary (io.vocabulary.vocabulary_of, the one detector) and refuses Vertex AI's
vocabularies on backend ai-platform, in one wording (core.problems.vertex_only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.core.names import AI_PLATFORM, BACKENDS, JOB_SPEC, TRAINING_INPUT, TUNING_JOB, VERTEX
from gcp_training_jobs.jobspec.core.problems import Problem, collapse_repeated, notices, vertex_only
from gcp_training_jobs.jobspec.io.vocabulary import vocabulary_of
from gcp_training_jobs.jobspec.render.bodies import Renderable, job_kind, job_labels, render_judged
from gcp_training_jobs.jobspec.rules import (
    Options,
    check_custom_job,
    check_job,
    check_tuning_job,
    credential_warnings,
    judge_translation,
)
from gcp_training_jobs.jobspec.translate.facts import MAX_RUNNING_TIME, JobFacts, facts_of
from gcp_training_jobs.jobspec.translate.pools import Pool, ml_pools, spec_pools
from gcp_training_jobs.jobspec.translate.training_input import training_input_pools
from gcp_training_jobs.jobspec.vocab.jobs import TuningJob, VertexJob
from gcp_training_jobs.jobspec.vocab.training_input import Job, parse_job

#: The display name / job id a body is rendered with until the job's own id is drawn (at create).
SAMPLE_ID = "job"


@dataclass(frozen=True)
class Judged:
    """A job read once: its vocabulary model, its worker pools in one form (Vertex AI's, its translation for a
    trainingInput on Vertex; on AI Platform the machines it runs as written, translate.pools.ml_pools: what cost,
    quotas, guardrails and the plan read), its problems, and the request body of its backend (None while it has
    problems). `body_for` gives the body under the job's own id and labels,
    drawn at create, without rendering again. `warnings` are what the translation changed that the user should
    know (a master a TPU job on Vertex AI leaves out), in the form of problems, which do not stop the job."""

    job: Renderable
    backend: str
    pools: tuple[Pool, ...]
    problems: tuple[Problem, ...]
    body: Mapping[str, Any] | None
    warnings: tuple[Problem, ...]
    facts: JobFacts
    """What every later stage asks of the job (translate.facts): region, strategy, timeout, runs, accelerators."""

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def kind(self) -> str:
        """What the job is created as (render.bodies.job_kind): a training job or a tuning job."""
        return self.facts.kind

    def checked(self) -> Judged:
        """The same result, or SpecError with every problem."""
        if self.problems:
            raise SpecError(self.problems)
        return self

    def body_for(self, job_id: str, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The body under the job's id (ml v1 `jobId`, Vertex AI `displayName`) and labels (default: the
        user's plus the id label, render.bodies.job_labels)."""
        if self.body is None:
            raise SpecError(self.problems)
        body = dict(self.body)
        body["jobId" if self.backend == AI_PLATFORM else "displayName"] = job_id
        body.pop("labels", None)
        chosen = dict(labels) if labels is not None else job_labels(self.job, job_id)
        if chosen:
            body["labels"] = chosen
        return body


def _finish(job: Renderable, backend: str, pools: Sequence[Pool], problems: Sequence[Problem],
            job_id: str | None, warnings: Sequence[Problem] = ()) -> Judged:
    problems, noticed = notices(collapse_repeated(list(problems)))  # what the catalog cannot know: warnings
    warnings = [*warnings, *noticed]
    body = None
    if not problems:
        try:
            body = render_judged(job, backend, job_id or job.job_id or SAMPLE_ID, pools=pools)  # ml v1: the model's own
        except SpecError as error:  # what the backend cannot express
            problems = collapse_repeated(list(error.problems))
    facts = facts_of(body, pools, backend=backend, kind=job_kind(job, backend), region=_region(job),
                     labels=job.labels)
    if isinstance(job, Job) and facts.timeout.field is not None and facts.timeout.field != MAX_RUNNING_TIME:
        # a trainingInput sent to Vertex AI: its timeout is the maxRunningTime the user wrote, named so
        facts = replace(facts, timeout=replace(facts.timeout, field=MAX_RUNNING_TIME))
    return Judged(job, backend, tuple(pools), tuple(problems), body, tuple(warnings), facts)


def _region(job: Renderable) -> str | None:
    """Where the job runs: a trainingInput's region, a Vertex job's (the URL's location, given beside its spec)."""
    return job.training_input.region if isinstance(job, Job) else job.region


#: What a label value the caller holds encrypted (`opaque`) is judged as: any valid value (Google judges the real one).
OPAQUE_STAND_IN = "secret"


def stand_ins(labels: Mapping[str, Any] | None, opaque: str | None) -> dict[str, Any] | None:
    """The labels the rules judge: each value `opaque` (one the caller holds encrypted) standing in as a valid one.
    The job keeps the labels as given."""
    if labels is None or opaque is None:
        return dict(labels) if labels is not None else None
    return {k: OPAQUE_STAND_IN if v == opaque else v for k, v in labels.items()}


def judge_job(
    data: Any, *, default_region: str | None = None, partial: bool = False, package_supplied: bool = False,
    backend: str | None = None, today: date | None = None, job_id: str | None = None, rules: bool = True,
    opaque: str | None = None,
) -> Judged:
    """An ml v1 Job (trainingInput) read once.

    `default_region` fills trainingInput.region when the file leaves it to the command line (gcloud's
    --region). `partial` judges a gcloud config.yaml, whose module, package and runtime gcloud's flags may
    supply; `package_supplied` says the trainer package is built by the stack, so packageUris come later.
    `backend` "vertex" judges the job by Vertex AI's catalog on its translation (machine types of today,
    Vertex's regions, prebuilt containers and their dates) and renders a CustomJob (or a
    HyperparameterTuningJob); else AI Platform Training's limits and an ml v1 Job. `today`: the day date rules
    judge against. `rules=False` skips the rules, for a job judged where it entered (the provider's create).
    `opaque`: a value standing for one the caller holds encrypted (a stack's secret): a label with that value is
    judged as any valid one (OPAQUE_STAND_IN) and kept as given. A job that does not parse is a SpecError.
    """
    job = parse_job(data)
    if job.training_input.region is None and default_region:
        job = job.model_copy(
            update={"training_input": job.training_input.model_copy(update={"region": default_region})}
        )
    vertex = backend == VERTEX
    untranslated: list[Problem] = []
    warnings: list[Problem] = []
    pools = training_input_pools(job.training_input, untranslated, warnings) if vertex else \
        ml_pools(job.training_input)
    problems = list(untranslated)
    if rules:  # AI Platform's own limits judge the model; Vertex AI's judge the translation
        seen = job if opaque is None or opaque not in (job.labels or {}).values() else \
            job.model_copy(update={"labels": stand_ins(job.labels, opaque)})
        problems = check_job(seen, Options(partial=partial, package_supplied=package_supplied,
                                           backend=backend if backend in BACKENDS else None, today=today),
                             pools, untranslated)
        warnings += credential_warnings(data)
    return _finish(job, VERTEX if vertex else AI_PLATFORM, pools, problems, job_id, warnings)


def judge_custom_job(
    data: Any, *, region: str | None, region_at: str = "region", labels: dict[str, str] | None = None,
    job_id: str | None = None, today: date | None = None, rules: bool = True, package_supplied: bool = False,
    opaque: str | None = None,
) -> Judged:
    """A CustomJobSpec (what `gcloud ai custom-jobs create --config FILE --region R` reads) read once.

    `region` is the job's location (gcloud's --region, or the stack's), `region_at` where it was given, for
    messages; `labels` and `job_id` (the display name) come from the command line or the stack. Every problem
    names the path as the user wrote it. `package_supplied`, `opaque` and `rules` as judge_job's (a stack's
    trainer goes first into every pythonPackageSpec's packageUris). A spec that does not parse is a SpecError.
    """
    from gcp_training_jobs.jobspec.vocab.custom_job import (
        parse_custom_job_spec,  # Vertex's models, when a job uses them
    )

    spec, single = parse_custom_job_spec(data)
    job = VertexJob(spec, region=region, labels=labels, job_id=job_id, single_pool=single)
    pools = spec_pools(job)
    problems = check_custom_job(replace(job, labels=stand_ins(labels, opaque)),
                                Options(today=today, package_supplied=package_supplied), region_at=region_at,
                                pools=pools) if rules else []
    return _finish(job, VERTEX, pools, problems, job_id, credential_warnings(data) if rules else ())


def judge_tuning_job(
    data: Any, *, region: str | None, region_at: str = "region", labels: dict[str, str] | None = None,
    job_id: str | None = None, today: date | None = None, rules: bool = True, package_supplied: bool = False,
    opaque: str | None = None,
) -> Judged:
    """A tuning config (what `gcloud ai hp-tuning-jobs create --config FILE --region R` reads: studySpec,
    trialJobSpec, the trial counts) read once. As in gcloud, `labels` (--labels) and `job_id` (--display-name)
    replace the file's labels and displayName when given. Its pools are its trials'. `package_supplied`, `opaque`
    and `rules` as judge_custom_job's (on its trials' CustomJobSpec)."""
    from gcp_training_jobs.jobspec.vocab.tuning import parse_tuning_config  # its models, when a job uses them

    config, single = parse_tuning_config(data)
    job = TuningJob(config, region=region, labels=labels if labels is not None else config.labels,
                    job_id=job_id or config.display_name, single_pool=single)
    pools = spec_pools(job.trial) if config.trial_job_spec is not None else []
    problems = check_tuning_job(replace(job, labels=stand_ins(job.labels, opaque)),
                                Options(today=today, package_supplied=package_supplied), region_at=region_at,
                                pools=pools) if rules else []
    return _finish(job, VERTEX, pools, problems, job_id or job.job_id, credential_warnings(data) if rules else ())


#: The keys of a CustomJobSpec enclosed as a stack's job or a TrainingJob's `job` input carries it.
ENCLOSED_KEYS = (JOB_SPEC, "region", "labels")
#: The same for a tuning config (tuningJob).
ENCLOSED_TUNING_KEYS = (TUNING_JOB, "region", "labels")
#: The three forms of an enclosed job, exactly one per job.
FORMS = (TRAINING_INPUT, JOB_SPEC, TUNING_JOB)


def judge(
    data: Any, *, backend: str | None = None, backend_at: str = "backend", region: str | None = None,
    region_at: str = "region", labels: dict[str, str] | None = None, job_id: str | None = None,
    today: date | None = None, partial: bool = False, package_supplied: bool = False, enclosed: bool = False,
    rules: bool = True, opaque: str | None = None,
) -> Judged:
    """A job in any vocabulary read once: the one entry point of validate, render, the settings, the provider
    and the policy pack. Its vocabulary is told here, by io.vocabulary.vocabulary_of, and nowhere else.

    `data` is a job as gcloud reads it (a trainingInput Job, a CustomJobSpec, a tuning config), or, with
    `enclosed`, as a stack's job and a TrainingJob's `job` input carry it: `{"trainingInput": ...}`,
    `{"jobSpec": SPEC, "region": ..., "labels": ...}` or `{"tuningJob": CONFIG, "region": ..., "labels": ...}`,
    exactly one of the three (the spec's problems are then named under jobSpec or tuningJob). `backend`: the
    limits judged by and the body rendered (None: the vocabulary's own);
    Vertex AI's vocabularies on ai-platform are refused, naming `backend_at`, where the backend was set.
    `region`: a Vertex job's region (gcloud's --region, a stack's), or the default of a trainingInput's;
    `region_at` where it was given, for messages. `labels` (gcloud's --labels) and `job_id` (the display name)
    go on a Vertex file, which holds neither; `partial` as judge_job's. What a stack knows of its job goes in
    here too, for every vocabulary, so the job is judged once as the stack will send it: `package_supplied` (the
    stack builds the trainer package: packageUris come later; on a CustomJobSpec or a tuning config's trials,
    first in every pythonPackageSpec), `opaque` (a label value the stack holds encrypted, judged as any valid one
    and kept). `rules=False` parses, translates and renders only (a job judged where it entered). A job that does
    not parse is a SpecError.
    """
    known: dict[str, Any] = {"today": today, "rules": rules, "package_supplied": package_supplied, "opaque": opaque}
    vocabulary = vocabulary_of(data)
    if enclosed and (unshaped := enclosed_problem(data)) is not None:
        raise SpecError([unshaped])
    if vocabulary != "trainingInput" and backend == AI_PLATFORM:
        at = (TUNING_JOB if vocabulary == "tuning" else JOB_SPEC) if enclosed else \
            "studySpec" if vocabulary == "tuning" else "workerPoolSpecs"
        raise SpecError([vertex_only(at, tuning=vocabulary == "tuning", backend_at=backend_at)])
    if vocabulary == "tuning" and enclosed:
        config, given_region, given_labels = enclosed_spec(data, TUNING_JOB)
        try:
            judged = judge_tuning_job(config, region=given_region or region, region_at=region_at,
                                      labels=given_labels if given_labels is not None else labels, job_id=job_id,
                                      **known)
        except SpecError as error:
            raise SpecError(within_spec(error.problems, region_at, TUNING_JOB)) from None
        return replace(judged, problems=tuple(within_spec(judged.problems, region_at, TUNING_JOB)),
                       warnings=tuple(within_spec(judged.warnings, region_at, TUNING_JOB)))
    if vocabulary == "tuning":
        return judge_tuning_job(data, region=region, region_at=region_at, labels=labels, job_id=job_id, **known)
    if vocabulary == "customJobSpec" and enclosed:
        spec, given_region, given_labels = enclosed_spec(data)
        try:
            judged = judge_custom_job(spec, region=given_region or region, region_at=region_at,
                                      labels=given_labels if given_labels is not None else labels, job_id=job_id,
                                      **known)
        except SpecError as error:
            raise SpecError(within_spec(error.problems, region_at)) from None
        return replace(judged, problems=tuple(within_spec(judged.problems, region_at)),
                       warnings=tuple(within_spec(judged.warnings, region_at)))
    if vocabulary == "customJobSpec":
        return judge_custom_job(data, region=region, region_at=region_at, labels=labels, job_id=job_id, **known)
    return judge_job(data, default_region=region, partial=partial, backend=backend if backend in BACKENDS else None,
                     job_id=job_id, **known)


def enclosed_problem(data: Any) -> Problem | None:
    """What is wrong with the shape of an enclosed job (a stack's job, a `job` input): it must hold exactly one
    of trainingInput, jobSpec and tuningJob (None: it does)."""
    if not isinstance(data, Mapping):
        return None  # the vocabulary's model names what is wrong with it
    given = [form for form in FORMS if form in data]
    if len(given) > 1:
        both = "both " if len(given) == 2 else ""
        return Problem("", f"has {both}{', '.join(given[:-1])} and {given[-1]}; allowed: exactly one of "
                       f"{', '.join(FORMS)}")
    if not given:
        return Problem("", f"required: {TRAINING_INPUT} (AI Platform Training's vocabulary, a gcloud config.yaml job), "
                       f"{JOB_SPEC} (a Vertex AI CustomJobSpec) or {TUNING_JOB} (a Vertex AI tuning config, as "
                       "`gcloud ai hp-tuning-jobs create --config` reads it); allowed: exactly one of them")
    return None


def enclosed_spec(data: Mapping[str, Any], key: str = JOB_SPEC) -> tuple[Any, str | None, dict[str, str] | None]:
    """An enclosed CustomJobSpec's (`key` tuningJob: tuning config's) parts (spec, region, labels); SpecError for a
    key beside them."""
    keys = ENCLOSED_TUNING_KEYS if key == TUNING_JOB else ENCLOSED_KEYS
    what = "the tuning config" if key == TUNING_JOB else "the CustomJobSpec"
    if key not in data:
        raise SpecError([Problem(key, f"required: {what}; allowed: " + ", ".join(keys))])
    extra = sorted(str(k) for k in data if k not in keys)
    if extra:
        raise SpecError([Problem(extra[0], f"unknown key beside {key}; allowed: {', '.join(keys)}")])
    region = data.get("region")
    labels = data.get("labels")
    return data[key], region if isinstance(region, str) and region else None, \
        dict(labels) if isinstance(labels, Mapping) else None


def within_spec(problems: Sequence[Problem], region_at: str = "region", key: str = JOB_SPEC) -> list[Problem]:
    """An enclosed CustomJobSpec's (tuning config's) problems at their path in the enclosing job
    (`jobSpec.workerPoolSpecs[0]...`, `tuningJob.trialJobSpec...`); its region's and labels' stay where they are."""
    outside = ("region", "labels", region_at)
    return [p if p.path.startswith(outside) else replace(p, path=f"{key}.{p.path}" if p.path else key)
            for p in problems]  # a Notice, a CredentialWarning stay what they are


def model_of(data: Any) -> Renderable:
    """A job as a TrainingJob's `job` input carries it (enclosed), parsed in its vocabulary and nothing more: a
    job judged where it entered (its identity, job_model.inputs.spec_of; the provider's create). Its problems are
    named at their paths in the enclosing job; a job that does not parse is a SpecError."""
    if isinstance(data, Mapping) and TUNING_JOB in data and TRAINING_INPUT not in data:
        from gcp_training_jobs.jobspec.vocab.tuning import parse_tuning_config  # its models, when a job uses them

        config, region, labels = enclosed_spec(data, TUNING_JOB)
        try:
            parsed_config, single = parse_tuning_config(config)
        except SpecError as error:
            raise SpecError(within_spec(error.problems, key=TUNING_JOB)) from None
        return TuningJob(parsed_config, region=region, labels=labels, single_pool=single)
    if vocabulary_of(data) != "customJobSpec":
        return parse_job(data)
    from gcp_training_jobs.jobspec.vocab.custom_job import parse_custom_job_spec  # Vertex's models, when used

    spec, region, labels = enclosed_spec(data)
    try:
        parsed, single = parse_custom_job_spec(spec)
    except SpecError as error:
        raise SpecError(within_spec(error.problems)) from None
    return VertexJob(parsed, region=region, labels=labels, single_pool=single)


def load_job(data: Any, **options: Any) -> Job:
    """The judged trainingInput model (judge_job's options), or SpecError with every problem."""
    return _model(judge_job(data, **options), Job)


def load_custom_job(data: Any, **options: Any) -> VertexJob:
    """The judged CustomJobSpec model (judge_custom_job's options), or SpecError with every problem."""
    return _model(judge_custom_job(data, **options), VertexJob)


def load_tuning_job(data: Any, **options: Any) -> TuningJob:
    """The judged tuning config model (judge_tuning_job's options), or SpecError with every problem."""
    return _model(judge_tuning_job(data, **options), TuningJob)


def _model(judged: Judged, kind: type[Any]) -> Any:
    model = judged.checked().job
    assert isinstance(model, kind)
    return model


def translation(job: Job) -> tuple[list[Pool], list[Problem]]:
    """A trainingInput model's Vertex AI translation and what of it Vertex cannot run (the translation rules'
    problems; their warnings left out), for a model rendered without the pools it was judged with (`render_body`)."""
    problems: list[Problem] = []
    pools = training_input_pools(job.training_input, problems)
    return pools, notices(judge_translation(job, pools, problems, Options(backend=VERTEX)))[0]


def render_body(job: Renderable, backend: str, job_id: str | None = None) -> dict[str, Any]:
    """The exact request body `backend` would send for a validated model rendered without the pools it was judged
    with (a model built in code, or loaded for another backend): a trainingInput on Vertex AI is translated and its
    translation judged here (`translation`), then rendered as the one pass renders (render.bodies.render_judged,
    which judges nothing)."""
    pools, untranslated = translation(job) if backend == VERTEX and isinstance(job, Job) else ([], [])
    return render_judged(job, backend, job_id, pools=pools, untranslated=untranslated)
