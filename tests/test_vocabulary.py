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

from components.jobspec.io.vocabulary import (  # noqa: E402
    CUSTOM_JOB_SPEC_FIELDS,
    TRIAL,
    TUNING_FIELDS,
    is_custom_job_spec,
    is_tuning_config,
    snake_case,
    vocabulary_of,
)
from components.jobspec.vocab.custom_job import CustomJobSpec  # noqa: E402
from components.jobspec.vocab.tuning import TuningConfig  # noqa: E402

SEEDS = ROOT / "tests" / "fixtures" / "seeds"
VERTEX_MODELS = ("components.jobspec.vocab.custom_job", "components.jobspec.vocab.tuning")


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
    code = ("import json, sys\nfrom components.cli.main import main\n"
            f"try:\n    main(['validate', '-q', {str(path)!r}])\nexcept SystemExit:\n    pass\n"
            f"print(json.dumps({{m: m in sys.modules for m in {list(VERTEX_MODELS)!r}}}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.slow
def test_a_training_input_file_imports_no_vertex_model(tmp_path: Path) -> None:
    assert _vertex_models_imported(SEEDS / "gpu_compute_engine.yaml") == dict.fromkeys(VERTEX_MODELS, False)
    spec = tmp_path / "custom.yaml"
    spec.write_text("workerPoolSpecs:\n  machineSpec: {machineType: n1-standard-4}\n  replicaCount: 1\n"
                    "  containerSpec: {imageUri: us-docker.pkg.dev/p/r/i:1}\n")
    assert _vertex_models_imported(spec) == {VERTEX_MODELS[0]: True, VERTEX_MODELS[1]: False}
