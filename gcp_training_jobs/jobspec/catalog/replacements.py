"""What to run on Vertex AI instead of a GPU that is gone: the concrete replacement a message suggests. Data
and one lookup; no rules.

Facts used (each from its own table, with its source there):
- which GPUs are gone: vertex_machines.GPU_END_OF_SUPPORT (NVIDIA_TESLA_K80 2024-05-01, NVIDIA_TESLA_P100
  2026-09-15; K80 is also marked deprecated in aiplatform.v1.json's MachineSpec.acceleratorType);
- the machine a legacy type or tier ran on: its Compute Engine equivalent (legacy.legacy_equivalent), which the
  Vertex AI translation judges
  (standard_gpu = n1-standard-4 + 1 K80, complex_model_m_gpu = n1-highcpu-16 + 4 K80, complex_model_l_gpu =
  n1-highcpu-32 + 8 K80, standard_p100 = n1-standard-4 + 1 P100, complex_model_m_p100 = n1-highcpu-16 + 4 P100);
- the GPU counts an N1 type takes on Vertex AI: vertex_machines.N1_GPU_COUNTS (configure-compute page);
- the G2 types and the L4 count each carries: vertex_machines.FIXED_ACCELERATOR_MACHINES.

The choice (this project's, read 2026-11-22): keep the machine the job ran on and put NVIDIA_TESLA_T4 on it,
the same count where that N1 type takes it (else the nearest count it takes). T4 is the N1-attachable GPU
offered in the most Vertex AI training regions (vertex_regions.REGION_ACCELERATORS), but it is deprecated
itself (end of support 2027-08-01, GPU_END_OF_SUPPORT), so a G2 type with as many NVIDIA_L4 built in is
named as the longer-lived alternative.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from gcp_training_jobs.jobspec.catalog.accelerators import K80, P100, T4
from gcp_training_jobs.jobspec.catalog.vertex_machines import (
    FIXED_ACCELERATOR_MACHINES,
    GPU_END_OF_SUPPORT,
    N1_GPU_COUNTS,
)

L4: Final = "NVIDIA_L4"

#: Retired GPU -> the GPU suggested in its place (see the module docstring for why T4).
SUCCESSORS: Final[Mapping[str, str]] = MappingProxyType({K80: T4, P100: T4})


@dataclass(frozen=True)
class Replacement:
    """A CUSTOM-tier machine with attached GPUs that Vertex AI runs today, and a G2 alternative."""

    machine_type: str
    accelerator_type: str
    accelerator_count: int
    alternative: str | None = None  # a G2 machine type with as many NVIDIA_L4 built in
    note: str = ""

    def __str__(self) -> str:
        text = (f"CUSTOM with {self.machine_type} and {self.accelerator_count} {self.accelerator_type}"
                f"{self.note}")
        if self.alternative:
            text += f" (or {self.alternative}, {self.accelerator_count} {L4} built in)"
        return text


def _count(machine_type: str, gpu: str, wanted: int) -> int | None:
    """`wanted` if the N1 type takes that many of `gpu` on Vertex AI, else the nearest count it takes."""
    per_gpu = N1_GPU_COUNTS.get(machine_type)
    counts = per_gpu.get(gpu) if per_gpu else None
    if not counts:
        return None
    if wanted in counts:
        return wanted
    below = [c for c in counts if c < wanted]
    return max(below) if below else min(counts)


def _g2(count: int) -> str | None:
    """The smallest G2 type with exactly `count` NVIDIA_L4 (the table is in size order)."""
    return next((name for name, m in FIXED_ACCELERATOR_MACHINES.items()
                 if m.accelerator == L4 and m.count == count), None)


def replacement(machine_type: str, accelerator_type: str, count: int) -> Replacement | None:
    """What to use instead of `count` retired `accelerator_type` on the Compute Engine `machine_type`, or None
    when the GPU is not retired or no N1 equivalent is known."""
    successor = SUCCESSORS.get(accelerator_type)
    if successor is None or accelerator_type not in GPU_END_OF_SUPPORT:
        return None
    chosen = _count(machine_type, successor, count)
    if chosen is None:
        return None
    note = f" ({machine_type} takes at most {chosen} {successor})" if chosen < count else ""
    return Replacement(machine_type, successor, chosen, _g2(chosen), note)
