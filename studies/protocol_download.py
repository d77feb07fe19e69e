"""The protocol document as a download: one rule for when it is released, one response,
served by the study's Protocol link and by the API (``studies/api_protocol.py``)."""

from django.core.exceptions import PermissionDenied
from django.http import StreamingHttpResponse

from studies import selectors
from studies.models import Study

NOT_RELEASED = (
    "The protocol document is released once the study is unblinded: it holds the "
    "blinding secret, and before that it would break the blinding."
)


def protocol_response(*, study: Study) -> StreamingHttpResponse:
    """The protocol document whose SHA-256 is the fingerprint, once the study is unblinded.

    It holds the response texts by label and the blinding secret, so before unblinding it
    would give the key to anyone who knows which system wrote which text.
    """
    if not study.is_unblinded:
        raise PermissionDenied(NOT_RELEASED)
    response = StreamingHttpResponse(
        selectors.study_protocol_chunks(study=study), content_type="application/json; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-protocol.json"'
    return response
