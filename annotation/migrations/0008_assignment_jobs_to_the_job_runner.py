"""Assign jobs move to the job runner's model: their rows are copied, their table goes."""

from django.db import migrations

STOPPED = "The assignment stopped before it finished; nothing was assigned. Press Assign again."


def copy_to_jobs(apps, schema_editor):
    AssignmentJob = apps.get_model("annotation", "AssignmentJob")
    Job = apps.get_model("jobs", "Job")
    rows = []
    for old in AssignmentJob.objects.iterator():
        # A job running during the upgrade is heard from no more: its process ended with it.
        running = old.state == "running"
        rows.append(
            Job(
                uuid=old.uuid,
                kind="assign",
                study_id=old.study_id,
                requested_by_id=old.requested_by_id,
                state="stopped" if running else old.state,
                error=STOPPED if running else old.problem,
                result={"created": old.created} if old.created else {},
                created_at=old.started_at,
                started_at=old.started_at,
                finished_at=old.finished_at or old.started_at,
            )
        )
    Job.objects.bulk_create(rows, batch_size=500)


def copy_back(apps, schema_editor):
    AssignmentJob = apps.get_model("annotation", "AssignmentJob")
    Job = apps.get_model("jobs", "Job")
    AssignmentJob.objects.bulk_create(
        AssignmentJob(
            uuid=job.uuid,
            study_id=job.study_id,
            requested_by_id=job.requested_by_id,
            state="stopped" if job.state in ("queued", "running") else job.state,
            created=job.result.get("created", {}),
            problem=job.error,
            started_at=job.created_at,
            finished_at=job.finished_at,
        )
        for job in Job.objects.filter(kind="assign").iterator()
    )
    Job.objects.filter(kind="assign").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0007_assignment_started_index"),
        ("jobs", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(copy_to_jobs, copy_back),
        migrations.DeleteModel(name="AssignmentJob"),
    ]
