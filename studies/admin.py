from django.contrib import admin, messages

from studies.services import tokens

from . import selectors
from .errors import ApplicationError
from .events import study_event_record
from .models import ApiToken, Membership, Study, StudyEvent
from .services import SETTINGS_FIELDS, study_update
from .signals import analysis_inputs_announce

# Part of the protocol raters saw or the analysis was registered with: read-only here once
# the study's set-up is locked (open, or rating has started), as it is in the app.
PROTOCOL_FIELDS = [
    "instructions", "success_alpha", "success_min_dimensions", "raters_per_item", "side_mode",
    "consent_text", "consent_version", "disclosure_question",
]  # fmt: skip


def _record_admin_change(request, *, study_id: int, action: str, fields, membership=None, **extra):
    # The admin is an unaudited way around the app's services unless it leaves a trace too.
    study_event_record(
        study_id=study_id,
        actor=request.user,
        kind=StudyEvent.Kind.ADMIN_CHANGED,
        membership=membership,
        action=action,
        fields=sorted(fields),
        **extra,
    )


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "status", "lead", "created_at"]
    list_filter = ["status"]
    search_fields = ["name", "slug"]
    # Status changes, unblinding and the frozen protocol go through the recorded services
    # in the app (studies.services, studies.services.unblinding), never through a form here.
    # The consent version is the settings service's to bump when the consent text changes.
    readonly_fields = [
        "status", "lead", "blinding_seed", "protocol_fingerprint", "opened_at", "closed_at",
        "unblinded_at", "rubric", "consent_version",
    ]  # fmt: skip

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and selectors.study_setup_locked_reason(study=obj):
            fields += [name for name in PROTOCOL_FIELDS if name not in fields]
        return fields

    def save_model(self, request, obj, form, change):
        settings = {f: form.cleaned_data[f] for f in form.changed_data if f in SETTINGS_FIELDS}
        if change and settings:
            # The study's settings have one owner, whatever the form: it refuses what the
            # lifecycle forbids, bumps the consent version, records and announces.
            try:
                updated = study_update(
                    study=Study.objects.get(pk=obj.pk), actor=request.user, changes=settings
                )
            except ApplicationError as error:
                messages.error(request, f"Nothing was saved: {error}")
                return
            for field in [*settings, "consent_version"]:
                setattr(obj, field, getattr(updated, field))
        super().save_model(request, obj, form, change)
        if form.changed_data or not change:
            _record_admin_change(
                request,
                study_id=obj.pk,
                action="changed" if change else "added",
                fields=form.changed_data,
                object="study",
            )


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["study", "user", "role", "pseudonym", "status"]
    list_filter = ["role", "status"]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if form.changed_data or not change:
            _record_admin_change(
                request,
                study_id=obj.study_id,
                membership=obj,
                action="changed" if change else "added",
                fields=form.changed_data,
                object="membership",
            )
            # Who is a rater, and their status, decide whose ratings the analysis reads.
            analysis_inputs_announce(study_id=obj.study_id, reason="rater_status")

    def delete_model(self, request, obj):
        self._record_deleted(request, obj)
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        for membership in queryset:
            self._record_deleted(request, membership)
        super().delete_queryset(request, queryset)

    def _record_deleted(self, request, membership: Membership) -> None:
        _record_admin_change(
            request,
            study_id=membership.study_id,
            action="deleted",
            fields=[],
            object="membership",
            pseudonym=membership.pseudonym,
            role=membership.role,
        )
        analysis_inputs_announce(study_id=membership.study_id, reason="rater_status")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Read-only: only a token's owner creates it (shown once); staff may revoke a leaked one."""

    list_display = ["name", "user", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "user__username", "prefix"]
    readonly_fields = list_display
    fields = list_display
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        for token in queryset.filter(revoked_at=None).select_related("user"):
            tokens.api_token_revoke(user=token.user, token_uuid=token.uuid)
        messages.success(request, "Revoked; they no longer work.")
