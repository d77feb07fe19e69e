"""Read-mostly admin views of the rating side's records, for administrators."""

from django.contrib import admin

from .models import (
    ConsentRecord,
    OnboardingSettings,
    QualificationAttempt,
    RatingRevision,
    StudyFeedback,
    TrainingItem,
    Withdrawal,
)


class RecordAdmin(admin.ModelAdmin):
    """Records of what raters did: viewable, never edited by hand."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(ConsentRecord)
class ConsentRecordAdmin(RecordAdmin):
    list_display = ["rater", "version", "prior_knowledge", "agreed_at"]
    list_filter = ["rater__study"]


@admin.register(QualificationAttempt)
class QualificationAttemptAdmin(RecordAdmin):
    list_display = ["rater", "number", "percent", "passed", "finished_at"]
    list_filter = ["rater__study", "passed"]


@admin.register(Withdrawal)
class WithdrawalAdmin(RecordAdmin):
    list_display = ["rater", "data", "chosen_by_rater", "ratings_deleted", "withdrawn_at"]


@admin.register(StudyFeedback)
class StudyFeedbackAdmin(RecordAdmin):
    list_display = ["rater", "submitted_at", "updated_at"]


@admin.register(RatingRevision)
class RatingRevisionAdmin(RecordAdmin):
    list_display = ["assignment", "submitted_at", "replaced_at"]


@admin.register(TrainingItem)
class TrainingItemAdmin(admin.ModelAdmin):
    list_display = ["title", "study", "kind", "position"]
    list_filter = ["kind", "study"]


@admin.register(OnboardingSettings)
class OnboardingSettingsAdmin(admin.ModelAdmin):
    list_display = ["study", "pass_percent", "tolerance", "max_attempts", "withdrawal_data"]
