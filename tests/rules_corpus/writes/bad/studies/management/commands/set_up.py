"""Writes in a management command (issue 37: never read by the old test)."""
from django.core.management.base import BaseCommand

from studies.models import Study, TestCase


class Command(BaseCommand):
    def handle(self, *args, **options):
        study, _ = Study.objects.get_or_create(slug="demo")  # flagged: writes-outside-services
        Study.objects.update_or_create(slug="x", defaults={"name": "X"})  # flagged: writes-outside-services
        TestCase.objects.bulk_create([TestCase(study=study)])  # flagged: writes-outside-services
        TestCase.objects.bulk_update([], ["position"])  # flagged: writes-outside-services
        study.test_cases.all().delete()  # flagged: writes-outside-services
        study.delete()  # flagged: writes-outside-services
        Study.objects.create(slug="y")  # flagged: writes-outside-services
    study.events.create(kind="x")  # flagged: writes-outside-services
    Study.objects.update({"name": "y"})  # flagged: writes-outside-services
