"""The comments digest (QC-006): every free-text comment of a study's raters on one page,
with each coordinator's own read marks."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.selectors.comments import comments_digest, comments_unread_count
from annotation.services.comment_reads import CommentReadError, comments_mark_read
from studies import access

from ..forms import CommentDigestForm

# The filters a mark's form carries back to the page (bounded like any other input).
MAX_QUERY_CHARS = 1000


@login_required
@require_GET
def comments_digest_page(request, slug):
    """The study's comments, newest first; coordinators read them and mark them read."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    form = CommentDigestForm.for_study(study, request.GET)
    if not form.is_valid():
        return render(
            request,
            "annotation/coordinator/comments.html",
            {"study": study, "form": form, "page": None},
            status=400,
        )
    page = comments_digest(study=study, reader=request.user, filters=form.filters())
    query = request.GET.copy()
    query.pop("after", None)
    following = None
    if page.next is not None:
        following = query.copy()
        following["after"] = page.next.encode()
    return render(
        request,
        "annotation/coordinator/comments.html",
        {
            "study": study,
            "form": form,
            "page": page,
            "unread": comments_unread_count(study=study, reader=request.user),
            "query": request.GET.urlencode(),
            "first_query": query.urlencode() if form.cleaned_data.get("after") else None,
            "next_query": following.urlencode() if following is not None else None,
        },
    )


@login_required
@require_POST
def comments_mark_read_view(request, slug):
    """Mark one comment, or every comment shown, as read by the person signed in."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    keys = request.POST.getlist("key")
    try:
        marked = comments_mark_read(study=study, reader=request.user, keys=keys)
    except CommentReadError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{marked} comment{'s' if marked != 1 else ''} marked as read.")
    # Back to the same filters and page: only the digest's own address, with its query.
    query = QueryDict(request.POST.get("query", "")[:MAX_QUERY_CHARS])
    url = reverse("annotation:comments", args=[study.slug])
    return redirect(f"{url}?{query.urlencode()}" if query else url)
