"""A document's vocabulary is told by its top-level keys before any model is built (io.vocabulary), so a
trainingInput file never imports or builds the Vertex AI models, and the keys it is told by are the models'
own fields.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gcp_training_jobs.jobspec.io.vocabulary import (  # noqa: E402
    CUSTOM_JOB_SPEC_FIELDS,
    TRIAL,
    TUNING_FIELDS,
    is_custom_job_spec,
    is_tuning_config,
    snake_case,
    vocabulary_of,
)
from gcp_training_jobs.jobspec.vocab.custom_job import CustomJobSpec  # noqa: E402
from gcp_training_jobs.jobspec.vocab.tuning import TuningConfig  # noqa: E402

GUIDE_EXAMPLES = ROOT / "tests" / "fixtures" / "guide_examples"
VERTEX_MODELS = ("gcp_training_jobs.jobspec.vocab.custom_job", "gcp_training_jobs.jobspec.vocab.tuning")


def test_the_custom_job_spec_keys_are_the_model_fields() -> None:
    fields = CustomJobSpec.model_fields
    assert set(CUSTOM_JOB_SPEC_FIELDS) == {info.alias for info in fields.values()}
    assert {snake_case(key) for key in CUSTOM_JOB_SPEC_FIELDS} == set(fields)


def test_the_tuning_keys_are_fields_of_the_tuning_config_and_not_of_a_custom_job_spec() -> None:
    aliases = {info.alias for info in TuningConfig.model_fields.values()}
    assert set(TUNING_FIELDS) <= aliases and TRIAL in TUNING_FIELDS
    assert not set(TUNING_FIELDS) & set(CUSTOM_JOB_SPEC_FIELDS)


@pytest.mark.parametrize(("data", "vocabulary"), [
    ({"trainingInput": {"scaleTier": "BASIC"}}, "trainingInput"),
    ({"trainingInput": {}, "workerPoolSpecs": []}, "trainingInput"),
    ({"training_input": {}, "scheduling": {}}, "trainingInput"),
    ({"workerPoolSpecs": [{}]}, "customJobSpec"),
    ({"worker_pool_specs": [{}]}, "customJobSpec"),  # recognised, then told to write camelCase
    ({"jobSpec": {"workerPoolSpecs": []}}, "customJobSpec"),  # a request body, told what gcloud reads
    ({"scheduling": {"strategy": "SPOT"}}, "customJobSpec"),
    ({"studySpec": {}, "trialJobSpec": {}}, "tuning"),
    ({"study_spec": {}}, "tuning"),
    ({"trialJobSpec": {}, "workerPoolSpecs": []}, "tuning"),
    ({"jobId": "x"}, "trainingInput"),  # neither: the ml v1 model names what it misses
    ([{"workerPoolSpecs": []}], "trainingInput"),
    ("text", "trainingInput"),
])
def test_vocabulary_by_top_level_keys(data: object, vocabulary: str) -> None:
    assert vocabulary_of(data) == vocabulary
    assert is_tuning_config(data) == (vocabulary == "tuning")
    if vocabulary == "customJobSpec":
        assert is_custom_job_spec(data)
    if vocabulary == "trainingInput":
        assert not is_custom_job_spec(data)


def _vertex_models_imported(path: Path) -> dict[str, bool]:
    """Validate one file in a new process; which of the Vertex AI model modules it imported."""
    code = ("import json, sys\nfrom gcp_training_jobs.cli.main import main\n"
            f"try:\n    main(['validate', '-q', {str(path)!r}])\nexcept SystemExit:\n    pass\n"
            f"print(json.dumps({{m: m in sys.modules for m in {list(VERTEX_MODELS)!r}}}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.slow
def test_a_training_input_file_imports_no_vertex_model(tmp_path: Path) -> None:
    assert _vertex_models_imported(GUIDE_EXAMPLES / "gpu_compute_engine.yaml") == dict.fromkeys(VERTEX_MODELS, False)
    spec = tmp_path / "custom.yaml"
    spec.write_text("workerPoolSpecs:\n  machineSpec: {machineType: n1-standard-4}\n  replicaCount: 1\n"
                    "  containerSpec: {imageUri: us-docker.pkg.dev/p/r/i:1}\n")
    assert _vertex_models_imported(spec) == {VERTEX_MODELS[0]: True, VERTEX_MODELS[1]: False}


# --- The one entry point: load.judge -----------------------------------------------------------------------

L4 = {"workerPoolSpecs": [{"machineSpec": {"machineType": "g2-standard-8", "acceleratorType": "NVIDIA_L4",
                                           "acceleratorCount": 1},
                           "replicaCount": 1, "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/t:1"}}]}
TUNING = {"studySpec": {"metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
                        "parameters": [{"parameterId": "lr", "doubleValueSpec": {"minValue": 0.001, "maxValue": 0.1}}]},
          "maxTrialCount": 4, "parallelTrialCount": 2, "trialJobSpec": L4}


@pytest.mark.parametrize(("data", "enclosed", "kind"), [
    (L4, False, "VertexJob"),
    ({"jobSpec": L4, "region": "us-central1"}, True, "VertexJob"),
    (TUNING, False, "TuningJob"),
])
def test_judge_reads_each_vocabulary_by_the_one_detector_and_refuses_it_on_ai_platform(
        data: dict[str, object], enclosed: bool, kind: str) -> None:
    from gcp_training_jobs.jobspec.core.errors import SpecError
    from gcp_training_jobs.jobspec.load import judge

    judged = judge(data, region="us-central1", enclosed=enclosed)
    assert judged.ok and type(judged.job).__name__ == kind and judged.backend == "vertex", judged.problems
    assert [p.machine_type for p in judged.pools] == ["g2-standard-8"]
    with pytest.raises(SpecError) as refused:
        judge(data, backend="ai-platform", backend_at="--backend", region="us-central1", enclosed=enclosed)
    (problem,) = refused.value.problems
    tuning = kind == "TuningJob"
    assert problem.path == ("jobSpec" if enclosed else "studySpec" if tuning else "workerPoolSpecs")
    assert problem.message == (
        f"{'a tuning config (studySpec, trialJobSpec)' if tuning else 'a CustomJobSpec'} is Vertex AI's vocabulary "
        f"and runs on Vertex AI only; allowed: --backend vertex, or a job with trainingInput"
        f"{' and hyperparameters' if tuning else ''} for ai-platform")


def test_an_enclosed_job_holds_exactly_one_vocabulary_and_names_its_spec_problems_under_job_spec() -> None:
    from gcp_training_jobs.jobspec.core.errors import SpecError
    from gcp_training_jobs.jobspec.load import judge

    for data, message in (({"jobSpec": L4, "trainingInput": {}}, "has both trainingInput and jobSpec"),
                          ({"labels": {"a": "b"}}, "required: trainingInput"), (TUNING, "required: trainingInput")):
        with pytest.raises(SpecError) as refused:
            judge(data, enclosed=True)
        assert [p.path for p in refused.value.problems] == [""] and message in refused.value.problems[0].message
    bad = {"jobSpec": {"workerPoolSpecs": [{**L4["workerPoolSpecs"][0], "replicaCount": 0}]}, "region": "us-central1"}
    assert [p.path for p in judge(bad, enclosed=True).problems] == ["jobSpec.workerPoolSpecs[0].replicaCount"]
    with pytest.raises(SpecError, match="is a CustomJob request body"):  # gcloud's reading of a file: refused
        judge({"jobSpec": L4, "displayName": "x"}, region="us-central1")
