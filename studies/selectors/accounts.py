"""Which accounts nobody else may take over: those that read a blinded study's texts under
their labels (issue 38)."""

from django.contrib.auth.models import User

from studies.models import Membership, Study

# The roles that see responses under their labels, and the texts with them.
LABEL_READERS = (Membership.Role.RATER, Membership.Role.ADJUDICATOR)


def account_reads_blinded_labels(*, user: User) -> bool:
    """True while the account rates or adjudicates in a study not yet unblinded: then no
    administrator may set its password or its e-mail address (where a reset link goes)."""
    return Membership.objects.filter(
        user=user, role__in=LABEL_READERS, study__in=Study.objects.blinded()
    ).exists()
