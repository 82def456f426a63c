"""Every cell of the GPU guide's GPU table, both ways: allowed counts pass, their neighbours fail.

The expected table is transcribed here from the guide (https://cloud.google.com/ai-platform/training/docs/using-gpus)
independently of gcp_training_jobs/catalog.py, so a wrong
cell in the catalog fails this test.
"""

from __future__ import annotations

import pytest

from gcp_training_jobs.jobspec.core.errors import SpecError
from gcp_training_jobs.jobspec.load import load_job
from tests.helpers import ALLOWED, GPUS, T4, TABLE, gpu_job

NEIGHBOURS = sorted({
    (m, g, n)
    for m, row in TABLE.items()
    for g, counts in row.items()
    for c in counts
    for n in (c - 1, c + 1, 3, 16)
    if n not in counts and n > 0
})
NOT_OFFERED = [(m, g) for m in TABLE for g in GPUS if g not in TABLE[m]]


@pytest.mark.parametrize(("machine", "gpu", "count"), ALLOWED)
def test_allowed_count_passes(machine: str, gpu: str, count: int) -> None:
    job = load_job(gpu_job(machine, gpu, count))
    acc = job.training_input.master_config.accelerator_config  # type: ignore[union-attr]
    assert (acc.type, acc.count) == (gpu, count)  # type: ignore[union-attr]


@pytest.mark.parametrize(("machine", "gpu", "count"), NEIGHBOURS)
def test_neighbour_count_fails_naming_the_allowed_counts(machine: str, gpu: str, count: int) -> None:
    with pytest.raises(SpecError) as caught:
        load_job(gpu_job(machine, gpu, count))
    allowed = ", ".join(str(c) for c in TABLE[machine][gpu])
    assert [str(p) for p in caught.value.problems] == [
        f"trainingInput.masterConfig.acceleratorConfig.count: {count} {gpu} on {machine}; allowed: {allowed}"
    ]


@pytest.mark.parametrize(("machine", "gpu"), NOT_OFFERED)
def test_gpu_not_offered_on_machine_fails(machine: str, gpu: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_job(gpu_job(machine, gpu, 1))
    (problem,) = caught.value.problems
    assert problem.path == "trainingInput.masterConfig.acceleratorConfig.type"
    assert f"{gpu} on {machine} is not offered" in problem.message
    for offered in TABLE[machine]:
        assert offered in problem.message


def test_table_covers_every_machine_type_of_the_guide() -> None:
    assert len(TABLE) == 22
    # Counted from the guide: 5 small rows x 17 + 3 sixteen-vCPU rows x 15 + 3 32-vCPU rows x 10
    # + 5 large rows x 3 + n1-highcpu-64's 5 + 5 a2 types = 185 allowed (machine, GPU, count) cells.
    assert len(ALLOWED) == 5 * 17 + 3 * 15 + 3 * 10 + 5 * 3 + 5 + 5


@pytest.mark.parametrize("machine", ["n1-standard-2", "n2-standard-8", "e2-standard-4"])
def test_machine_types_without_gpus_refuse_any_gpu(machine: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_job(gpu_job(machine, T4, 1))
    assert caught.value.problems[0].path.startswith("trainingInput.")
