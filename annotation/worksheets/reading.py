"""A worksheet file read into rows of text: ``studies.importing.tabular``, worksheet bounds."""

from dataclasses import dataclass

from core.user_input import quoted
from studies.errors import ApplicationError
from studies.importing import tabular

from .columns import MAX_BYTES, MAX_ROWS, unneutralise

# A workbook with several sheets is read from the one named so, else from its first sheet.
SHEET_NAMES = ("Worksheet",)


@dataclass(frozen=True)
class WorksheetProblem:
    row: int | None
    column: str | None
    message: str

    def __post_init__(self):
        # A column may be named by the file's own heading: a cell, quoted within bounds.
        if self.column:
            object.__setattr__(self, "column", quoted(self.column))

    def __str__(self) -> str:
        where = []
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column:
            where.append(f"column {self.column}")
        return tabular.problem_text(where, self.message)


class WorksheetError(ApplicationError):
    """The worksheet cannot be imported; ``problems`` lists every reason found."""

    def __init__(self, problems: list[WorksheetProblem]):
        super().__init__("\n".join(str(p) for p in problems), problems=problems)


def read_table(*, filename: str, data: bytes) -> list[tuple[int, list[str]]]:
    """(row number, cells as text) for every non-blank row of a .csv, .md or .xlsx file.

    The quotes the CSV export puts before formula characters are removed here; an Excel
    worksheet's text cells are typed as text and hold exactly what was written.
    """
    kind = tabular.table_format(filename)
    if kind is None:
        raise WorksheetError(
            [WorksheetProblem(None, None, "Upload the worksheet as .csv or .xlsx.")]
        )
    try:
        rows = tabular.read_table(
            filename=filename,
            data=data,
            sheet_names=SHEET_NAMES,
            max_bytes=MAX_BYTES,
            max_rows=MAX_ROWS,
        )
    except tabular.TableError as error:
        raise WorksheetError([_problem(p) for p in error.problems]) from None
    if kind == "excel":
        return [(row.number, row.cells) for row in rows]
    return [(row.number, [unneutralise(cell) for cell in row.cells]) for row in rows]


def _problem(problem: tabular.TableProblem) -> WorksheetProblem:
    row = problem.row if problem.row is not None else problem.line
    column = tabular.column_letter(problem.column) if problem.column else None
    return WorksheetProblem(row, column, problem.message)
