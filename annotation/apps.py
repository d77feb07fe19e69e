from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"

    def ready(self):
        from studies.activity import activity_reader_register

        from .selectors import study_rating_activity

        activity_reader_register(study_rating_activity)
