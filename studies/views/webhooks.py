"""The study lead's Webhooks page: add a URL (its secret shown once), remove one, read its
deliveries with every attempt, replay one. The same services as the API."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from studies import access
from studies.errors import ApplicationError
from studies.models import Webhook
from studies.services.webhooks import (
    MAX_WEBHOOKS_PER_STUDY,
    webhook_add,
    webhook_delivery_replay,
    webhook_remove,
)
from studies.webhook_transport import MAX_URL_LENGTH
from studies.webhooks import MILESTONE_EVERY_MAX

DELIVERIES_PER_PAGE = 50


class WebhookForm(forms.Form):
    url = forms.CharField(
        label="URL",
        max_length=MAX_URL_LENGTH,
        help_text="http:// or https://, on a public address. Events are POSTed to it as JSON.",
    )
    events = forms.MultipleChoiceField(
        choices=Webhook.Event.choices, widget=forms.CheckboxSelectMultiple
    )
    milestone_every = forms.IntegerField(
        label="Rating milestone every",
        min_value=1,
        max_value=MILESTONE_EVERY_MAX,
        initial=100,
        help_text="A rating milestone is sent each time the study's submitted ratings (one per "
        "rater and case) reach a multiple of this number.",
    )


def _page(request, study, *, form=None, secret=None, status=200):
    response = render(
        request,
        "studies/webhooks.html",
        {
            "study": study,
            "webhooks": study.webhooks.order_by("created_at", "pk"),
            "form": form or WebhookForm(),
            "secret": secret,
            "limit": MAX_WEBHOOKS_PER_STUDY,
        },
        status=status,
    )
    if secret:
        response["Cache-Control"] = "no-store"
    return response


@never_cache
@login_required
def webhook_list(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    if request.method != "POST":
        return _page(request, study)
    form = WebhookForm(request.POST)
    if form.is_valid():
        try:
            _, secret = webhook_add(study=study, actor=request.user, **form.cleaned_data)
        except ApplicationError as error:
            form.add_error(None, str(error))
            for problem in error.problems:
                form.add_error(None, problem)
        else:
            # The secret is shown in this response only.
            return _page(request, study, secret=secret)
    return _page(request, study, form=form, status=400)


@login_required
@require_GET
def webhook_detail(request, slug, webhook_uuid):
    study, webhook = access.get_webhook_for_user(request.user, slug, webhook_uuid)
    deliveries = webhook.deliveries.select_related("replay_of").order_by("-created_at", "-pk")
    page = Paginator(deliveries, DELIVERIES_PER_PAGE).get_page(request.GET.get("page"))
    return render(
        request, "studies/webhook.html", {"study": study, "webhook": webhook, "page": page}
    )


@login_required
@require_POST
def webhook_remove_view(request, slug, webhook_uuid):
    _, webhook = access.get_webhook_for_user(request.user, slug, webhook_uuid)
    try:
        webhook_remove(webhook=webhook, actor=request.user)
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Webhook to {webhook.url} removed.")
    return redirect("studies:webhooks", slug=slug)


@login_required
@require_POST
def webhook_replay(request, slug, webhook_uuid, delivery_uuid):
    _, webhook = access.get_webhook_for_user(request.user, slug, webhook_uuid)
    delivery = webhook.deliveries.filter(uuid=delivery_uuid).first()
    if delivery is None:
        raise Http404
    try:
        webhook_delivery_replay(delivery=delivery, actor=request.user)
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"The {delivery.event} event is being sent again.")
    return redirect("studies:webhook", slug=slug, webhook_uuid=webhook.uuid)
