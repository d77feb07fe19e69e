from django.db import models

from studies.models import Study


class StudyAgreement(models.Model):
    """The latest agreement statistics of a study, and how fresh they are.

    ``requested`` is bumped by every announced change of the analysis inputs (a rating
    submitted, revised, imported or withdrawn; a rater excluded or reinstated; a level of
    measurement, the success criterion, the phase or the test cases changed); ``computed``
    is the value of ``requested`` the stored result reflects. A run only writes its result
    if it is newer than the stored one, so a slow, stale run can never overwrite a fresher
    result.
    """

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="agreement")
    requested = models.PositiveBigIntegerField(default=0)
    computed = models.PositiveBigIntegerField(default=0)
    result = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    n_ratings = models.PositiveIntegerField(default=0)
    runs = models.PositiveIntegerField(default=0)
    last_requested_at = models.DateTimeField(null=True, blank=True)
    # What the stored result was computed from (``selectors.analysis_inputs``): phase,
    # dimensions and their levels, success criterion, test cases, excluded raters and the
    # ratings. A result whose inputs differ from the study's current ones is stale, even if
    # no recompute was requested.
    inputs = models.JSONField(default=dict, blank=True)

    def __str__(self):
        return f"Agreement for {self.study}"

    @property
    def is_stale(self) -> bool:
        """A recompute was requested and has not finished; see also ``selectors``."""
        return self.requested > self.computed


class AnalysisPlan(models.Model):
    """What the coordinator decided about the analysis: the strata's real shares, which
    weight the overall estimate when the sample's shares differ from them (protocol 5.1)."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="analysis_plan")
    # {stratum: share}, shares summing to 1; {} = the sample's own shares (unweighted).
    stratum_shares = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"Analysis plan of {self.study}"
