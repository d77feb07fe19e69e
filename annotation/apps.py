from django.apps import AppConfig

# The hooks annotation registers with ``studies``. Each imports its module when first
# called, not at start-up: the selectors import the statistics (numpy), and a process that
# never calls them (`make run`'s autoreloader, a management command) does not load them
# (benchmarks/memory.py, the warm start).


def _study_rating_activity(*, study):
    from .selectors import study_rating_activity

    return study_rating_activity(study=study)


def _setup_checklist_onboarding(*, study):
    from .selectors import setup_checklist_onboarding

    return setup_checklist_onboarding(study=study)


def _setup_checklist_quality(*, study):
    from .selectors.quality_rates import setup_checklist_quality

    return setup_checklist_quality(study=study)


def _study_unfinished_work(*, study):
    from .selectors.closing import study_unfinished_work

    return study_unfinished_work(study=study)


def _setup_checklist_pay(*, study):
    from .selectors.pay import setup_checklist_pay

    return setup_checklist_pay(study=study)


def _study_submitted_count(*, study_id):
    from .selectors.progress import study_submitted_count

    return study_submitted_count(study_id=study_id)


def _participant_batch_room(*, study):
    from .services.batches import participant_batch_room

    return participant_batch_room(study=study)


def _participant_batch_give(*, study, rater, size):
    from .services.batches import participant_batch_give

    return participant_batch_give(study=study, rater=rater, size=size)


def _own_text_redact(*, user, redact):
    from .services.erasure_text import own_text_redact

    return own_text_redact(user=user, redact=redact)


def _raters_need_cases_received(sender, **kwargs):
    from .receivers import raters_need_cases_received

    return raters_need_cases_received(sender, **kwargs)


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"

    def ready(self):
        from studies.activity import activity_reader_register, unfinished_reader_register
        from studies.erasure_holders import erasure_scrubber_register
        from studies.participant_batch import BatchSteps, batch_steps_register
        from studies.setup_checklist import checklist_reader_register
        from studies.signals import raters_need_cases
        from studies.webhooks import submitted_count_reader_register

        activity_reader_register(_study_rating_activity)
        unfinished_reader_register(_study_unfinished_work)
        checklist_reader_register(_setup_checklist_onboarding)
        checklist_reader_register(_setup_checklist_quality)
        checklist_reader_register(_setup_checklist_pay)
        submitted_count_reader_register(_study_submitted_count)
        erasure_scrubber_register(_own_text_redact)
        batch_steps_register(BatchSteps(room=_participant_batch_room, give=_participant_batch_give))
        raters_need_cases.connect(
            _raters_need_cases_received, dispatch_uid="annotation.raters_need_cases"
        )
