"""Every URL the project answers, from the resolver and from the API's served schema.

Shared by the tests that must cover every page and endpoint (the access matrices, the
key-swap blinding test), so that a new view is enumerated by all of them at once.
"""

from django.apps import apps
from django.urls import URLPattern, URLResolver, get_resolver

# Django's admin is one namespace for all its URLs (one per registered model and action).
ADMIN_NAMESPACE = "admin"
# The HTTP API signs in by token, not session.
API_NAMESPACE = "api"
SCHEMA_METHODS = ("get", "put", "post", "patch", "delete")


def _walk(patterns, namespace=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            inner = entry.namespace or ""
            prefix = f"{namespace}:{inner}" if namespace and inner else (inner or namespace)
            yield from _walk(entry.url_patterns, prefix)
        elif isinstance(entry, URLPattern):
            if entry.name is None:
                # Only Django's admin has one: its catch-all, which sends to its sign-in.
                yield (f"{namespace}:" if namespace else None), entry
                continue
            name = f"{namespace}:{entry.name}" if namespace else entry.name
            yield name, entry


def project_urls() -> list[tuple[str, URLPattern]]:
    """Every URL pattern of the resolver as (namespaced name, pattern)."""
    return list(_walk(get_resolver().url_patterns))


def api_urls() -> list[tuple[str, URLPattern]]:
    return [(n, p) for n, p in project_urls() if n and n.startswith(f"{API_NAMESPACE}:")]


def pattern_args(pattern: URLPattern) -> list[str]:
    """The names of a pattern's path arguments."""
    return list(pattern.pattern.regex.groupindex)


def admin_url_model(name: str):
    """The model an admin URL's name is about ("admin:studies_study_change"), or None."""
    action_model = name.split(":", 1)[1]
    for model in apps.get_models():
        if action_model.startswith(f"{model._meta.app_label}_{model._meta.model_name}_"):
            return model
    return None


def schema_operations(schema: dict) -> list[tuple[str, str, dict]]:
    """Every operation of an OpenAPI schema as (METHOD, path template, operation)."""
    return [
        (method.upper(), path, operation)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if method in SCHEMA_METHODS
    ]


def in_chunk(urls: list, chunk: int, chunks: int) -> list:
    """Every ``chunks``-th of ``urls`` from the ``chunk``-th: the slow enumerations run as a
    few tests, each well inside its own time limit, and a parallel run shares them out. Taken
    in turn rather than in blocks, so the admin's many quick URLs and the apps' pages are
    spread evenly."""
    return urls[chunk::chunks]
