"""The console's exceptions.

::

    SeawayError
     └── ConsoleError            a failure a page shows in one sentence (status 502/400/404...)
          ├── BackendError       a Kafka, Connect or registry answer that refuses (its code and message)
          │    └── LoginRequired a REST backend wants credentials the console does not have (401)
          └── Forbidden          CSRF token missing or wrong, read-only mode, cross-site request (403)

Foreign exceptions (httpx, confluent-kafka) are translated where they are caught, at the
client modules' edges, so pages only ever handle these.
"""

from __future__ import annotations

from seaway.errors import SeawayError

__all__ = ["BackendError", "ConsoleError", "Forbidden", "LoginRequired"]


class ConsoleError(SeawayError):
    """A failure with a message fit for the page, and the HTTP status the console answers with."""

    def __init__(self, message: str, status: int = 502, *, retriable: bool = False) -> None:
        super().__init__(message, retriable=retriable)
        self.message = message
        self.status = status


class BackendError(ConsoleError):
    """A backend refused or failed: ``backend`` names it (``connect main``, ``registry``, ``kafka``)."""

    def __init__(self, backend: str, message: str, status: int = 502, *, code: int | None = None) -> None:
        super().__init__(f"{backend}: {message}", status)
        self.backend = backend
        self.detail = message
        self.code = code


class LoginRequired(BackendError):
    """The backend answered 401: the user must log in (or their credentials are no longer valid)."""

    def __init__(self, backend: str) -> None:
        super().__init__(backend, "authentication required", 401, code=401)


class Forbidden(ConsoleError):
    """The console refuses the request itself (403)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 403)
