from django.apps import AppConfig


class AgreementConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "agreement"

    def ready(self):
        from studies.setup_checklist import checklist_reader_register
        from studies.signals import analysis_inputs_changed

        from .receivers import analysis_inputs_changed_received
        from .selectors import setup_checklist_analysis_plan

        checklist_reader_register(setup_checklist_analysis_plan)

        analysis_inputs_changed.connect(
            analysis_inputs_changed_received, dispatch_uid="agreement.analysis_inputs"
        )
