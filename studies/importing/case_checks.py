"""What a test case read from a file may be, and the checks of each one: ids, systems, texts
and fields, every problem with its row (or line) and column in plain words."""

from dataclasses import dataclass, field

from core.user_input import quoted
from studies.blinding import LABELS

from . import tabular

MAX_CASES = 100_000


MAX_TEXT_CHARS = 100_000


MAX_ID_CHARS = 50


MAX_STRATUM_CHARS = 100


# A content warning is read before the responses (protocol 3): a sentence or two.
MAX_WARNING_CHARS = 500


MAX_REPORTED_PROBLEMS = 200


RESPONSE_PREFIX = "response:"


SYSTEMS_SEPARATOR = ";"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the file: where (``Row 4``, ``Line 7``, ``File``) and what."""

    where: str
    message: str
    column: str = ""

    def __str__(self) -> str:
        if self.column:
            return f"{self.where}, {self.column}: {self.message}"
        return f"{self.where}: {self.message}"


class _Collector:
    """Problems in file order; stops reading rows after too many, to keep reports short."""

    def __init__(self):
        self.problems: list[Problem] = []

    def add(self, where: str, message: str, column: str = "") -> None:
        self.problems.append(Problem(where=where, message=message, column=column))

    @property
    def full(self) -> bool:
        return len(self.problems) > MAX_REPORTED_PROBLEMS


@dataclass
class _Systems:
    """What the checks learn about systems while reading: the union, and what waits for it."""

    # Tables: the response columns; JSONL: None (each line names its own systems).
    columns: list[str] | None
    study: list[str]
    union: set[str] = field(default_factory=set)
    # Cases with one system, reported once the file (or the study) has shown more than one.
    single: list[tuple[str, str]] = field(default_factory=list)
    # Whether each case has every system of the file (no ``systems`` column, a table).
    full: bool = True


def _check_records(records, problems, result, existing_ids, study_systems, sink) -> None:
    """Check each record, as it is read, into ``result.cases`` (or the sink); stops at too
    many problems or cases. Nothing is held back: a case's systems are known from its own
    row or line."""
    existing_ids = set(existing_ids)
    first_seen: dict[str, str] = {}
    state: _Systems | None = None
    for where, fields, responses, columns in records:
        if problems.full:
            return
        if state is None:
            state = _Systems(columns=None, study=sorted(study_systems), full=columns is not None)
            if columns is not None:
                state.columns = _systems_of_header(columns, state, problems)
                if state.columns is None:
                    for _ in records:  # read on, for the problems of the rows themselves
                        if problems.full:
                            return
                    return
                state.full = ("field", "systems") not in columns
        case = _check_fields(where, fields, columns, problems)
        systems = _case_systems(where, fields, responses, columns, state, problems)
        case["responses"] = _check_responses(where, responses, systems, columns, problems, result)
        _check_case_id(where, case["id"], columns, first_seen, existing_ids, problems)
        if result.case_count >= MAX_CASES:
            problems.add(where, f"a file can hold at most {MAX_CASES:,} test cases.")
            return
        result.take(case, sink if not problems.problems else None)
    if state is not None:
        _check_union(state, problems)
        result.systems = sorted(state.union)


def _systems_of_header(columns, state: _Systems, problems) -> list[str] | None:
    """A table's response columns; checked against the study when every case has them all."""
    systems = sorted({entry[1] for entry in columns if entry and entry[0] == "response"})
    if len(systems) > len(LABELS):
        problems.add("Row 1", f"at most {len(LABELS)} systems can be blinded.")
        return None
    full = ("field", "systems") not in columns
    if full and state.study and systems != state.study:
        problems.add(
            "Row 1",
            f"the study's systems are {', '.join(state.study)}, but this file has responses "
            f"for {', '.join(systems)}. Every test case needs a response from the same systems.",
        )
        return None
    return systems


def _case_systems(where, fields, responses, columns, state: _Systems, problems) -> list[str]:
    """The systems of one case: every column's, the ``systems`` cell's, or the line's."""
    if columns is None:
        systems = sorted(responses)
        if not systems:
            problems.add(
                where,
                'there are no responses: give one per system, {"<system>": "<text>", ...}.',
                "field 'responses'",
            )
    elif state.full:
        systems = state.columns
    else:
        systems = _systems_cell(where, fields.get("systems") or "", columns, state, problems)
        named = set(systems)
        for system in sorted(set(responses) - named):
            if responses[system].strip():
                problems.add(
                    where,
                    f"system '{quoted(system)}' is not in this row's systems "
                    f"({', '.join(systems) or 'none'}), so its response must be blank; "
                    "or add it to the systems cell.",
                    _column_name(columns, system, kind="response"),
                )
    if len(systems) > len(LABELS):
        problems.add(where, f"at most {len(LABELS)} systems can be blinded in one test case.")
        return []
    if len(systems) == 1 and len(state.single) <= MAX_REPORTED_PROBLEMS:
        state.single.append((where, systems[0]))
    state.union.update(systems)
    return systems


def _systems_cell(where, text, columns, state: _Systems, problems) -> list[str]:
    """The names in a row's ``systems`` cell; each needs its own response column."""
    names = [name.strip() for name in text.split(SYSTEMS_SEPARATOR) if name.strip()]
    systems = []
    for name in names[: len(state.columns) + 1]:  # more names than columns cannot all be good
        if name in systems:
            problems.add(
                where,
                f"the system '{quoted(name)}' is named twice.",
                _column_name(columns, "systems"),
            )
        elif name not in state.columns:
            problems.add(
                where,
                f"the system '{quoted(name)}' has no column 'response:{quoted(name)}' in row 1.",
                _column_name(columns, "systems"),
            )
        else:
            systems.append(name)
    if len(names) < 2:
        problems.add(
            where,
            "name at least two of the case's systems, separated by ';', e.g. 'baseline; improved'.",
            _column_name(columns, "systems"),
        )
        return []
    return sorted(systems)


def _check_union(state: _Systems, problems) -> None:
    """Checks that need the whole file: single-system cases, and the study's systems."""
    systems = sorted(state.union)
    if max(len(systems), len(state.study)) > 1:
        for where, system in state.single:
            problems.add(
                where,
                f"this test case has a response from '{quoted(system)}' only; a case needs "
                "responses from at least two systems to be compared.",
            )
    if len(systems) > len(LABELS):
        problems.add("File", f"at most {len(LABELS)} systems can be blinded in one study.")
    elif not state.full and state.study and not set(systems) <= set(state.study):
        problems.add(
            "File",
            f"the study's systems are {', '.join(state.study)}, but this file also has "
            f"responses for {', '.join(sorted(set(systems) - set(state.study)))}. A later file "
            "can only use the study's systems.",
        )


def _check_responses(where, responses, systems, columns, problems, result) -> dict[str, str]:
    """The response of each of the case's systems; an empty one is kept, with a warning."""
    checked = {}
    for system in systems:
        text = responses.get(system, "").strip()
        if not text:
            result.warning_count += 1
            if len(result.warnings) < MAX_REPORTED_PROBLEMS:
                result.warnings.append(
                    Problem(
                        where,
                        f"the response of system '{quoted(system)}' is empty; it is imported as "
                        "that system's output.",
                        _column_name(columns, system, kind="response"),
                    )
                )
            checked[system] = ""
        elif _check_text(where, text, columns, system, problems, kind="response"):
            checked[system] = text
    return checked


def _check_case_id(where, case_id, columns, first_seen, existing_ids, problems) -> None:
    """Reports an id used earlier in the file or already in the study; notes where it was."""
    if not case_id:
        return
    if case_id in first_seen:
        problems.add(
            where,
            f"the id '{quoted(case_id)}' is used twice (also {first_seen[case_id].lower()}).",
            _column_name(columns, "id"),
        )
    elif case_id in existing_ids:
        problems.add(
            where,
            f"the study already has a test case with the id '{quoted(case_id)}'.",
            _column_name(columns, "id"),
        )
    first_seen.setdefault(case_id, where)


def _column_name(columns, name: str, *, kind: str = "field") -> str:
    """How to point at a field: "column D 'response:improved'" or "field 'prompt'"."""
    if columns is None:
        name = quoted(name)
        return f"field '{name}'" if kind == "field" else f"field 'responses.{name}'"
    header = quoted(name if kind == "field" else RESPONSE_PREFIX + name)
    for index, entry in enumerate(columns):
        if entry == (kind, name):
            return f"column {tabular.column_letter(index + 1)} '{header}'"
    return f"column '{header}'"


def _check_text(
    where: str, text: str, columns, name: str, problems: _Collector, *, kind: str = "field"
) -> bool:
    # The column is named only for a problem: naming it for every cell cost more than the check.
    if len(text) > MAX_TEXT_CHARS:
        problems.add(
            where,
            f"the text is longer than {MAX_TEXT_CHARS:,} characters.",
            _column_name(columns, name, kind=kind),
        )
        return False
    return True


def _check_fields(where: str, fields: dict, columns, problems: _Collector) -> dict:
    case = {name: (fields.get(name) or "").strip() for name in ("id", "prompt", "context")}
    case["stratum"] = (fields.get("stratum") or "").strip()
    # Only a case that has a warning carries the key: the others read as they always did.
    warning = (fields.get("content_warning") or "").strip()
    if warning:
        case["content_warning"] = warning
    if not case["id"]:
        problems.add(where, "the id is missing.", _column_name(columns, "id"))
    elif len(case["id"]) > MAX_ID_CHARS or "\n" in case["id"]:
        problems.add(
            where,
            f"an id must be one line of at most {MAX_ID_CHARS} characters.",
            _column_name(columns, "id"),
        )
    if not case["prompt"]:
        problems.add(where, "the prompt is empty.", _column_name(columns, "prompt"))
    else:
        _check_text(where, case["prompt"], columns, "prompt", problems)
    _check_text(where, case["context"], columns, "context", problems)
    if len(case["stratum"]) > MAX_STRATUM_CHARS:
        problems.add(
            where,
            f"a stratum is limited to {MAX_STRATUM_CHARS} characters.",
            _column_name(columns, "stratum"),
        )
    if len(warning) > MAX_WARNING_CHARS:
        problems.add(
            where,
            f"a content warning is limited to {MAX_WARNING_CHARS} characters.",
            _column_name(columns, "content_warning"),
        )
    return case
