"""The OpenAPI schema and its browsable page, loaded on their first request: drf-spectacular's
schema generator is not imported by a web process that never serves them
(tests/test_lean_imports.py). The schema costs about a second to build: it has a throttle
of its own, per address (``core.api_request.SchemaThrottle``)."""

from django.views.decorators.csrf import csrf_exempt

from core.api_request import SchemaThrottle


def _on_first_request(view_name: str, **initkwargs):
    """drf-spectacular's class-based view ``view_name``, imported and built when first called."""
    built = []

    # As drf-spectacular's own views are: an API answer, never refused by the CSRF check.
    @csrf_exempt
    def view(request, *args, **kwargs):
        if not built:
            from drf_spectacular import views

            built.append(getattr(views, view_name).as_view(**initkwargs))
        return built[0](request, *args, **kwargs)

    return view


openapi = _on_first_request("SpectacularJSONAPIView", throttle_classes=[SchemaThrottle])
docs = _on_first_request("SpectacularSwaggerSplitView", url_name="api:openapi")
