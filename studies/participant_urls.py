"""The URL of a participant link to paste into the vendor, with the vendor's placeholders
for the ids (read by the Participant links page and the API)."""

from django.urls import reverse

from studies.models import ParticipantLink

# Prolific fills in its placeholders when it sends a participant.
PROLIFIC_QUERY = (
    "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)


def participant_link_url(request, link: ParticipantLink) -> str:
    """The full URL to paste into the vendor, with its placeholders for the ids."""
    base = request.build_absolute_uri(reverse("studies:participant_join", args=[link.token]))
    if link.preset == ParticipantLink.Preset.PROLIFIC:
        return base + PROLIFIC_QUERY
    if link.preset == ParticipantLink.Preset.MTURK:
        return base  # MTurk adds workerId, assignmentId and hitId to an external question
    names = [n for n in (link.participant_param, link.study_param, link.session_param) if n]
    return base + "?" + "&".join(f"{name}=…" for name in names)
