"""Writing rows as CSV text, in chunks of whole lines; every text cell is neutralised, so
no cell is ever a spreadsheet formula. The Excel worksheet is written by ``export_xlsx``."""

import csv
import io
from collections.abc import Iterable, Iterator

from .worksheets.columns import neutralise

# CSV text is handed on in chunks of about this many characters: one write each to the
# response or the zip member, not one per line (a large study's long table has millions).
CHUNK_CHARACTERS = 64 * 1024
# Texts neutralised once and remembered, per file: a long table repeats the same few
# (pseudonyms, dimension names, labels, times of a case) on millions of cells.
REMEMBERED = 50_000


class _Neutralised(dict):
    """Text -> its neutralised form, remembered (up to ``REMEMBERED`` texts)."""

    def __missing__(self, text: str) -> str:
        safe = neutralise(text)
        if len(self) < REMEMBERED:
            self[text] = safe
        return safe


def csv_lines(rows: Iterable[list], *, bom: bool = False) -> Iterator[str]:
    """The rows as CSV text, in chunks of whole lines."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    if bom:
        buffer.write("\ufeff")
    seen = _Neutralised()
    for row in rows:
        # Plain text through the remembered forms; anything else (numbers) as it is.
        writer.writerow([seen[v] if v.__class__ is str else neutralise(v) for v in row])
        if buffer.tell() >= CHUNK_CHARACTERS:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    if text := buffer.getvalue():
        yield text
