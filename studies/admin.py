from django.contrib import admin

from .models import Membership, Study


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "status", "lead", "created_at"]
    list_filter = ["status"]
    search_fields = ["name", "slug"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["study", "user", "role", "pseudonym", "status"]
    list_filter = ["role", "status"]
