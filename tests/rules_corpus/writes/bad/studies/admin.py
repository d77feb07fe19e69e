"""An admin action that writes by itself instead of through a service."""
from django.contrib import admin
from django.db import connections


@admin.action(description="Close")
def close(modeladmin, request, queryset):
    queryset.update(status="closed")  # flagged: writes-outside-services
    cursor = connections["default"].cursor()  # flagged: writes-raw-sql
    cursor.executemany("""INSERT INTO x VALUES (%s)""", [])  # flagged: writes-outside-services
