from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"

    def ready(self):
        from studies.activity import activity_reader_register
        from studies.setup_checklist import checklist_reader_register
        from studies.signals import raters_need_cases
        from studies.webhooks import submitted_count_reader_register

        from .receivers import raters_need_cases_received
        from .selectors import setup_checklist_onboarding, study_rating_activity
        from .selectors.pay import setup_checklist_pay
        from .selectors.rating import study_submitted_count

        activity_reader_register(study_rating_activity)
        checklist_reader_register(setup_checklist_onboarding)
        checklist_reader_register(setup_checklist_pay)
        submitted_count_reader_register(study_submitted_count)
        raters_need_cases.connect(
            raters_need_cases_received, dispatch_uid="annotation.raters_need_cases"
        )
