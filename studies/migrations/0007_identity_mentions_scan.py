"""Scan the responses already imported, so the blinding check can read stored findings."""

from django.db import migrations

from studies.importing.identity_check import find_identity_mentions


def scan(apps, schema_editor):
    Study = apps.get_model("studies", "Study")
    Response = apps.get_model("studies", "Response")
    IdentityMention = apps.get_model("studies", "IdentityMention")
    for study in Study.objects.order_by("pk").iterator():
        IdentityMention.objects.filter(response__test_case__study=study).delete()
        rows = Response.objects.filter(test_case__study=study).values_list(
            "pk", "test_case__case_id", "system__name", "text"
        )
        keys = {}

        def texts(rows=rows, keys=keys):
            for pk, case_id, system, text in rows.iterator(chunk_size=2000):
                keys[case_id, system] = pk
                yield case_id, system, text

        systems = list(study.systems.values_list("name", flat=True))
        mentions = find_identity_mentions(responses=texts(), systems=systems)
        IdentityMention.objects.bulk_create(
            IdentityMention(
                response_id=keys[m.case_id, m.system],
                reason=m.reason,
                matched=m.matched,
                snippet=m.snippet,
            )
            for m in mentions
        )


class Migration(migrations.Migration):
    dependencies = [("studies", "0006_identity_mentions")]

    operations = [migrations.RunPython(scan, migrations.RunPython.noop)]
