"""Errors that services raise for bad input; routes turn them into 4xx answers."""

from __future__ import annotations


class ServiceError(Exception):
    """Bad input: nothing was stored. ``status`` is the HTTP status the routes answer with."""

    status = 400

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class NotFound(ServiceError):
    status = 404


class Invalid(ServiceError):
    status = 422


class Conflict(ServiceError):
    status = 409


class Unauthorized(ServiceError):
    status = 401


class Forbidden(ServiceError):
    status = 403
