"""A status compared in every spelling of a comparison."""
from studies.models import Study


def banner(study, rater):
    if study.status == "open":  # flagged: lifecycle-status-compared
        return "open"
    if "closed" != rater.study.status:  # flagged: lifecycle-status-compared
        return "running"
    if study.status in ("draft", "pilot"):  # flagged: lifecycle-status-compared
        return "setting up"
    if study.status not in {"unblinded"}:  # flagged: lifecycle-status-compared
        return "blinded"
    if Study.Status.CLOSED == study.status:  # flagged: lifecycle-status-compared
        return "closed"
    if study.status != study.Status.DRAFT:  # flagged: lifecycle-status-compared
        return "not a draft"
    if study.status not in {Status.OPEN}:  # flagged: lifecycle-status-compared
        return "not open"
    status = study.status
    return status is Study.Status.UNBLINDED  # flagged: lifecycle-status-compared
