"""Uploaded test-case files move from a database column to files of their own; an
upload's import can run as a job (its state, and its problems should it fail)."""

from django.core.files.base import ContentFile
from django.db import migrations, models

import studies.upload_files


def move_to_files(apps, schema_editor):
    CaseUpload = apps.get_model("studies", "CaseUpload")
    storage = studies.upload_files.case_upload_storage()
    for upload in CaseUpload.objects.only("pk", "study_id", "uuid").iterator(chunk_size=20):
        content = CaseUpload.objects.filter(pk=upload.pk).values_list("content", flat=True)[0]
        name = storage.save(
            studies.upload_files.case_upload_name(upload, ""), ContentFile(bytes(content))
        )
        CaseUpload.objects.filter(pk=upload.pk).update(file=name)


def move_back(apps, schema_editor):
    CaseUpload = apps.get_model("studies", "CaseUpload")
    storage = studies.upload_files.case_upload_storage()
    for upload in CaseUpload.objects.iterator(chunk_size=20):
        with storage.open(upload.file.name, "rb") as stream:
            CaseUpload.objects.filter(pk=upload.pk).update(content=stream.read())


class Migration(migrations.Migration):
    dependencies = [("studies", "0010_gold_items_and_attention_checks")]

    operations = [
        migrations.AddField(
            model_name="caseupload",
            name="file",
            field=models.FileField(
                default="",
                max_length=200,
                storage=studies.upload_files.case_upload_storage,
                upload_to=studies.upload_files.case_upload_name,
            ),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="caseupload",
            name="content",
            field=models.BinaryField(default=b""),
        ),
        migrations.RunPython(move_to_files, move_back),
        migrations.RemoveField(model_name="caseupload", name="content"),
        migrations.AlterField(
            model_name="caseupload",
            name="size",
            field=models.PositiveBigIntegerField(),
        ),
        migrations.AddField(
            model_name="caseupload",
            name="cases",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="caseupload",
            name="import_state",
            field=models.CharField(blank=True, default="", max_length=10),
        ),
        migrations.AddField(
            model_name="caseupload",
            name="import_problems",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="caseupload",
            name="import_started_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
