"""The rating side's records in the admin: read-only, as every model the services own.

Records of what raters did are never edited by hand; training items and the onboarding
settings are the coordinator's, on the study's pages. The one action here is recording a
withdrawal a rater asked for elsewhere, through the participation service, so that the
study's withdrawal policy decides what happens to their ratings.
"""

from django import forms
from django.contrib import admin

from studies.admin import MembershipAdmin, ReasonForm, ServiceOwnedAdmin, action_with_form
from studies.models import Membership

from .models import (
    ConsentRecord,
    OnboardingSettings,
    QualificationAttempt,
    RatingRevision,
    StudyFeedback,
    TrainingItem,
    Withdrawal,
)


class WithdrawalForm(ReasonForm):
    data = forms.ChoiceField(
        label="The rater's choice",
        choices=[("", "-"), *Withdrawal.Data.choices],
        required=False,
        help_text="Used only where the study lets the rater choose; otherwise its consent decides.",
    )


@admin.action(description="Withdraw the selected raters (under the study's policy)")
def rater_withdraw(modeladmin, request, queryset):
    # Imported here: the services import the statistics (numpy), which the admin's
    # registration at start-up does not need (apps.py).
    from .services.participation import withdrawal_record

    def apply(membership, data):
        withdrawal = withdrawal_record(
            rater=membership, data=data["data"] or None, reason=data["reason"], actor=request.user
        )
        return f"withdrawn; {withdrawal.ratings_deleted} ratings deleted."

    return action_with_form(
        modeladmin,
        request,
        queryset.select_related("study", "user"),
        form_class=WithdrawalForm,
        title="Withdraw the selected raters: give the reason",
        apply=apply,
    )


rater_withdraw.allowed_permissions = ("act",)

# Withdrawal is annotation's (it decides about ratings), so the memberships' admin, which
# studies registers, gains the action here rather than studies importing annotation.
admin.site.unregister(Membership)


@admin.register(Membership)
class RaterMembershipAdmin(MembershipAdmin):
    actions = [*MembershipAdmin.actions, rater_withdraw]


@admin.register(ConsentRecord)
class ConsentRecordAdmin(ServiceOwnedAdmin):
    list_display = ["rater", "version", "prior_knowledge", "agreed_at"]
    list_filter = ["rater__study"]


@admin.register(QualificationAttempt)
class QualificationAttemptAdmin(ServiceOwnedAdmin):
    list_display = ["rater", "number", "percent", "passed", "finished_at"]
    list_filter = ["rater__study", "passed"]


@admin.register(Withdrawal)
class WithdrawalAdmin(ServiceOwnedAdmin):
    list_display = ["rater", "data", "chosen_by_rater", "ratings_deleted", "withdrawn_at"]


@admin.register(StudyFeedback)
class StudyFeedbackAdmin(ServiceOwnedAdmin):
    list_display = ["rater", "submitted_at", "updated_at"]


@admin.register(RatingRevision)
class RatingRevisionAdmin(ServiceOwnedAdmin):
    list_display = ["assignment", "submitted_at", "replaced_at"]


@admin.register(TrainingItem)
class TrainingItemAdmin(ServiceOwnedAdmin):
    list_display = ["title", "study", "kind", "position"]
    list_filter = ["kind", "study"]


@admin.register(OnboardingSettings)
class OnboardingSettingsAdmin(ServiceOwnedAdmin):
    list_display = ["study", "pass_percent", "tolerance", "max_attempts", "withdrawal_data"]
