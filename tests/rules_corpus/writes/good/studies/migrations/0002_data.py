def forwards(apps, schema_editor):
    Study = apps.get_model("studies", "Study")
    Study.objects.filter(name="").update(name="x")
