from django.contrib import admin

from .models import Membership, Study


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "status", "lead", "created_at"]
    list_filter = ["status"]
    search_fields = ["name", "slug"]
    # Status changes, unblinding and the frozen protocol go through the recorded services
    # in the app (studies.services, studies.unblinding), never through a form here.
    readonly_fields = [
        "status", "lead", "blinding_seed", "protocol_fingerprint", "opened_at", "closed_at",
        "unblinded_at", "rubric",
    ]  # fmt: skip


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["study", "user", "role", "pseudonym", "status"]
    list_filter = ["role", "status"]
