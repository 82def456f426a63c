"""The public pages AI Platform Training's tables (accelerators, legacy, machines, regions, runtimes) were read
from: Google's AI Platform Training guides, its API's discovery document, and Compute Engine's GPU zones. Data only.

Each table beside its data names the ones it rests on (`<TABLE>_SOURCES`). AI Platform Training (ml v1) was shut
down on 2025-01-31; its guides stay online with a deprecation banner.
"""

from __future__ import annotations

from datetime import date
from typing import Final

from gcp_training_jobs.jobspec.catalog.source import Source

_READ: Final = date(2026, 11, 26)
#: The day these tables were written from the pages below (the catalog's first version).
_WRITTEN: Final = date(2026, 11, 21)

SOURCE_USING_GPUS: Final = Source(
    title="AI Platform Training: Using GPUs for training models in the cloud",
    url="https://cloud.google.com/ai-platform/training/docs/using-gpus",
    read=_READ,
    note=(
        "Whole page read, in Google's Portuguese translation of it ('Como usar GPUs para treinar modelos na nuvem'), "
        "the edition the tables were written from. It gives: the acceleratorConfig GPU types (NVIDIA_TESLA_A100, _P4, "
        "_P100, _T4, _V100); the table 'Números válidos de GPUs para cada tipo de máquina' (valid numbers of GPUs for "
        "each machine type; columns A100, K80, P4, P100, T4, V100; rows n1-standard-4 to n1-highcpu-96 and "
        "a2-highgpu-1g to a2-megagpu-16g); restriction 2 (each V100 brings at most 12 vCPUs and 76 GB; four P100 at "
        "most 64 vCPUs and 208 GB); the legacy types with GPUs included (standard_gpu one GPU, complex_model_m_gpu "
        "four, complex_model_l_gpu eight, standard_p100 and complex_model_m_p100 one and four P100, standard_v100, "
        "large_model_v100, complex_model_m_v100, complex_model_l_v100 one, one, four and eight V100); BASIC_GPU as one "
        "worker with one GPU; the 16 regions that offer GPUs; that a job's GPU types must all be offered in one zone "
        "of its region (no us-central1 zone offered T4, K80 and P100 together); the same cluster written twice "
        "(n1-highcpu-16 + 4 T4 workers and n1-highmem-8 parameter servers; complex_model_m_gpu and large_model); "
        "maintenance events restart GPU VMs. This edition does not name the GPU model of standard_gpu, the *_gpu types "
        "or BASIC_GPU (SOURCE_ML_ENGINE_USING_GPUS does: K80)."
    ),
)

SOURCE_ML_ENGINE_USING_GPUS: Final = Source(
    title="Cloud ML Engine: Using GPUs for Training Models in the Cloud",
    url="https://cloud.google.com/ml-engine/docs/using-gpus",
    read=_READ,
    note=(
        "An earlier edition of the GPU guide above, at its former address. Its section 'Requesting GPU-enabled "
        "machines' read (not the whole page): 'standard_gpu: A single NVIDIA Tesla K80 GPU', 'complex_model_m_gpu: "
        "Four NVIDIA Tesla K80 GPUs', 'complex_model_l_gpu: Eight NVIDIA Tesla K80 GPUs', 'standard_p100: A single "
        "NVIDIA Tesla P100 GPU (Alpha)', 'complex_model_m_p100: Four NVIDIA Tesla P100 GPUs (Alpha)'. Its 2019 edition "
        "says of BASIC_GPU: 'a single worker instance with a single NVIDIA Tesla K80 GPU'."
    ),
)

SOURCE_USING_TPUS: Final = Source(
    title="AI Platform Training: Using TPUs to train your model",
    url="https://cloud.google.com/ai-platform/training/docs/using-tpus",
    read=_READ,
    note=(
        "Whole page read, in Google's Portuguese translation of it ('Como usar TPUs para treinar seu modelo'), the "
        "edition the tables were written from (its sample: ResNet-50, runtime 1.12, BASIC_TPU). It gives: TPUs only in "
        "us-central1 ('Como especificar uma região que oferece TPUs'); runtime versions 1.11 and 1.12 for Cloud TPU; "
        "BASIC_TPU as a master VM plus a TPU VM; the two CUSTOM shapes, a legacy or a Compute Engine master beside one "
        "cloud_tpu worker (workerCount 1, no parameter servers: the service rejects a job whose parameterServerCount "
        "is above zero), the latter with acceleratorConfig type TPU_V2, count 8 ('Não é possível anexar qualquer outro "
        "número de núcleos de TPU v2': no other number of TPU v2 cores); and the grant of roles/ml.serviceAgent "
        "('Agente de serviço do Cloud ML') to the tpuServiceAccount that projects.getConfig returns. The page names no "
        "TPU type but TPU_V2. The current edition (its Japanese translation's opening section read the same day) "
        "trains a sample MNIST model with runtime 2.11 on BASIC_TPU."
    ),
)

SOURCE_MACHINE_TYPES: Final = Source(
    title="AI Platform Training: Specifying machine types or scale tiers",
    url="https://cloud.google.com/ai-platform/training/docs/machine-types",
    read=_WRITTEN,
    note=(
        "What the catalog took from it when the tables were written: the Compute Engine machine types AI Platform "
        "Training accepts (n1 and a2 take GPUs; e2, n2 and m1 types take none), the legacy machine types' sizes "
        "(standard: 4 vCPUs and 15 GB, as n1-standard-4; complex_model_l twice complex_model_m), and the single-VM "
        "tiers (BASIC one standard machine, BASIC_GPU one standard_gpu with an NVIDIA Tesla K80, BASIC_TPU a standard "
        "master and a Cloud TPU worker). Not confirmed again on 2026-11-26: only the page's opening section was read "
        "that day (in its Chinese, Japanese and Korean translations: a CUSTOM cluster of n1-highcpu-16 master and "
        "workers and n1-highmem-8 parameter servers); the lists above rest on the 2026-11-21 reading."
    ),
)

SOURCE_ML_V1_DISCOVERY: Final = Source(
    title="AI Platform Training and Prediction API discovery document (ml v1): GoogleCloudMlV1__TrainingInput, "
          "AcceleratorConfig, Scheduling",
    url="https://ml.googleapis.com/$discovery/rest?version=v1",
    read=_READ,
    note=(
        "Revision 20251213, as google-api-python-client ships it in "
        "googleapiclient/discovery_cache/documents/ml.v1.json. TrainingInput.scaleTier's enum (BASIC, STANDARD_1, "
        "PREMIUM_1, BASIC_GPU, BASIC_TPU, CUSTOM; STANDARD_1 'many workers and a few parameter servers'); "
        "AcceleratorConfig.type's enum (the six GPUs, TPU_V2, TPU_V3 and the *_POD values); pythonVersion: 'Python 3.7 "
        "is available when runtime_version is set to 1.15 or later. Python 3.5 ... from 1.4 to 1.14. Python 2.7 ... "
        "1.15 or earlier' (so 1.0 to 1.3 had no Python 3.5, which RUNTIME_PYTHON_VERSIONS does not reflect); "
        "Scheduling.maxRunningTime 'defaults to 604800s (seven days)'. This revision no longer lists the legacy "
        "machine types; that each GPU legacy type is 'a machine equivalent to' a CPU one (standard_gpu to standard, "
        "complex_model_m_p100 to complex_model_m, large_model_v100 to large_model, ...) was read in an earlier "
        "revision of TrainingInput.masterType when the tables were written and is not confirmed again here."
    ),
)

SOURCE_TENSORFLOW_2: Final = Source(
    title="AI Platform Training: Training with TensorFlow 2",
    url="https://cloud.google.com/ai-platform/training/docs/tensorflow-2",
    read=_READ,
    note=(
        "Opening section read, in Google's Italian translation: runtime versions 2.1 and later support training with "
        "Python 3.7 only. The runtime version list "
        "(https://cloud.google.com/ai-platform/training/docs/runtime-version-list), which names each runtime's Python "
        "versions and whether Cloud TPU ran it, was not read on 2026-11-26: that TPU jobs ran 1.13 to 1.15 and 2.1 to "
        "2.11 rests on the catalog's first version (2026-11-21), which cites that list and public job configs running "
        "BASIC_TPU on 1.13, and on the using-TPUs page's current edition (runtime 2.11 on BASIC_TPU)."
    ),
)

SOURCE_GPU_ZONES: Final = Source(
    title="Compute Engine GPU regions and zones availability, as scraped into SkyPilot's GCP zone table "
          "(sky/clouds/service_catalog/data_fetchers/gcp_data/zones/gpu.csv)",
    url="https://github.com/skypilot-org/skypilot/blob/d8b6dd42448ca9b11faca89bab3d6bbed81da38c/"
        "sky/clouds/service_catalog/data_fetchers/gcp_data/zones/gpu.csv",
    read=_READ,
    repository="skypilot-org/skypilot",
    commit="d8b6dd42448ca9b11faca89bab3d6bbed81da38c",
    note=(
        "Whole file read: one row per zone with its 'GPU platforms', taken from Compute Engine's page "
        "https://cloud.google.com/compute/docs/gpus/gpu-regions-zones in 2022 (that page today lists current GPUs "
        "only). GPU_ZONES is this file's K80, P4, P100, T4, V100 and A100 zones in the 16 GPU regions, checked cell by "
        "cell on 2026-11-26, with one change: T4 is left out of us-central1-c, because the GPU guide "
        "(SOURCE_USING_GPUS) states that no us-central1 zone offered T4, K80 and P100 together, and this file, scraped "
        "after T4 came to us-central1-c, has all three there."
    ),
)
