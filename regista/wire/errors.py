"""An error answered to an HTTP client as JSON, in the shape the client expects
(regista's own, Anthropic's or OpenAI's): what reading a body of the wire raises for a
body a client got wrong.
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["ErrorShape", "HttpError"]

ErrorShape = Literal["regista", "anthropic", "openai"]


class HttpError(Exception):
    """An error answered to the client as JSON.

    Args:
        status: The HTTP status.
        message: One line for a person.
        type: A machine-readable kind (``invalid_request_error``, ``not_found_error``, …).
        shape: Whose error JSON to answer with.
        extra: More fields for the error object (e.g. a divergence's step and diff).
        headers: Extra response headers.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str | None = None,
        shape: ErrorShape = "regista",
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type or _default_type(status)
        self.shape: ErrorShape = shape
        self.extra = extra or {}
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        """The error JSON in :attr:`shape`."""
        error: dict[str, Any] = {"type": self.type, "message": self.message, **self.extra}
        if self.shape == "anthropic":
            return {"type": "error", "error": error}
        if self.shape == "openai":
            error.setdefault("param", None)
            error.setdefault("code", self.type)
            return {"error": error}
        return {"error": error}


def _default_type(status: int) -> str:
    return {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        405: "invalid_request_error",
        409: "conflict_error",
        413: "request_too_large",
        502: "upstream_error",
    }.get(status, "api_error")
