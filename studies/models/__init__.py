"""The studies app's models, one module per concept: the study and its lifecycle
(``study``), rubrics (``rubric``), test cases, systems, responses and blinding (``cases``),
membership and invitations (``membership``), quality control as planned (``quality``),
rater welfare and identity erasure (``welfare``), the audit trail (``events``), API tokens
(``tokens``), webhooks (``webhooks``) and crowd participants (``participants``). Every model
is importable from here, which is where Django finds them."""

from .cases import BlindedLabel, CaseUpload, IdentityMention, Response, System, TestCase
from .events import StudyEvent
from .membership import Invitation, Membership
from .participants import TAKES_NEW_CASES, Participant, ParticipantLink
from .quality import AdjudicationRule, ExpectedAnswer, QualitySettings
from .rubric import Dimension, Rubric
from .study import Study
from .tokens import ApiToken
from .webhooks import Webhook, WebhookDelivery
from .webhooks import _new_uuid as _new_uuid  # migration 0021 names it studies.models._new_uuid
from .welfare import IdentityErasure, ProfileQuestion, StratumSetting, WelfareSettings

__all__ = [
    "TAKES_NEW_CASES",
    "AdjudicationRule",
    "ApiToken",
    "BlindedLabel",
    "CaseUpload",
    "Dimension",
    "ExpectedAnswer",
    "IdentityErasure",
    "IdentityMention",
    "Invitation",
    "Membership",
    "Participant",
    "ParticipantLink",
    "ProfileQuestion",
    "QualitySettings",
    "Response",
    "Rubric",
    "StratumSetting",
    "Study",
    "StudyEvent",
    "System",
    "TestCase",
    "Webhook",
    "WebhookDelivery",
    "WelfareSettings",
]
