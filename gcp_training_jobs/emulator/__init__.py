"""Loopback HTTP emulator of AI Platform Training (ml v1) and Vertex AI custom and hyperparameter tuning jobs and
persistent resources (aiplatform v1).

Why: tests and users can run the project without a cloud, with Google's own client unchanged:

    build("ml", "v1", static_discovery=True, credentials=AnonymousCredentials(),
          client_options={"api_endpoint": emulator.url})

Both discovery documents have rootUrl "https://{ml,aiplatform}.googleapis.com/" and an empty
servicePath, and `api_endpoint` replaces the whole base, so the client asks for
"http://127.0.0.1:PORT/v1/projects/p/jobs" (ml) and ".../v1/projects/p/locations/l/customJobs"
(Vertex; the regional host is replaced too, the region travels in the path). One server serves both.

State is in memory behind one lock. Jobs move through their phases lazily from a clock that tests can
advance; faults (error statuses, delays, answers lost after the work is done) can be injected, and a
request log (method name, verb, path, query; never headers) can be read back. `/_emulator/...` HTTP
endpoints expose the same controls to tests that run the emulator as a separate process.

Fidelity notes: bodies are checked against the shipped discovery schemas (unknown fields, types,
enums, durations; lowerCamel names only) plus the create-time rules the real services apply (jobId
pattern, region, code location, label syntax, worker pool shape). User fields are echoed exactly as
received (the real API would re-serialise them, e.g. int64 numbers as strings and empty lists
dropped). Names keep the project id as given (real Vertex answers with the project number; paths may
use either here). ml jobs cannot be deleted and jobIds are never reusable, as in the real service.

Modules, one concern each:
    errors      Google's error shape (ApiError); Vertex's "List of found errors" and refusals
    faults      fault injection (error statuses, delays, dropped answers)
    jobs        the job record and the Vocabulary that parametrises the shared code by API
    state       the store of jobs, the clock, the request log, the job operations both APIs share
    listing     list filters, page sizes and page tokens
    validation  body checks both APIs share (discovery schemas, labels), and a Vertex body read as proto3
    discovery   the discovery documents and the schema checker
    enums       Vertex's enum numbers (data, from the SDK's generated types)
    proto_json  proto3 JSON: enums as numbers, unset defaults, `enum-encoding=int` answers
    vertex_limits  what Vertex can run (data: machine types, GPU counts, TPU topologies)
    vertex_checks  Vertex's checks of a CustomJobSpec, in its words
    routing     path routes and the create/list/get/cancel routes of a job collection
    ml_v1       the ml v1 surface          vertex  the Vertex customJobs surface
    vertex_tuning  the Vertex hyperparameterTuningJobs surface (trials on the emulator's clock)
    persistent_store  Vertex's persistent resources: the record, its states on the clock, its operations, its quota
    persistent  the Vertex persistentResources surface, and the check of a job that names a persistent resource
    billing     the Cloud Billing Catalog surface (services.list; services.skus.list, a small paged SKU catalog)
    serviceusage  Service Usage's consumerQuotaMetrics (list, get; views BASIC and FULL)
    cloudquotas   Cloud Quotas' quotaInfos (list, get)
    logging_v2  the Cloud Logging surface (entries.list over the log entries the jobs write as they run)
    logging_filter  Cloud Logging's query language (what entries.list filters with)
    server      the HTTP handler, the /_emulator/ control endpoints, Emulator
    cli         main(), for `python -m components emulator`

Standard library only (and its own discovery module): it must start fast and never import pulumi. Names are
imported on first use (PEP 562), so `python -m components` can read the emulator's options without loading
its HTTP server.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gcp_training_jobs.emulator.cli import main
    from gcp_training_jobs.emulator.errors import ApiError
    from gcp_training_jobs.emulator.faults import API_METHODS
    from gcp_training_jobs.emulator.jobs import project_number
    from gcp_training_jobs.emulator.server import Emulator
    from gcp_training_jobs.emulator.state import FAIL_LABEL, EmulatorState

#: Public name -> the module that defines it.
_PUBLIC = {
    "API_METHODS": "gcp_training_jobs.emulator.faults",
    "ApiError": "gcp_training_jobs.emulator.errors",
    "Emulator": "gcp_training_jobs.emulator.server",
    "EmulatorState": "gcp_training_jobs.emulator.state",
    "FAIL_LABEL": "gcp_training_jobs.emulator.state",
    "main": "gcp_training_jobs.emulator.cli",
    "project_number": "gcp_training_jobs.emulator.jobs",
}

__all__ = ["API_METHODS", "ApiError", "Emulator", "EmulatorState", "FAIL_LABEL", "main", "project_number"]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
