"""The errors users see: each has a one-line message, an optional hint and an exit code.

They are rendered in exactly one place per front end (``cli.main`` for the CLI), never printed
where they are raised, so every command fails the same way: one line on stderr, non-zero exit.
"""

from __future__ import annotations


class KubectlSparkError(Exception):
    """Base class: ``message`` is shown as is, ``hint`` on a second line when present."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(KubectlSparkError):
    """The command line itself is wrong (kubectl uses exit code 1 for these too)."""


class ConfigError(KubectlSparkError):
    """No usable kubeconfig, context or credentials."""


class LocalStoreError(KubectlSparkError):
    """The local store (``--history-db``) cannot be used as it is; it was left untouched."""


class ClusterUnreachable(KubectlSparkError):
    """The API server could not be reached or did not answer in time."""

    def __init__(self, message: str, *, lasting: bool = False, unsent: bool = False) -> None:
        super().__init__(message)
        self.lasting = lasting  # refused, or an untrusted certificate: retrying will not help
        self.unsent = unsent  # it failed before the request left (no connection was made)


class DeadlineExceeded(ClusterUnreachable):
    """No whole answer within --request-timeout (or the command's deadline): not retried."""


class OutcomeUnknown(ClusterUnreachable):
    """A write was sent but its answer never came: it may or may not have been applied.

    An action re-reads the object to learn which (kube/outcome.py); nothing re-sends it.
    """


class ContextsFailed(KubectlSparkError):
    """Some of several contexts did not answer (``--context a,b``).

    The others' answer was printed; each failure is named, and the exit is not zero, as
    kubectl's is for a partial list.
    """

    @classmethod
    def of(cls, failed: list[tuple[str, str]], of_total: int) -> ContextsFailed:
        said = "; ".join(f'context "{name}": {why}' for name, why in failed)
        if of_total == 1:
            return cls(said)
        return cls(f"{len(failed)} of {of_total} contexts did not answer: {said}")


class ApiRequestError(KubectlSparkError):
    """The API server answered with an error status."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        reason: str = "",
        hint: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.reason = reason
        self.retry_after = retry_after  # seconds, from a 429's or 503's Retry-After


class Unauthorized(ApiRequestError):
    pass


class Forbidden(ApiRequestError):
    pass


class NotFound(ApiRequestError):
    pass


class Conflict(ApiRequestError):
    pass


class Gone(ApiRequestError):
    pass


class ServerError(ApiRequestError):
    pass
