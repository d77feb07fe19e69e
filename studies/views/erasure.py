"""Administrators erase one person's identity on request (the right to erasure): a reason,
a confirmation step showing what will be erased, and the list of past erasures.

Administrators only: a coordinator never reaches it (403), so no coordinator learns which
account an erased pseudonym belonged to.
"""

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache

from studies import retention
from studies.errors import ApplicationError
from studies.services.erasure import MAX_REASON_CHARS, erasure_refusal, identity_erase


class ErasureForm(forms.Form):
    username = forms.CharField(
        max_length=150, help_text="The account's username, or its e-mail address."
    )
    reason = forms.CharField(
        max_length=MAX_REASON_CHARS,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=(
            "Recorded with the erasure and in each study's audit trail, e.g. “request by "
            "e-mail of 30 November”. Do not name the person."
        ),
    )


def _account(name: str):
    """The account a username (exact, else the one that matches whatever the case) or an
    e-mail address names; None when none or several do."""
    accounts = get_user_model().objects
    name = name.strip().replace("\x00", "")
    for lookup in ({"username": name}, {"username__iexact": name}, {"email__iexact": name}):
        if not name:
            break
        found = list(accounts.filter(**lookup)[:2])
        if len(found) == 1:
            return found[0]
    return None


def _page(request, *, form=None, status=200):
    return render(
        request,
        "studies/erasure.html",
        {"form": form or ErasureForm(), "erasures": retention.identity_erasures()},
        status=status,
    )


@never_cache
@login_required
def erasure(request):
    """GET: the form and past erasures. POST: the confirmation page, then (confirmed) the
    erasure."""
    if not request.user.is_staff:
        raise PermissionDenied
    if request.method != "POST":
        return _page(request)
    form = ErasureForm(request.POST)
    if not form.is_valid():
        return _page(request, form=form, status=400)
    user = _account(form.cleaned_data["username"])
    if user is None:
        form.add_error("username", "There is no account with that username or e-mail address.")
        return _page(request, form=form, status=400)
    refusal = erasure_refusal(user)
    if refusal:
        form.add_error("username", refusal)
        return _page(request, form=form, status=400)
    if request.POST.get("confirm") != "yes":
        preview = retention.erasure_preview(user=user)
        return render(
            request, "studies/erasure_confirm.html", {"form": form, "account": user, **preview}
        )
    try:
        result = identity_erase(user=user, reason=form.cleaned_data["reason"], by=request.user)
    except ApplicationError as error:
        form.add_error(None, str(error))
        return _page(request, form=form, status=400)
    messages.success(request, result.summary())
    return redirect("studies:erasure")
