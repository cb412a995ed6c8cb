"""Reading a CSV or TSV file made elsewhere (a spreadsheet, another tool), keeping line numbers for errors."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from workbench.errors import UserError

MAX_LISTED_PROBLEMS = 12


@dataclass
class Row:
    line: int  # the line in the file where the row starts (the header is line 1)
    values: dict[str, str]
    extra: list[str] = field(default_factory=list)  # non-empty cells beyond the header's columns

def read_rows(path: str | Path, required: Sequence[str], optional: Sequence[str] = ()) -> tuple[list[str], list[Row]]:
    """The header (lower-cased) and the rows of a file. Tab-separated if it ends in .tsv/.tab or its
    header holds a tab, comma-separated otherwise. Missing required columns are refused."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"Could not read {path}: {exc.strerror or exc}.") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"{path.name} is not UTF-8 text. Save it from your spreadsheet as 'CSV UTF-8'.") from None
    if not text.strip():
        raise UserError(f"{path.name} is empty.")
    first_line = text.splitlines()[0]
    delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") or "\t" in first_line else ","
    reader = csv.reader(text.splitlines(keepends=True), delimiter=delimiter)
    header = [h.strip().lower() for h in next(reader)]
    missing = [c for c in required if c not in header]
    if missing:
        raise UserError(
            f"{path.name} lacks the column(s) {', '.join(missing)}. The first line must name the columns: "
            f"{', '.join(required)}" + (f" and optionally {', '.join(optional)}" if optional else "") + "."
        )
    repeated = sorted({h for h in header if header.count(h) > 1 and h})
    if repeated:
        raise UserError(f"{path.name} names the column(s) {', '.join(repeated)} twice.")
    rows: list[Row] = []
    start = reader.line_num + 1
    for cells in reader:
        if any(cell.strip() for cell in cells):
            padded = cells + [""] * (len(header) - len(cells))
            rows.append(Row(start, {h: padded[k].strip() if h != "text" else padded[k] for k, h in enumerate(header) if h},
                            [c for c in cells[len(header):] if c.strip()]))
        start = reader.line_num + 1
    if not rows:
        raise UserError(f"{path.name} has a header but no rows.")
    return header, rows


def refuse(path: str | Path, problems: list[str]) -> None:
    """Raise one error that lists the problems (with their line numbers); nothing is imported."""
    if not problems:
        return
    shown = problems[:MAX_LISTED_PROBLEMS]
    more = f"\n… and {len(problems) - len(shown)} more." if len(problems) > len(shown) else ""
    raise UserError(
        f"{Path(path).name} was not imported (nothing was changed) because of {len(problems)} problem(s):\n"
        + "\n".join(shown) + more + "\nCorrect the file and import it again."
    )
