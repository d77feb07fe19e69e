"""The admin: a window on what the services own, and actions that call them.

Every model here is written by its app's services, which lock, check the lifecycle, keep
the audit trail and announce changes to the analysis. A form in the admin would do none of
that (a changed status without a reason or a lock; a deleted membership taking its ratings
with it whatever the study's withdrawal policy), so the admin shows these models read-only
and changes them only through actions that call the services.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import unquote
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse

from studies.services import RATER_ACTIONS, rater_status_change, tokens
from studies.services.webhooks import webhook_delivery_replay

from .errors import ApplicationError
from .models import ApiToken, Membership, Study, Webhook, WebhookDelivery
from .selectors import account_reads_blinded_labels


class ServiceOwnedAdmin(admin.ModelAdmin):
    """A model its app's services own: viewable; added, changed or deleted only by them."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_act_permission(self, request) -> bool:
        """Who may run this admin's actions: the staff allowed to change the model."""
        meta = self.model._meta
        return request.user.has_perm(f"{meta.app_label}.change_{meta.model_name}")


class ReasonForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
        help_text="Kept in the study's history with your name.",
    )


def action_with_form(modeladmin, request, queryset, *, form_class, title, apply):
    """Ask for the action's form on a page of its own, then ``apply(membership, data)`` to
    each selected row through a service, one message per row; a refusal names its reason."""
    form = form_class(request.POST if "apply" in request.POST else None)
    if form.is_valid():
        for row in queryset:
            try:
                done = apply(row, form.cleaned_data)
            except ApplicationError as error:
                messages.error(request, f"{row.study.slug} {row}: nothing was changed. {error}")
            else:
                messages.success(request, f"{row.study.slug} {row}: {done}")
        return None  # back to the list
    return TemplateResponse(
        request,
        "admin/action_form.html",
        {
            **modeladmin.admin_site.each_context(request),
            "title": title,
            "opts": modeladmin.model._meta,
            "queryset": queryset,
            "form": form,
            "action": request.POST["action"],
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        },
    )


def _status_action(action: str, description: str):
    @admin.action(description=description, permissions=["act"])
    def run(modeladmin, request, queryset):
        def apply(membership, data):
            changed = rater_status_change(
                membership=membership, action=action, reason=data["reason"], actor=request.user
            )
            return f"now {changed.get_status_display().lower()}."

        return action_with_form(
            modeladmin,
            request,
            queryset.select_related("study", "user"),
            form_class=ReasonForm,
            title=f"{description}: give the reason",
            apply=apply,
        )

    run.__name__ = f"rater_{action}"
    return run


@admin.register(Study)
class StudyAdmin(ServiceOwnedAdmin):
    """Read-only: settings, status changes and unblinding are the app's, recorded there."""

    list_display = ["name", "slug", "status", "lead", "created_at"]
    list_filter = ["status"]
    search_fields = ["name", "slug"]


@admin.register(Membership)
class MembershipAdmin(ServiceOwnedAdmin):
    """Read-only; raters are paused, reinstated or excluded by actions that ask the reason
    and call ``rater_status_change`` (the lock, the audit trail, the analysis told)."""

    list_display = [
        "study", "user", "role", "pseudonym", "status", "joined_via", "joined_by", "created_at",
    ]  # fmt: skip
    list_filter = ["role", "status", "joined_via"]
    search_fields = ["study__slug", "user__username", "pseudonym"]
    actions = [
        _status_action(name, f"{name.capitalize()} the selected raters")
        for name in RATER_ACTIONS
        if name in ("pause", "retrain", "exclude", "reinstate")
    ]


@admin.register(ApiToken)
class ApiTokenAdmin(ServiceOwnedAdmin):
    """Read-only: only a token's owner creates it (shown once); staff may revoke a leaked one."""

    list_display = ["name", "user", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "user__username", "prefix"]
    fields = list_display
    actions = ["revoke"]

    @admin.action(description="Revoke the selected tokens", permissions=["act"])
    def revoke(self, request, queryset):
        for token in queryset.filter(revoked_at=None).select_related("user"):
            tokens.api_token_revoke(user=token.user, token_uuid=token.uuid)
        messages.success(request, "Revoked; they no longer work.")


@admin.register(Webhook)
class WebhookAdmin(ServiceOwnedAdmin):
    """Read-only, without its secret: only the study lead adds or removes a webhook."""

    list_display = ["url", "study", "events", "milestone_every", "created_at"]
    search_fields = ["url", "study__slug"]
    fields = ("uuid", "study", "url", "events", "milestone_every", "last_milestone", "created_at")
    readonly_fields = fields


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ServiceOwnedAdmin):
    """Read-only, with every attempt; the replay action sends an event again through
    ``webhook_delivery_replay`` (a new delivery, the same event id, recorded in the study's
    history)."""

    list_display = ["event", "webhook", "status", "created_at", "delivered_at"]
    list_filter = ["status", "event"]
    search_fields = ["webhook__url", "webhook__study__slug", "event_id"]
    fields = (
        "uuid", "webhook", "event", "event_id", "status", "payload", "attempts",
        "next_attempt_at", "created_at", "delivered_at", "replay_of",
    )  # fmt: skip
    readonly_fields = fields
    actions = ["replay"]

    @admin.action(description="Replay the selected deliveries", permissions=["act"])
    def replay(self, request, queryset):
        for delivery in queryset.select_related("webhook__study"):
            try:
                webhook_delivery_replay(delivery=delivery, actor=request.user)
            except ApplicationError as error:
                messages.error(request, f"{delivery}: not replayed. {error}")
            else:
                messages.success(request, f"{delivery}: sent again, event {delivery.event_id}.")


# Django's own user admin, with one rule added (issue 38): an administrator reads every
# study's texts by system, so with a rater's or adjudicator's password (or the address a
# reset link goes to) they would read the same texts under their labels. While the account
# takes part in a study not yet unblinded, its password form is refused and its e-mail
# address cannot be changed here; the person changes their own.
admin.site.unregister(User)


@admin.register(User)
class AccountAdmin(UserAdmin):
    def get_readonly_fields(self, request, obj=None):
        fields = tuple(super().get_readonly_fields(request, obj))
        if obj is not None and account_reads_blinded_labels(user=obj):
            return (*fields, "email")
        return fields

    def user_change_password(self, request, id, form_url=""):
        user = self.get_object(request, unquote(id))
        if user is not None and account_reads_blinded_labels(user=user):
            messages.error(request, SETTING_REFUSED)
            return redirect(reverse("admin:auth_user_change", args=[user.pk]))
        return super().user_change_password(request, id, form_url)


SETTING_REFUSED = (
    "This account rates or adjudicates in a study not yet unblinded: no administrator may "
    "set its password, since an administrator sees which system wrote each response. The "
    "person sets their own (Forgot your password? on the sign-in page)."
)
