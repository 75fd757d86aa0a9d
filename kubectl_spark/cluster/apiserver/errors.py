"""API errors as kube-apiserver reports them: ``kind: Status`` objects with exact reasons and codes.

Message shapes follow apimachinery's ``pkg/api/errors``; clients (kubectl, the Python client, our
own gateway) parse ``reason`` and ``code``, so these are part of the contract, not decoration.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error that becomes an HTTP response carrying a Status object."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        # A 410 on a paged list may carry a token to continue, inconsistently, from there.
        self.continue_token = ""

    def status(self) -> dict[str, Any]:
        body = failure_status(self.code, self.reason, self.message, self.details)
        if self.continue_token:
            body["metadata"] = {"continue": self.continue_token}
        return body


def failure_status(
    code: int, reason: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details:
        body["details"] = details
    body["code"] = code
    return body


def success_status(details: dict[str, Any] | None = None, code: int = 200) -> dict[str, Any]:
    """A success Status carries its HTTP code, as kube-apiserver's handlers fill it in."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": code,
    }
    if details:
        body["details"] = details
    return body


def _details(name: str, group: str, kind: str) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = kind
    return details


def qualified(plural: str, group: str) -> str:
    """``pods`` for the core group, ``jobs.batch`` for the others (the GroupResource string)."""
    return f"{plural}.{group}" if group else plural


def not_found(plural: str, group: str, name: str) -> ApiError:
    if name:
        message = f'{qualified(plural, group)} "{name}" not found'
    else:
        message = f"{qualified(plural, group)} not found"
    return ApiError(404, "NotFound", message, _details(name, group, plural))


def already_exists(plural: str, group: str, name: str) -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f'{qualified(plural, group)} "{name}" already exists',
        _details(name, group, plural),
    )


def conflict(plural: str, group: str, name: str, why: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified(plural, group)} "{name}": {why}',
        _details(name, group, plural),
    )


STALE_OBJECT = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def invalid(kind: str, group: str, name: str, causes: list[tuple[str, str, str]]) -> ApiError:
    """422 Invalid; ``causes`` are (reason, field, message) like field.ErrorList."""
    qualified_kind = f"{kind}.{group}" if group else kind
    parts = [f"{field}: {message}" for _, field, message in causes]
    joined = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    details = _details(name, group, kind)
    details["causes"] = [
        {"reason": reason, "message": message, "field": field} for reason, field, message in causes
    ]
    return ApiError(422, "Invalid", f'{qualified_kind} "{name}" is invalid: {joined}', details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def forbidden(plural: str, group: str, name: str, message: str) -> ApiError:
    subject = qualified(plural, group) + (f' "{name}"' if name else "")
    return ApiError(
        403, "Forbidden", f"{subject} is forbidden: {message}", _details(name, group, plural)
    )


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def expired(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def method_not_supported(plural: str, group: str, verb: str) -> ApiError:
    return ApiError(
        405,
        "MethodNotAllowed",
        f"{verb} is not supported on resources of kind {qualified(plural, group)!r}",
        _details("", group, plural),
    )


def unsupported_media_type(accepted: list[str]) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{', '.join(accepted)}",
    )


def too_many_requests(message: str, retry_after: int) -> ApiError:
    return ApiError(429, "TooManyRequests", message, {"retryAfterSeconds": retry_after})


def internal(message: str) -> ApiError:
    return ApiError(500, "InternalError", f"Internal error occurred: {message}", {})
