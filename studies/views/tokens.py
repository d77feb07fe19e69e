"""The signed-in person's own API tokens: create (shown once) and revoke."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from studies import selectors
from studies.errors import ApplicationError
from studies.services import tokens


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=tokens.MAX_NAME_CHARS,
        help_text="What will use it, e.g. “nightly evaluation pipeline”.",
    )


def _page(request, *, form=None, secret=None, status=200):
    response = render(
        request,
        "studies/tokens.html",
        {
            "tokens": selectors.api_tokens_for_user(user=request.user),
            "form": form or TokenForm(),
            "secret": secret,
        },
        status=status,
    )
    return response


@never_cache
@login_required
def token_list(request):
    """Only the person's own tokens: there is no id of anyone else's to ask for."""
    if request.method != "POST":
        return _page(request)
    form = TokenForm(request.POST)
    if form.is_valid():
        try:
            _, secret = tokens.api_token_create(user=request.user, name=form.cleaned_data["name"])
        except ApplicationError as error:
            form.add_error(None, str(error))
        else:
            # The secret exists only in this response: shown once, never stored.
            response = _page(request, secret=secret)
            response["Cache-Control"] = "no-store"
            return response
    return _page(request, form=form, status=400)


@login_required
@require_POST
def token_revoke(request, token_uuid):
    try:
        token = tokens.api_token_revoke(user=request.user, token_uuid=token_uuid)
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Token “{token.name}” revoked: it no longer works.")
    return redirect("studies:tokens")
