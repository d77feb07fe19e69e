"""The comments digest (QC-006): every source of free text, the filters, the pages, each
coordinator's read marks, and blinding."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, CommentRead
from annotation.selectors.comments import (
    CommentSource,
    DigestCursor,
    DigestFilters,
    comments_digest,
    comments_unread_count,
)
from annotation.services.comment_reads import CommentReadError, comments_mark_read
from annotation.services.participation import feedback_submit, withdrawal_record
from studies.models import Membership
from tests.factories import PASSWORD, UserFactory, make_study
from tests.payloads import SYSTEMS, coordinator_of, payload_for, study_with_systems, submit


def _flagged(n: int, *, label="A", note="Depth was hard to count here.", notes="") -> dict:
    payload = payload_for(n, notes=notes)
    payload["responses"][label]["depth"]["flagged"] = True
    payload["responses"][label]["depth"]["flag_note"] = note
    return payload


def _assignments(study, pseudonym):
    return list(
        Assignment.objects.filter(rater__study=study, rater__pseudonym=pseudonym)
        .select_related("test_case")
        .order_by("position")
    )


def _skip(assignment, *, reason="distressing", note="Too upsetting for me.", at=None):
    Assignment.objects.filter(pk=assignment.pk).update(
        status=Assignment.Status.SKIPPED,
        skip_reason=reason,
        skip_note=note,
        skipped_at=at or timezone.now(),
    )


@pytest.fixture
def world(db):
    """A study with systems whose names must never show, two raters and two coordinators."""
    lead = UserFactory(username="digest-lead")
    study = study_with_systems(
        lead=lead, slug="digest", cases=4, raters=[UserFactory(), UserFactory(), UserFactory()]
    )
    raters = {m.pseudonym: m for m in study.memberships.filter(role=Membership.Role.RATER)}
    first, second, third = sorted(raters)
    one = _assignments(study, first)
    two = _assignments(study, second)
    submit(one[0], payload_for(1, notes="Response A cited nothing <b>bold</b>."))
    submit(one[1], _flagged(2))
    _skip(one[2])
    feedback_submit(
        rater=raters[second],
        dimensions={"depth": {"clarity": "unclear", "comment": "Factors overlap."}},
        suggestions="Give an example of a half factor.",
        patterns="",
        notes="",
    )
    withdrawal_record(rater=raters[third], data="keep", reason="No time any more.")
    return {
        "study": study,
        "lead": lead,
        "coordinator": coordinator_of(study, "digest-coordinator"),
        "raters": raters,
        "first": first,
        "second": second,
        "third": third,
        "one": one,
        "two": two,
    }


def _page(study, reader, **filters):
    return comments_digest(study=study, reader=reader, filters=DigestFilters(**filters))


def _texts(page):
    return [c.text for c in page.comments]


# --- sources -----------------------------------------------------------------------------


def test_every_source_appears_with_who_what_and_where(world):
    page = _page(world["study"], world["lead"])
    by_source = {}
    for comment in page.comments:
        by_source.setdefault(comment.source, []).append(comment)
    assert set(by_source) == set(CommentSource.values)
    note = by_source["note"][0]
    assert note.text == "Response A cited nothing <b>bold</b>."
    assert note.rater == world["first"]
    assert note.case == world["one"][0].test_case.case_id
    assert note.stratum == world["one"][0].test_case.stratum
    flag = by_source["flag"][0]
    assert (flag.text, flag.dimension, flag.dimension_key) == (
        "Depth was hard to count here.", "Depth of Analysis", "depth",
    )  # fmt: skip
    assert flag.response.startswith("Response ")
    skip = by_source["skip"][0]
    assert (skip.text, skip.reason) == (
        "Too upsetting for me.",
        Assignment.SkipReason.DISTRESSING.label,
    )
    feedback = {c.text: c for c in by_source["feedback"]}
    assert feedback["Factors overlap."].dimension == "Depth of Analysis"
    assert "Give an example of a half factor." in feedback
    assert by_source["withdrawal"][0].text == "No time any more."
    assert by_source["withdrawal"][0].rater == world["third"]


def test_a_flag_on_the_case_and_a_skip_without_a_note_are_comments(world):
    assignment = world["two"][0]
    submit(assignment, payload_for(3))
    Assignment.objects.filter(pk=assignment.pk).update(
        case_scores={"depth": {"choice": 1, "flagged": True, "flag_note": "Hard to pick."}}
    )
    _skip(world["two"][1], reason="expertise", note="")
    page = _page(world["study"], world["lead"], source="flag")
    on_case = [c for c in page.comments if c.text == "Hard to pick."]
    assert on_case and on_case[0].response == ""
    skips = _page(world["study"], world["lead"], source="skip").comments
    assert {c.reason for c in skips} == {
        Assignment.SkipReason.DISTRESSING.label,
        Assignment.SkipReason.EXPERTISE.label,
    }


def test_a_draft_note_and_an_empty_flag_are_not_comments(world):
    from annotation.services import draft_save

    assignment = world["two"][2]
    draft_save(assignment=assignment, payload=payload_for(1, notes="Still thinking."),
               expected_version=assignment.version)  # fmt: skip
    submit(world["two"][3], payload_for(4))  # depth flagged on n % 7 == 2 only, no note here
    assert "Still thinking." not in _texts(_page(world["study"], world["lead"]))
    assert len(_page(world["study"], world["lead"], source="note").comments) == 1


# --- filters -----------------------------------------------------------------------------


def test_filters_by_dimension_stratum_source_and_date(world):
    study, lead = world["study"], world["lead"]
    by_dimension = _page(study, lead, dimension="depth").comments
    assert {c.source for c in by_dimension} == {"flag", "feedback"}
    assert {c.text for c in by_dimension} == {"Depth was hard to count here.", "Factors overlap."}
    assert _page(study, lead, dimension="evidence").comments == []
    stratum = world["one"][0].test_case.stratum
    in_stratum = _page(study, lead, stratum=stratum).comments
    assert in_stratum and all(c.stratum == stratum for c in in_stratum)
    assert not {"feedback", "withdrawal"} & {c.source for c in in_stratum}
    assert [c.source for c in _page(study, lead, source="withdrawal").comments] == ["withdrawal"]
    Assignment.objects.filter(pk=world["one"][0].pk).update(
        submitted_at=timezone.now() - timedelta(days=10)
    )
    recent = _page(study, lead, since=timezone.now() - timedelta(days=3))
    assert "Response A cited nothing <b>bold</b>." not in _texts(recent)
    assert "Depth was hard to count here." in _texts(recent)


def test_the_page_filters_through_the_query_and_refuses_bad_values(client, world):
    client.login(username="digest-lead", password=PASSWORD)
    url = reverse("annotation:comments", args=["digest"])
    response = client.get(url, {"source": "skip"})
    assert response.status_code == 200
    assert b"Too upsetting for me." in response.content
    assert b"No time any more." not in response.content
    for bad in ({"source": "systems"}, {"since": "yesterday"}, {"after": "1.2.3"},
                {"dimension": "nope"}):  # fmt: skip
        assert client.get(url, bad).status_code == 400


# --- read marks --------------------------------------------------------------------------


def test_read_marks_are_per_coordinator(client, world):
    study, lead, coordinator = world["study"], world["lead"], world["coordinator"]
    total = comments_unread_count(study=study, reader=lead)
    # A note, a flag, a skip, two parts of feedback, a withdrawal.
    assert total == len(_page(study, lead).comments) == 6
    note = _page(study, lead, source="note").comments[0]
    client.login(username="digest-lead", password=PASSWORD)
    url = reverse("annotation:comments_read", args=["digest"])
    response = client.post(url, {"key": note.key, "query": "source=note"})
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:comments", args=["digest"]) + "?source=note"
    assert comments_unread_count(study=study, reader=lead) == total - 1
    assert comments_unread_count(study=study, reader=coordinator) == total
    assert _page(study, lead, source="note").comments[0].read
    assert not _page(study, coordinator, source="note").comments[0].read
    assert note.key not in {c.key for c in _page(study, lead, unread=True).comments}
    assert len(_page(study, coordinator, unread=True).comments) == total


def test_mark_all_shown_then_the_qc_page_counts_none(client, world):
    study, coordinator = world["study"], world["coordinator"]
    client.force_login(coordinator)
    page = client.get(reverse("annotation:comments", args=["digest"]))
    keys = [c.key for c in page.context["page"].comments]
    response = client.post(reverse("annotation:comments_read", args=["digest"]), {"key": keys})
    assert response.status_code == 302
    assert comments_unread_count(study=study, reader=coordinator) == 0
    qc = client.get(reverse("agreement:qc", args=["digest"]))
    assert qc.context["comments_unread"] == 0
    client.force_login(world["lead"])
    qc = client.get(reverse("agreement:qc", args=["digest"]))
    assert qc.context["comments_unread"] == 6
    assert reverse("annotation:comments", args=["digest"]).encode() in qc.content


def test_marking_is_idempotent_and_refuses_keys_of_other_studies(world):
    study, lead = world["study"], world["lead"]
    keys = [c.key for c in _page(study, lead).comments]
    assert comments_mark_read(study=study, reader=lead, keys=keys) == len(keys)
    assert comments_mark_read(study=study, reader=lead, keys=keys) == len(keys)
    assert CommentRead.objects.filter(reader=lead).count() == len(keys)
    other = make_study(slug="digest-other", raters=[UserFactory()])
    foreign = Assignment.objects.filter(test_case__study=other).first()
    for bad in ([f"note:{foreign.uuid.hex}"], ["note:zz"], ["system:A"], [], ["x"] * 0):
        with pytest.raises(CommentReadError):
            comments_mark_read(study=study, reader=lead, keys=bad)
    mixed = [keys[0], f"note:{foreign.uuid.hex}"]
    CommentRead.objects.all().delete()
    with pytest.raises(CommentReadError):
        comments_mark_read(study=study, reader=lead, keys=mixed)
    assert not CommentRead.objects.exists()


def test_a_comment_changed_after_it_was_read_is_unread_again(world):
    study, lead = world["study"], world["lead"]
    comments_mark_read(study=study, reader=lead, keys=[c.key for c in _page(study, lead).comments])
    assert comments_unread_count(study=study, reader=lead) == 0
    assignment = world["one"][0]
    assignment.refresh_from_db()
    submit(assignment, payload_for(1, notes="Changed my mind."))
    unread = _page(study, lead, unread=True).comments
    assert [c.text for c in unread] == ["Changed my mind."]
    assert comments_unread_count(study=study, reader=lead) == 1


def test_reading_the_page_writes_nothing(client, world):
    client.force_login(world["lead"])
    assert client.get(reverse("annotation:comments", args=["digest"])).status_code == 200
    assert client.get(reverse("annotation:comments", args=["digest"]), {"unread": "on"})
    assert not CommentRead.objects.exists()


# --- access ------------------------------------------------------------------------------


def test_only_the_studys_coordinators_read_and_mark(client, world):
    url = reverse("annotation:comments", args=["digest"])
    mark = reverse("annotation:comments_read", args=["digest"])
    key = _page(world["study"], world["lead"]).comments[0].key
    assert client.get(url).status_code == 302  # to sign in
    rater = world["raters"][world["first"]].user
    client.force_login(rater)
    assert client.get(url).status_code == 403
    assert client.post(mark, {"key": key}).status_code == 403
    client.force_login(UserFactory(username="digest-stranger"))
    assert client.get(url).status_code == 404
    assert client.post(mark, {"key": key}).status_code == 404
    assert client.get(reverse("annotation:comments_read", args=["digest"])).status_code == 405
    assert not CommentRead.objects.exists()
    client.force_login(world["coordinator"])
    assert client.get(url).status_code == 200


# --- blinding ----------------------------------------------------------------------------


def test_a_flipped_screen_is_named_by_the_label_the_rater_saw_and_no_system_shows(client, world):
    study, lead = world["study"], world["lead"]
    assignment = world["two"][0]
    Assignment.objects.filter(pk=assignment.pk).update(flipped=True)
    assignment.refresh_from_db()
    # Stored under key label A; on this flipped screen the rater saw it as Response B.
    submit(assignment, _flagged(5, label="A", note="The second one was vague."))
    flag = next(c for c in _page(study, lead).comments if c.text == "The second one was vague.")
    rating = assignment.ratings.get(label="A")
    assert rating.shown_label == "B"
    assert flag.response == "Response B"
    assert flag.key == f"flag:{assignment.uuid.hex}:B:depth"
    client.force_login(lead)
    html = client.get(reverse("annotation:comments", args=["digest"])).content.decode()
    for name in SYSTEMS:
        assert name not in html
    assert "Response B as the rater saw it" in html
    assert f"flag:{assignment.uuid.hex}:A:" not in html
    # The note is text, escaped.
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html


# --- pages -------------------------------------------------------------------------------


def test_pages_cover_every_comment_once_in_order_even_at_one_instant(world):
    study, lead = world["study"], world["lead"]
    extra = make_study(slug="digest-many", cases=6, raters=[UserFactory(), UserFactory()])
    for n, assignment in enumerate(Assignment.objects.filter(test_case__study=extra)):
        submit(assignment, _flagged(n, notes=f"note {n}", note=f"flag {n}"))
    # A worksheet stamps its rows alike: ties on time are ordered by row.
    Assignment.objects.filter(test_case__study=extra).update(submitted_at=timezone.now())
    everything = comments_digest(study=extra, reader=lead, filters=DigestFilters(), limit=200)
    # A note and a flag per case, and the payloads' own flags on some.
    total = len(everything.comments)
    assert total >= 24 and everything.next is None
    seen, cursor = [], None
    while True:
        page = comments_digest(
            study=extra, reader=lead, filters=DigestFilters(after=cursor), limit=5
        )
        assert len(page.comments) <= 5
        seen += [c.key for c in page.comments]
        if page.next is None:
            break
        cursor = DigestCursor.decode(page.next.encode())
    assert seen == [c.key for c in everything.comments]
    assert len(set(seen)) == total
    assert _page(study, lead).comments  # the other study's comments are not mixed in
    assert not {c.key for c in _page(study, lead).comments} & set(seen)


def test_the_page_links_to_older_comments_and_queries_stay_flat(
    client, world, django_assert_max_num_queries
):
    study = world["study"]
    for n, assignment in enumerate(world["two"]):
        submit(assignment, _flagged(n, notes=f"second note {n}"))
    client.force_login(world["lead"])
    url = reverse("annotation:comments", args=["digest"])
    with django_assert_max_num_queries(25):
        first = client.get(url, {"source": "note"})
    assert first.status_code == 200
    import annotation.selectors.comments as module

    module_page = comments_digest(
        study=study, reader=world["lead"], filters=DigestFilters(source="note"), limit=2
    )
    assert module.PAGE_SIZE >= 2 and module_page.next is not None
    second = client.get(url, {"source": "note", "after": module_page.next.encode()})
    assert second.status_code == 200
    shown = [c.text for c in second.context["page"].comments]
    assert shown and not set(shown) & {c.text for c in module_page.comments}


def test_a_rater_who_withdrew_deleting_their_ratings_leaves_no_case_comment(world):
    study, lead = world["study"], world["lead"]
    withdrawal_record(rater=world["raters"][world["first"]], data="delete")
    left = _page(study, lead).comments
    assert {c.source for c in left} == {"feedback", "withdrawal"}
    assert comments_unread_count(study=study, reader=lead) == len(left)
