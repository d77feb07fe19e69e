"""The HTTP API's comments digest: the raters' comments on a study, and marking them read.

The same access helpers, forms, selectors and services as the pages, never their views."""

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object, form_errors
from studies import access

from .forms import CommentDigestForm
from .selectors.comments import (
    MAX_PAGE_SIZE,
    PAGE_SIZE,
    CommentSource,
    comments_digest,
    comments_unread_count,
)
from .services.comment_reads import MAX_KEYS, comments_mark_read

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}


def _study(request, slug, role=access.COORDINATOR):
    study, _ = access.get_study_for_user(request.user, slug, role=role)
    return study


class CommentSerializer(serializers.Serializer):
    """One comment of the digest (``annotation.selectors.comments.Comment``)."""

    key = serializers.CharField(help_text="names the comment in a read mark")
    # The field's name shadows Field.source in the stubs; the API's name is the contract.
    source = serializers.ChoiceField(choices=CommentSource.choices)  # type: ignore[assignment]
    when = serializers.DateTimeField()
    rater = serializers.CharField(help_text="the rater's pseudonym")
    case = serializers.CharField(help_text="the test case id; empty for feedback")
    stratum = serializers.CharField()
    dimension = serializers.CharField(help_text="the dimension's name, where one")
    dimension_key = serializers.CharField()
    response = serializers.CharField(
        help_text='"Response B": the label the rater saw on screen, never the key\'s'
    )
    reason = serializers.CharField(help_text="a skip's reason")
    text = serializers.CharField()
    read = serializers.BooleanField(help_text="read by you since it was last written")


_DIGEST_QUERY = [
    OpenApiParameter("since", OpenApiTypes.DATE, OpenApiParameter.QUERY, required=False),
    OpenApiParameter("dimension", str, OpenApiParameter.QUERY, required=False),
    OpenApiParameter("stratum", str, OpenApiParameter.QUERY, required=False),
    OpenApiParameter(
        "source", str, OpenApiParameter.QUERY, required=False, enum=CommentSource.values
    ),
    OpenApiParameter("unread", bool, OpenApiParameter.QUERY, required=False),
    OpenApiParameter("after", str, OpenApiParameter.QUERY, required=False),
    OpenApiParameter("page_size", int, OpenApiParameter.QUERY, required=False),
]


@extend_schema(
    summary="The comments digest (QC-006): the raters' free-text comments, newest first",
    description=(
        "Rating notes, flag notes, skips, end-of-study feedback and withdrawal reasons, "
        "with your own read mark on each. Pages by keyset: follow `next` (null on the last "
        f"page); `page_size` up to {MAX_PAGE_SIZE}. `unread` counts every comment you have "
        "not read, whatever the filters."
    ),
    parameters=_DIGEST_QUERY,
    responses={
        200: inline_serializer(
            "CommentDigest",
            {
                "unread": serializers.IntegerField(),
                "next": serializers.URLField(allow_null=True),
                "results": CommentSerializer(many=True),
            },
        ),
        **ERRORS,
    },
)
@api_view(["GET"])
def study_comments(request, slug):
    study = _study(request, slug)
    form = CommentDigestForm.for_study(study, request.query_params)
    if not form.is_valid():
        raise form_errors(form)
    try:
        size = int(request.query_params.get("page_size") or PAGE_SIZE)
    except ValueError:
        raise exceptions.ValidationError(["page_size: must be a whole number."]) from None
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise exceptions.ValidationError([f"page_size: from 1 to {MAX_PAGE_SIZE}."])
    page = comments_digest(study=study, reader=request.user, filters=form.filters(), limit=size)
    following = None
    if page.next is not None:
        query = request.query_params.copy()
        query["after"] = page.next.encode()
        following = request.build_absolute_uri(f"{request.path}?{query.urlencode()}")
    return Response(
        {
            "unread": comments_unread_count(study=study, reader=request.user),
            "next": following,
            "results": CommentSerializer(page.comments, many=True).data,
        }
    )


@extend_schema(
    summary="Mark comments of the digest as read by you (idempotent)",
    request=inline_serializer(
        "CommentsRead",
        {"keys": serializers.ListField(child=serializers.CharField(), max_length=MAX_KEYS)},
    ),
    responses={
        200: inline_serializer("CommentsMarked", {"marked": serializers.IntegerField()}),
        **ERRORS,
    },
)
@api_view(["POST"])
def study_comments_read(request, slug):
    study = _study(request, slug)
    keys = body_object(request, fields=("keys",)).get("keys")
    if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
        raise exceptions.ValidationError(["keys: a list of the comments' keys."])
    marked = comments_mark_read(study=study, reader=request.user, keys=keys[: MAX_KEYS + 1])
    return Response({"marked": marked})


urlpatterns = [
    path("studies/<slug:slug>/comments/", study_comments, name="comments"),
    path("studies/<slug:slug>/comments/read/", study_comments_read, name="comments_read"),
]
