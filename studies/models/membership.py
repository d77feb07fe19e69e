"""Who takes part in a study and in which role, and the invitations to join."""

from django.conf import settings
from django.db import models

from .study import Study


class Membership(models.Model):
    """A person's role in one study; raters appear to coordinators under their pseudonym."""

    class Role(models.TextChoices):
        COORDINATOR = "coordinator", "Coordinator"
        RATER = "rater", "Rater"
        # Resolves disagreements between raters (protocol 4.1, 11); pseudonymous (A-01, ...)
        # and never adjudicates a case they rated.
        ADJUDICATOR = "adjudicator", "Adjudicator"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        PAUSED = "paused", "Paused"
        WITHDRAWN = "withdrawn", "Withdrawn"
        EXCLUDED = "excluded", "Excluded"

    role = models.CharField(max_length=20, choices=Role.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    pseudonym = models.CharField(max_length=20, blank=True)
    # A rater whose ratings were made outside Concord and imported by system: the name the
    # imported file gave them. Such a rater has no usable account; identity erasure clears it.
    external_name = models.CharField(max_length=200, blank=True)

    class JoinedVia(models.TextChoices):
        """How a person came into the study (issue 38): shown to administrators, so that a
        rater enrolled through a link anyone could use stands out."""

        UNRECORDED = "", "Not recorded (joined before this was recorded)"
        OPEN_LINK = "open_link", "Open invitation link (anyone who had it)"
        EMAIL = "email", "Invitation e-mailed to an address"
        ACCOUNT = "account", "Personal invitation of an existing account"
        ACCOUNT_MADE = "account_made", "Account made by an administrator, link e-mailed"
        PARTICIPANT_LINK = "participant_link", "Participant link (a vendor's participant id)"
        IMPORTED = "imported", "Named in ratings imported from elsewhere"
        OPERATOR = "operator", "Added by an operator (command line, demo)"

    # How this person joined: the way, the invitation (when one was used) and who made
    # it, the link or the account; ``created_at`` is when. Administrators see it (the
    # memberships admin, the QC page); coordinators do not, as it may name identities.
    joined_via = models.CharField(max_length=20, choices=JoinedVia.choices, blank=True)
    joined_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    invitation = models.ForeignKey(
        "Invitation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The IANA time zone the rater's browser reported (e.g. "Europe/Berlin"): a daily
    # exposure limit resets at their midnight, and its message speaks their local time.
    time_zone = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "user"], name="one_membership_per_study"),
            models.UniqueConstraint(
                fields=["study", "pseudonym"],
                condition=~models.Q(pseudonym=""),
                name="unique_pseudonym_per_study",
            ),
        ]

    def __str__(self):
        return self.pseudonym or f"{self.get_role_display()} in {self.study_id}"


class Invitation(models.Model):
    """A single-use, expiring invitation to join a study in a role.

    Either a link that adds whoever opens it, or, when a coordinator names an existing
    account, a personal invitation that only that account sees and can accept or decline.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=20, choices=Membership.Role.choices)
    # Only a hash of the token is stored; the link itself is shown once, when created.
    token_hash = models.CharField(max_length=64, unique=True)
    note = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A personal invitation: the username the coordinator typed, and the account it named
    # if there is one that may join (empty otherwise, so nobody can accept it; the
    # coordinator is told the same either way).
    invitee_name = models.CharField(max_length=150, blank=True)
    invitee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="study_invitations",
    )
    declined_at = models.DateTimeField(null=True, blank=True)
    # An invitation bound to an e-mail address: its link was sent there and never shown to
    # the coordinator who made it (identity: erasure clears it).
    invitee_email = models.EmailField(blank=True)

    def __str__(self):
        return f"Invitation to {self.study} as {self.role}"

    @property
    def is_personal(self) -> bool:
        return bool(self.invitee_name)
