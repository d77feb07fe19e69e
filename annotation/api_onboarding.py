"""The HTTP API for a rater's own steps before rating: where they stand, and consent.

A rater's own token only (``studies.access``'s rater role: coordinators get 403). The
answers are the consent page's: the same form (``ConsentForm``), the same service
(``participation.consent_record``), the same information sheet. Practice, training and
the qualification test stay in the browser, like rating itself.
"""

from django.urls import path, reverse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object, form_errors, scalar_fields
from studies import access
from studies.models import Membership, Study
from studies.selectors import information_sheet_additions

from . import selectors
from .forms import ConsentForm
from .selectors.own_profile import own_profile_step
from .services import participation

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}

NOT_STARTED = (
    "This study has not started yet: the information sheet opens when the coordinator starts it."
)

OnboardingSerializer = inline_serializer(
    "Onboarding",
    {
        "study": serializers.CharField(),
        "pseudonym": serializers.CharField(),
        "started": serializers.BooleanField(help_text="false while the study is a draft"),
        "next_step": serializers.CharField(
            allow_null=True,
            help_text="what must come before rating: withdrawn, consent, qualification or "
            "calibration_call; null when you may rate",
        ),
        "consent": inline_serializer(
            "OnboardingConsent",
            {
                "asked": serializers.BooleanField(),
                "given_at": serializers.DateTimeField(allow_null=True),
                "version": serializers.IntegerField(),
                "information_sheet": serializers.CharField(allow_blank=True),
                "additions": serializers.ListField(child=serializers.CharField()),
                "disclosure_question": serializers.CharField(allow_blank=True),
            },
        ),
        "practice": serializers.BooleanField(help_text="a practice case is offered"),
        "training": inline_serializer(
            "OnboardingTraining",
            {"done": serializers.IntegerField(), "total": serializers.IntegerField()},
        ),
        "qualification": inline_serializer(
            "OnboardingQualification",
            {
                "items": serializers.IntegerField(),
                "passed": serializers.BooleanField(),
                "attempts_left": serializers.IntegerField(),
                "failed": serializers.BooleanField(),
            },
        ),
        "calibration_call": inline_serializer(
            "OnboardingCall",
            {"required": serializers.BooleanField(), "attended": serializers.BooleanField()},
        ),
        "profile": serializers.CharField(
            allow_null=True,
            help_text="the optional rater profile: asked, answered, or null (none asked)",
        ),
        "cases": serializers.CharField(help_text="your cases' page, where rating happens"),
    },
)


def _rater_study(request, slug) -> tuple[Study, Membership]:
    """The study and the token owner's own rater membership (others: 403, outsiders 404)."""
    study, rater = access.get_study_for_user(request.user, slug, role=access.RATER)
    if rater is None:  # never: the rater role is a membership's (said for the type checker)
        raise exceptions.NotFound("Not found.")
    return study, rater


def _onboarding(request, study, rater) -> dict:
    state = selectors.onboarding_state(rater=rater)
    profile = own_profile_step(rater=rater)
    consent = state.consent
    return {
        "study": study.slug,
        "pseudonym": rater.pseudonym,
        "started": not study.is_draft,
        "next_step": state.blocking_step,
        "consent": {
            "asked": bool(study.consent_text.strip() or study.disclosure_question.strip()),
            "given_at": consent.agreed_at if consent else None,
            "version": study.consent_version,
            "information_sheet": study.consent_text,
            "additions": information_sheet_additions(study=study),
            "disclosure_question": study.disclosure_question,
        },
        "practice": state.practice is not None,
        "training": {"done": state.training_done, "total": state.training_total},
        "qualification": {
            "items": state.qualification_items,
            "passed": state.qualification_passed,
            "attempts_left": state.attempts_left,
            "failed": state.qualification_failed,
        },
        "calibration_call": {"required": state.call_required, "attended": state.call_attended},
        "profile": None
        if profile is None
        else ("answered" if profile["profile"] is not None else "asked"),
        "cases": request.build_absolute_uri(reverse("annotation:assignments", args=[study.slug])),
    }


@extend_schema(
    summary="Your own steps before rating in a study (raters only)",
    description=(
        "The information sheet to consent to (with what the study's welfare settings add "
        "to it), and where you stand: consent, training, the qualification test, the "
        "calibration call. `next_step` is what the rating pages would send you to."
    ),
    responses={200: OnboardingSerializer, **ERRORS},
)
@api_view(["GET"])
def onboarding(request, slug):
    study, rater = _rater_study(request, slug)
    return Response(_onboarding(request, study, rater))


@extend_schema(
    summary="Consent to the study's information sheet, with the disclosure answer",
    description=(
        "As on the consent page: `agree` true when the study asks for consent; "
        "`prior_knowledge` (true or false) and, when true, `disclosure` when it asks its "
        "disclosure question. Consenting again to the same sheet changes nothing. Refused "
        "while the study is a draft."
    ),
    request=inline_serializer(
        "ConsentIn",
        {
            "agree": serializers.BooleanField(required=False),
            "prior_knowledge": serializers.BooleanField(required=False, allow_null=True),
            "disclosure": serializers.CharField(required=False, max_length=5000),
        },
    ),
    responses={200: OnboardingSerializer, **ERRORS},
)
@api_view(["POST"])
def consent(request, slug):
    study, rater = _rater_study(request, slug)
    fields = ("agree", "prior_knowledge", "disclosure")
    data = scalar_fields(body_object(request, fields=fields), fields)
    if study.is_draft:
        raise participation.ParticipationError(NOT_STARTED)
    if selectors.onboarding_state(rater=rater).consent is not None:
        # Sent again (a retried request): the first answers stand, as on the page.
        return Response(_onboarding(request, study, rater))
    for name in ("agree", "prior_knowledge"):
        if name in data and data[name] is not None and not isinstance(data[name], bool):
            raise exceptions.ValidationError([f"{name}: send true or false."])
    if "disclosure" in data and not isinstance(data["disclosure"], str):
        raise exceptions.ValidationError(["disclosure: send a text."])
    # The page's form, fed what its fields would send.
    form_data = {"disclosure": data.get("disclosure") or ""}
    if data.get("agree"):
        form_data["agree"] = "on"
    if data.get("prior_knowledge") is not None:
        form_data["prior_knowledge"] = "yes" if data["prior_knowledge"] else "no"
    form = ConsentForm(form_data, study=study)
    if not form.is_valid():
        raise form_errors(form)
    participation.consent_record(
        rater=rater,
        agreed=bool(form.cleaned_data.get("agree")),
        prior_knowledge=form.prior_knowledge_value(),
        disclosure=form.cleaned_data.get("disclosure", ""),
    )
    return Response(_onboarding(request, study, rater))


urlpatterns = [
    path("studies/<slug:slug>/onboarding/", onboarding, name="onboarding"),
    path("studies/<slug:slug>/consent/", consent, name="consent"),
]
