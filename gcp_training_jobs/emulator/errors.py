"""Google's error shape: ApiError ({"error": {"code", "message", "status", "details"}}) and the
HTTP status -> google.rpc.Code names every part of the emulator answers errors with."""

from __future__ import annotations

from typing import Any

#: HTTP status -> google.rpc.Code name, for errors and injected faults.
STATUS_NAMES: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


class ApiError(Exception):
    """An error answered in Google's JSON shape: {"error": {"code", "message", "status"}}."""

    def __init__(
        self,
        code: int,
        message: str,
        status: str | None = None,
        violations: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or STATUS_NAMES.get(code, "UNKNOWN")
        self.violations = violations or []

    def payload(self) -> dict[str, Any]:
        """The JSON body of the error response (with google.rpc.BadRequest details for field errors)."""
        error: dict[str, Any] = {"code": self.code, "message": self.message, "status": self.status}
        if self.violations:
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [{"field": f, "description": d} for f, d in self.violations],
                }
            ]
        return {"error": error}


def invalid(message: str, field_name: str | None = None) -> ApiError:
    """400 INVALID_ARGUMENT, with one field violation when `field_name` is given."""
    violations = [(field_name, message)] if field_name else None
    return ApiError(400, message, "INVALID_ARGUMENT", violations)


def found_errors(violations: list[tuple[str, str]]) -> ApiError:
    """Vertex AI's 400 for the field checks of a create: every problem at once, numbered, as the real service
    words it ("List of found errors:\t1.Field: job_spec.worker_pool_specs[0].machine_spec.accelerator_type;
    Message: Both `accelerator_type` and `accelerator_count` should be specified or none.\t", quoted in
    https://github.com/PrefectHQ/prefect-gcp/issues/175), with one google.rpc.BadRequest field violation (snake_case
    path, the message alone as description) per problem."""
    listed = "".join(f"{n}.Field: {field}; Message: {text}\t" for n, (field, text) in enumerate(violations, 1))
    return ApiError(400, f"List of found errors:\t{listed}", "INVALID_ARGUMENT", list(violations))


def refused(message: str, field_name: str) -> ApiError:
    """Vertex AI's 400 for a machine it cannot provide, a sentence of its own (e.g. 'Accelerator
    "NVIDIA_TESLA_K80" is not supported for machine type "n1-standard-4"'), naming the field in a BadRequest."""
    return ApiError(400, message, "INVALID_ARGUMENT", [(field_name, message)])


def failed_precondition(message: str) -> ApiError:
    """400 FAILED_PRECONDITION (e.g. cancelling or deleting a job in the wrong state)."""
    return ApiError(400, message, "FAILED_PRECONDITION")
