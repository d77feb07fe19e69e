from django.apps import AppConfig

# The report bundle's key among the exports prepared as jobs.
BUNDLE = "bundle"

# The hooks agreement registers with the lower apps. Each imports its module when first
# called, not at start-up: the receivers import the recompute services, and with them the
# statistics (numpy); a process that never calls them (`make run`'s autoreloader, a
# management command) does not load them (benchmarks/memory.py, the warm start).


def _setup_checklist_analysis_plan(*, study):
    from .selectors import setup_checklist_analysis_plan

    return setup_checklist_analysis_plan(study=study)


def _monitoring_protocol_part(*, study):
    from .selectors.monitor import monitoring_protocol_part

    return monitoring_protocol_part(study=study)


def _analysis_inputs_changed_received(sender, **kwargs):
    from .receivers import analysis_inputs_changed_received

    return analysis_inputs_changed_received(sender, **kwargs)


def _report_bundle_filename(study):
    from .report.bundle import report_bundle_filename

    return report_bundle_filename(study)


def _report_bundle_write(study, file, written):
    from .report.bundle import report_bundle_write

    report_bundle_write(study, file, written)


class AgreementConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "agreement"

    def ready(self):
        from annotation.export_kinds import ExportKind, export_kind_register
        from studies.protocol_parts import protocol_part_register
        from studies.setup_checklist import checklist_reader_register
        from studies.signals import analysis_inputs_changed

        checklist_reader_register(_setup_checklist_analysis_plan)
        # The report bundle may be prepared as a job, as the large exports are.
        export_kind_register(
            ExportKind(
                key=BUNDLE,
                label="Report bundle (zip)",
                filename=_report_bundle_filename,
                content_type="application/zip",
                write=_report_bundle_write,
            )
        )
        protocol_part_register("monitoring", _monitoring_protocol_part)

        analysis_inputs_changed.connect(
            _analysis_inputs_changed_received, dispatch_uid="agreement.analysis_inputs"
        )
