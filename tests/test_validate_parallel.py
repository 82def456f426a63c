"""`validate` of many files forks workers, one slice of the files each: the reports come back whole and in the
files' order, the same as one process gives, and a worker that fails costs nothing but time (its slice is judged
by the parent). Each process reads its files a batch at a time, then judges them: the reports are those of
judging each file on its own, whatever the batches' bounds cut.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gcp_training_jobs.cli import validate  # noqa: E402
from gcp_training_jobs.cli.main import parser  # noqa: E402
from gcp_training_jobs.jobspec.io.documents import Document  # noqa: E402

COUNT = 240  # over PARALLEL_FROM: two workers on two cores


@pytest.fixture()
def folder(tmp_path: Path) -> list[Path]:
    """Valid and invalid job files, interleaved, so the order of reports shows."""
    for i in range(COUNT):
        accelerator = "NVIDIA_TESLA_T4" if i % 3 else "NOT_A_GPU"
        job = {"trainingInput": {"scaleTier": "CUSTOM", "masterType": "n1-standard-8", "region": "us-central1",
                                 "masterConfig": {"acceleratorConfig": {"type": accelerator, "count": 1}},
                                 "pythonModule": "trainer.task", "runtimeVersion": "2.11",
                                 "packageUris": ["gs://bucket/trainer.tar.gz"]}}
        (tmp_path / f"job_{i:03d}.yaml").write_text(yaml.safe_dump(job))
    return sorted(tmp_path.glob("*.yaml"))


def reports(files: list[Path], monkeypatch: pytest.MonkeyPatch, cores: int) -> list[validate.FileReport]:
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    args = parser().parse_args(["validate", *map(str, files)])
    return list(validate._reports(files, args))


def test_workers_give_every_report_in_order(folder: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    alone = reports(folder, monkeypatch, cores=1)
    assert len(alone) == COUNT and sum(v.invalid for v in alone) == COUNT // 3
    assert reports(folder, monkeypatch, cores=2) == alone


def test_a_failing_worker_s_files_are_judged_by_the_parent(folder: list[Path],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    alone = reports(folder, monkeypatch, cores=1)
    parent = os.getpid()
    judge = validate.judge_document

    def crashes_in_a_worker(doc: Document, args: argparse.Namespace) -> validate.FileReport:
        if os.getpid() != parent:
            raise MemoryError("a worker dies")
        return judge(doc, args)

    monkeypatch.setattr(validate, "judge_document", crashes_in_a_worker)
    assert reports(folder, monkeypatch, cores=2) == alone


def test_batches_give_each_file_s_own_report_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files that fill a batch, an unreadable one (empty, not UTF-8, missing), one with aliases and one over the
    batch's bytes (both judged alone), in one order: the batched reports are those of each file judged alone."""
    monkeypatch.setattr(validate, "BATCH_FILES", 3)
    job = "trainingInput:\n  scaleTier: BASIC\n  region: us-central1\n  pythonModule: m\n  runtimeVersion: '2.11'\n"
    texts = {"a": job, "b": job.replace("BASIC", "NOPE"), "c": "", "d": job, "e": "x: &v 1\ny: *v\n", "f": job,
             "g": job + "# " + "pad " * (validate.BATCH_BYTES // 4) + "\n", "h": job.replace("BASIC", "CUSTOM"),
             "i": job, "k": job, "l": job}
    for name, text in texts.items():
        (tmp_path / f"{name}.yaml").write_text(text)
    (tmp_path / "j.yaml").write_bytes(b"trainingInput: \xff\n")
    files = sorted(tmp_path.glob("*.yaml")) + [tmp_path / "missing.yaml"]
    args = parser().parse_args(["validate", *map(str, files)])
    one_by_one = [report for path in files for report in validate._judge_all([path], args)]
    assert [v.unreadable for v in one_by_one].count(True) == 3 and any(v.invalid for v in one_by_one)
    assert validate._judge_all(files, args) == one_by_one
