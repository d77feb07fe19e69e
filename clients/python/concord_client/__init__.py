"""A small Python client for Concord's HTTP API. See README.md."""

from .client import Concord
from .errors import (
    ApiError,
    AuthenticationFailed,
    BadRequest,
    ConcordError,
    Conflict,
    JobFailed,
    JobTimeout,
    NotFound,
    PermissionDenied,
    Problem,
    ServerError,
    Throttled,
    TooLarge,
    TransportError,
)
from .transport import RetryPolicy

__all__ = [
    "ApiError",
    "AuthenticationFailed",
    "BadRequest",
    "Concord",
    "ConcordError",
    "Conflict",
    "JobFailed",
    "JobTimeout",
    "NotFound",
    "PermissionDenied",
    "Problem",
    "RetryPolicy",
    "ServerError",
    "Throttled",
    "TooLarge",
    "TransportError",
]
__version__ = "0.1.0"
