"""The test case import's reading and checking: seconds and peak memory per file.

Run: .venv/bin/python benchmarks/case_import.py
Times ``studies.importing.parse_cases`` (what the upload page and the import run before
anything is written) on CSV and JSONL files of 1,000 and 10,000 cases and on a file of 10 MB,
the upload limit. A file of more than MAX_CASES cases is refused once the limit is passed,
so the 10,000-case line is the cost of that refusal. Prints one line per file.
"""

import io
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

from studies.importing import MAX_CASES, MAX_FILE_BYTES, parse_cases  # noqa: E402

SYSTEMS = ("baseline", "improved")


def case(number: int, text_chars: int) -> dict:
    body = ("The response weighs the options, cites the data and says what to do. " * 64)[
        :text_chars
    ]
    return {
        "id": f"TC-{number:05d}",
        "prompt": f"Question {number}: should the lab release the model?",
        "context": "",
        "stratum": ("policy", "science", "ethics")[number % 3],
        "responses": {system: f"{system} {number}: {body}" for system in SYSTEMS},
    }


def csv_file(cases: list[dict]) -> bytes:
    import csv

    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(["id", "prompt", "context", "stratum", *[f"response:{s}" for s in SYSTEMS]])
    for c in cases:
        writer.writerow(
            [c["id"], c["prompt"], c["context"], c["stratum"], *c["responses"].values()]
        )
    return out.getvalue().encode()


def jsonl_file(cases: list[dict]) -> bytes:
    return "\n".join(json.dumps(c) for c in cases).encode()


def sized(make, limit: int) -> bytes:
    """As many cases of ~1 KB responses as fit in ``limit`` bytes (at most MAX_CASES)."""
    text_chars = 64
    while True:
        data = make([case(n, text_chars) for n in range(1, MAX_CASES + 1)])
        if len(data) > limit * 0.97:
            break
        text_chars = int(text_chars * limit / len(data))
    while len(data) > limit:
        text_chars -= 16
        data = make([case(n, text_chars) for n in range(1, MAX_CASES + 1)])
    return data


def files():
    for make, ext in ((csv_file, "csv"), (jsonl_file, "jsonl")):
        for count in (1_000, 10_000):
            yield f"{ext}: {count:,} cases", f"cases.{ext}", make(
                [case(n, 200) for n in range(1, count + 1)]
            )
        yield f"{ext}: a 10 MB file", f"cases.{ext}", sized(make, MAX_FILE_BYTES)


def measure(filename: str, data: bytes) -> tuple[str, float, int]:
    started = time.perf_counter()
    parsed = parse_cases(filename=filename, data=data)
    seconds = time.perf_counter() - started
    outcome = f"{len(parsed.cases):,} cases" if parsed.ok else f"refused: {parsed.problems[0]}"
    del parsed
    tracemalloc.start()
    try:
        parse_cases(filename=filename, data=data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return outcome[:70], seconds, peak


def main():
    print(f"{'file':26} {'size':>8} {'seconds':>8} {'peak MB':>8}  outcome")
    for name, filename, data in files():
        outcome, seconds, peak = measure(filename, data)
        print(f"{name:26} {len(data) / 2**20:7.2f}M {seconds:8.2f} {peak / 2**20:8.1f}  {outcome}")


if __name__ == "__main__":
    main()
