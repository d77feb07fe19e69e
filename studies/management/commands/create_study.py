from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from studies.presets import PRESETS
from studies.services import StudySetupError, study_create


class Command(BaseCommand):
    help = (
        "Create a draft study led by an existing user from a preset: 'reference' brings the "
        "whole reference protocol (rubric, instructions, consent, seed 42, success "
        "criterion), the others a rubric only."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="short name used in web addresses, e.g. rsr-2026")
        parser.add_argument("--name", required=True, help="the study's name")
        parser.add_argument("--lead", required=True, help="username of the study lead")
        parser.add_argument(
            "--rubric", default="reference", choices=sorted(PRESETS), help="preset to start from"
        )
        parser.add_argument(
            "--seed", type=int, default=None, help="blinding seed (default: the preset's, or 42)"
        )

    def handle(self, *args, slug, name, lead, rubric, seed, **options):
        if seed is not None and seed < 0:
            raise CommandError("The blinding seed must be 0 or more.")
        user = get_user_model().objects.filter(username=lead).first()
        if user is None:
            raise CommandError(f"There is no user '{lead}'.")
        try:
            study = study_create(slug=slug, name=name, lead=user, preset=rubric, blinding_seed=seed)
        except StudySetupError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"Created the draft study '{study.slug}' led by {lead}, rubric '{rubric}', "
            f"blinding seed {study.blinding_seed}."
        )
