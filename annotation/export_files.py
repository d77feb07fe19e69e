"""Writing rows as CSV text, in chunks of whole lines; every text cell is neutralised, so
no cell is ever a spreadsheet formula. The Excel worksheet is written by ``export_xlsx``."""

import csv
from collections.abc import Iterable, Iterator

from .worksheets.columns import neutralise


class _Echo:
    """A file-like object whose write returns the line, for streaming csv.writer output."""

    def write(self, value: str) -> str:
        return value


# CSV text is handed on in chunks of about this many characters: one write each to the
# response or the zip member, not one per line (a large study's long table has millions).
CHUNK_CHARACTERS = 64 * 1024


def csv_lines(rows: Iterable[list], *, bom: bool = False) -> Iterator[str]:
    """The rows as CSV text, in chunks of whole lines."""
    writer = csv.writer(_Echo())
    lines, size = (["\ufeff"], 1) if bom else ([], 0)
    for row in rows:
        line = writer.writerow([neutralise(value) for value in row])
        lines.append(line)
        size += len(line)
        if size >= CHUNK_CHARACTERS:
            yield "".join(lines)
            lines, size = [], 0
    if lines:
        yield "".join(lines)
