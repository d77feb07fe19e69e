"""A case upload's import state moves to the job runner's model: a failed import becomes a
failed job with its problems, one running during the upgrade a stopped job."""

from django.db import migrations

STOPPED = "The import stopped before it finished; nothing was imported."


def copy_to_jobs(apps, schema_editor):
    CaseUpload = apps.get_model("studies", "CaseUpload")
    Job = apps.get_model("jobs", "Job")
    rows = []
    for upload in CaseUpload.objects.filter(imported_at__isnull=True).exclude(import_state=""):
        failed = upload.import_state == "failed"
        started = upload.import_started_at or upload.created_at
        rows.append(
            Job(
                kind="case_import",
                study_id=upload.study_id,
                subject=upload.uuid,
                requested_by_id=upload.uploaded_by_id,
                state="failed" if failed else "stopped",
                error=(upload.import_problems or [""])[0] if failed else STOPPED,
                result={"problems": upload.import_problems} if failed else {},
                total=upload.cases,
                created_at=started,
                started_at=started,
                finished_at=started,
            )
        )
    Job.objects.bulk_create(rows, batch_size=500)


def copy_back(apps, schema_editor):
    CaseUpload = apps.get_model("studies", "CaseUpload")
    Job = apps.get_model("jobs", "Job")
    for job in Job.objects.filter(kind="case_import", state="failed").order_by("created_at"):
        CaseUpload.objects.filter(uuid=job.subject, imported_at__isnull=True).update(
            import_state="failed", import_problems=job.result.get("problems", [job.error])
        )
    Job.objects.filter(kind="case_import").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0014_testcase_study_position"),
        ("jobs", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(copy_to_jobs, copy_back),
        migrations.RemoveField(model_name="caseupload", name="import_problems"),
        migrations.RemoveField(model_name="caseupload", name="import_started_at"),
        migrations.RemoveField(model_name="caseupload", name="import_state"),
    ]
