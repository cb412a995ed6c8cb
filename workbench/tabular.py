"""Reading a CSV or TSV file made elsewhere (a spreadsheet, another tool), keeping line numbers for errors.

Quotation marks are read as the file's kind makes likely:

- **Comma-separated**: as spreadsheets and pandas write them. A cell holding a comma, a quotation mark or
  a line break is wrapped in quotation marks, and a quotation mark inside it is doubled. A line that breaks
  this rule (text after a closing quotation mark, a quotation mark never closed) is refused, naming it.
- **Tab-separated**: files from other programs (the published data sets) do not quote cells, and a passage
  may well begin with a quotation mark, so the quotation marks are part of the text and each line is one
  row, unless every row is written the way spreadsheets and pandas write them (each cell either bare,
  with no quotation mark in it, or wrapped in quotation marks with those inside doubled): then they are
  read as such, and a cell keeps its tabs and line breaks.

A quoted cell may span lines (spreadsheets write a cell with a line break so), except where the lines it
spans look like rows of their own: a cell of a tab-separated file holding both a line break and a tab. Its
opening quotation mark most likely swallowed the rows after it, so the file is refused, naming the line
(``records``, the check metadata tables use too). In a comma-separated file a line break and commas are
ordinary in a quoted cell; a quotation mark left open there is caught where the text after it breaks the
rule above, or at the end of the file.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

from workbench.errors import UserError

MAX_LISTED_PROBLEMS = 12


@dataclass
class Row:
    line: int  # the line in the file where the row starts (the header is line 1)
    values: dict[str, str]
    extra: list[str] = field(default_factory=list)  # non-empty cells beyond the header's columns


def _unclosed(name: str, start: int, end: int) -> str:
    swallowed = f"everything up to line {end}" if end > start else "the rest of the table"
    return (f"{name} line {start}: a quotation mark opens a cell that is not closed on that line, so {swallowed} "
            f"would be read into that one cell. Add the missing closing quotation mark on line {start} (or remove the "
            "opening one), save the table and import it again.")


def records(name: str, text: str, reader_format: dict[str, object], *,
            may_span: Callable[[list[str]], bool] | None = None) -> Iterator[tuple[int, list[str]]]:
    """(line where it starts, cells) for each record of a table read with spreadsheet quoting (``reader_format``:
    ``csv.reader``'s options). A cell never spans lines unless ``may_span(cells)`` allows it: one that does
    has an opening quotation mark without its closing one, and would swallow the lines after it."""
    reader = csv.reader(io.StringIO(text, newline=""), **reader_format)
    start = 1
    try:
        for record in reader:
            if any("\n" in cell or "\r" in cell for cell in record) and not (may_span and may_span(record)):
                raise UserError(_unclosed(name, start, reader.line_num))
            yield start, record
            start = reader.line_num + 1
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):  # a strict reader at the end of the file inside a quoted cell
            raise UserError(_unclosed(name, start, reader.line_num)) from None
        if "expected after" in str(exc):  # a strict reader: text after a closing quotation mark
            where = f"line {start}" if reader.line_num == start else f"lines {start} to {reader.line_num}"
            raise UserError(
                f"{name} {where}: a cell that begins with a quotation mark must end with one, with each quotation "
                "mark inside it doubled (as spreadsheets write it), but here text follows the closing one. Put the "
                "cell in quotation marks and double those inside it (or save the table again from the spreadsheet, "
                "or as tab-separated text), and import it again.") from None
        raise UserError(
            f"{name} line {reader.line_num} could not be read as part of a CSV table ({exc}). "
            "Save it again as CSV (UTF-8) from your spreadsheet."
        ) from None


def _as_written(raw: str, cells: list[str], delimiter: str) -> bool:
    """Whether ``raw`` (a record as it stands in the file) is ``cells`` written the spreadsheets' way: each
    cell bare (no quotation mark in it) or wrapped in quotation marks with those inside doubled."""
    at = 0
    for number, cell in enumerate(cells):
        if number:
            if not raw.startswith(delimiter, at):
                return False
            at += len(delimiter)
        quoted = '"' + cell.replace('"', '""') + '"'
        if raw.startswith(quoted, at):
            at += len(quoted)
        elif '"' not in cell and raw.startswith(cell, at):
            at += len(cell)
        else:
            return False
    return at == len(raw)


def _quoted_like_a_spreadsheet(text: str, delimiter: str) -> bool:
    """Whether every record of ``text`` is written the spreadsheets' way (and some cell is quoted)."""
    if '"' not in text:
        return False
    lines = io.StringIO(text, newline="").readlines()
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    start = 0
    try:
        for record in reader:
            raw = "".join(lines[start : reader.line_num])
            if not _as_written(raw.removesuffix("\n").removesuffix("\r"), record, delimiter):
                return False
            start = reader.line_num
    except csv.Error:
        return False
    return True


def _tsv_cell_may_span(cells: list[str]) -> bool:
    return not any("\t" in cell and ("\n" in cell or "\r" in cell) for cell in cells)


def _table_records(name: str, text: str, delimiter: str) -> list[tuple[int, list[str]]]:
    """The records of the file (see the module docstring for how quotation marks are read)."""
    if delimiter == "\t" and not _quoted_like_a_spreadsheet(text, delimiter):
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=csv.QUOTE_NONE)
        return [(reader.line_num, record) for record in reader]
    may_span = _tsv_cell_may_span if delimiter == "\t" else (lambda cells: True)
    return list(records(name, text, {"delimiter": delimiter, "strict": True}, may_span=may_span))


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
    found = _table_records(path.name, text, delimiter)
    header = [h.strip().lower() for h in found[0][1]]
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
    for start, cells in found[1:]:
        if any(cell.strip() for cell in cells):
            padded = cells + [""] * (len(header) - len(cells))
            rows.append(Row(start, {h: padded[k].strip() if h != "text" else padded[k] for k, h in enumerate(header) if h},
                            [c for c in cells[len(header):] if c.strip()]))
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
