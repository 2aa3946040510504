"""Nimbus errors: one class, a stable code per condition and the HTTP status it maps to.

The REST API answers every error as ``{"error": <message>, "code": <CODE>}`` with the status
of :data:`CODES`; clients raise :class:`NimbusError` again from that body, so a CLI user sees
the same code the server chose.
"""

from __future__ import annotations

from sparkstorm.errors import SparkstormError

CODES: dict[str, int] = {
    "AUTH_TOKEN_INVALID": 401,
    "AUTH_TOKEN_MISSING": 401,
    "BAD_REQUEST": 422,
    "COMPONENT_NOT_FOUND": 404,
    "INTERNAL_ERROR": 500,
    "INVALID_TOPOLOGY_SPEC": 400,
    "NIMBUS_UNAVAILABLE": 503,
    "NOT_FOUND": 404,
    "NO_SUCH_UPLOAD": 404,
    "PARALLELISM_ABOVE_TASKS": 400,
    "REBALANCE_INVALID": 400,
    "REBALANCE_UNKNOWN_COMPONENT": 400,
    "REQUEST_TOO_LARGE": 413,
    "SUPERVISOR_NOT_FOUND": 404,
    "TOPOLOGY_ALREADY_ALIVE": 409,
    "TOPOLOGY_BEING_KILLED": 409,
    "TOPOLOGY_BEING_REBALANCED": 409,
    "TOPOLOGY_NOT_FOUND": 404,
    "UNKNOWN_WINDOW": 400,
    "UPLOAD_ALREADY_FINISHED": 409,
    "UPLOAD_CHECKSUM_MISMATCH": 400,
    "UPLOAD_CORRUPT_ZIP": 400,
    "UPLOAD_TOO_LARGE": 413,
    "UPLOAD_TOO_MANY_FILES": 413,
    "UPLOAD_UNPACKED_TOO_LARGE": 413,
    "UPLOAD_UNSAFE_PATH": 400,
    "WORKER_NOT_ASSIGNED": 404,
}
"""Every Nimbus error code and its HTTP status; kept sorted and unique (a unit test checks)."""

DEFAULT_STATUS = 400
"""Status of a :class:`SparkstormError` from elsewhere (topology or config validation)."""


class NimbusError(SparkstormError, RuntimeError):
    """A request Nimbus refused, or a Nimbus call a client could not complete."""

    @property
    def status(self) -> int:
        """The HTTP status of this error's code."""
        return CODES.get(self.code, DEFAULT_STATUS)


def status_of(error: SparkstormError) -> int:
    """The HTTP status for any sparkstorm error (validation errors are 400)."""
    return CODES.get(error.code, DEFAULT_STATUS)
