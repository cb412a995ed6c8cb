"""The published GPT-4 and ChatGPT name-cloze outputs (bamman-group/gpt4-books), imported and checked.

Needs the public outputs fetched beside the checkout (``benchmarks.common.GPT4_BOOKS``:
``data/model_output/gpt4_results`` and ``chatgpt_results``, 571 files each); skipped, saying where it
looked, when they are absent. Both folders are imported into a temporary project (as the models ``gpt4``
and ``chatgpt``, each folder given as it is, the way ``palimpsest cloze import P --model-label gpt4 FOLDER``
takes it), and:

- ``published_import_gpt4`` / ``published_import_chatgpt``: files, answers and books, and the seconds the
  import took (CPU and wall clock). Nothing may be refused: the two files of Gutenberg 472 in each folder
  (``472_the_house_behind_the_cedars.txt``, ``chesnutt_..._pg472_House_Behind_the_Cedars.txt``: the same
  passages answered twice) become two books tagged ``same_work``.
- ``published_reproduced``: every file's accuracy recomputed from the file alone (here, not by the
  workbench's scorer: tags ``<name>``/``</name>`` removed, blanks trimmed, compared with the gold name
  ignoring case, over the file's rows) against the project's ``palimpsest cloze accuracy --format csv`` row
  for that model and the file's book (joined by ``book_source``, the file's name). Value: the largest
  absolute difference (goal 0); ``files``: the files matched (goal: every file).
- ``published_vs_paper``: the paper's tables of top books by GPT-4 accuracy (Chang et al. 2023, Table 1:
  top 20; Table 6: top 50 published after 1928), read from the plain-text copy of the paper
  (``PAPER``; skipped when absent), matched to files by title (word for word, one title may be the start of
  the other: "Frankenstein" and ``84_frankenstein_or_the_modern_prometheus``), and by the author's surname
  where a title matches several files. Each matched book's GPT-4 and ChatGPT accuracies, rounded to the
  paper's two decimals, against the paper's. Value: books whose numbers differ (goal 0); ``unmatched``: the
  paper's books no file could be matched to, with why; ``by_published_parse``: how many of the matched
  numbers the files' own second column (the authors' parse, compared exactly) would reproduce, which says
  which rule the paper used.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

from benchmarks.common import GPT4_BOOKS, SHARED_DATA, line, missing_data, skipped

MODELS = ("gpt4", "chatgpt")
OUTPUTS = GPT4_BOOKS / "data" / "model_output"
#: the plain-text copy of *Speak, Memory* (``PALIMPSEST_PAPER`` names another copy)
PAPER = Path(os.environ.get("PALIMPSEST_PAPER") or SHARED_DATA.parent / "seeds" / "000_9a18b0566b270fa8.txt")
TAG = re.compile(r"<\s*/?\s*name\s*>", re.IGNORECASE)
PAPER_ROW = re.compile(r"^(\d\.\d\d)\t(\d\.\d\d)\t(\d\.\d\d)\t(\d{4})\t([^\t]*)\t<i>(.*?)</i>\s*$")
CAPTION = re.compile(r"^Table (\d+):")


def file_rows(path: Path) -> list[tuple[str, str, str]]:
    """(raw answer, published parse, gold name) of each non-blank line of a results file."""
    rows = []
    for text in path.read_text(encoding="utf-8-sig").splitlines():
        if text.strip():
            raw, parsed, gold, _passage = text.split("\t")
            rows.append((raw, parsed, gold))
    return rows


def file_accuracy(rows: list[tuple[str, str, str]]) -> float:
    """The file's accuracy by the documented rule, computed here without the workbench."""
    right = sum(TAG.sub("", raw).strip().casefold() == gold.strip().casefold() for raw, _, gold in rows)
    return right / len(rows)


def parse_accuracy(rows: list[tuple[str, str, str]]) -> float:
    """The accuracy the files' second column (the authors' own parse) gives, compared exactly."""
    return sum(parsed == gold for _, parsed, gold in rows) / len(rows)


def paper_rows(text: str) -> list[dict[str, Any]]:
    """The rows of the paper's tables of books (GPT-4, ChatGPT, BERT, year, author, title), each with the
    tables it appears in; a book in two tables appears once."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    pending: list[dict[str, Any]] = []
    for text_line in text.splitlines():
        found = PAPER_ROW.match(text_line)
        if found:
            gpt4, chatgpt, _bert, year, author, title = found.groups()
            row = rows.setdefault((author, title), {"title": title, "author": author, "year": int(year),
                                                    "gpt4": float(gpt4), "chatgpt": float(chatgpt), "tables": []})
            pending.append(row)
            continue
        caption = CAPTION.match(text_line)
        if caption and pending:
            for row in pending:
                row["tables"].append(int(caption.group(1)))
            pending = []
    return list(rows.values())


def _words(title: str) -> list[str]:
    title = title.casefold().replace("&", " and ").replace("’", "'")
    return [w for w in (re.sub(r"[^0-9a-z]", "", w) for w in re.split(r"[\s_\-:;,.?!]+", title)) if w]


def match_file(row: dict[str, Any], titles: dict[str, tuple[list[str], str]]) -> tuple[str | None, str]:
    """The results file of a paper row, and why none when there is none."""
    want = _words(row["title"])
    found = [name for name, (words, _) in titles.items()
             if words and (words[:len(want)] == want or want[:len(words)] == words)]
    if len(found) > 1:
        surname = _words(row["author"])[-1:]
        found = [name for name in found if surname and _words(titles[name][1])[-1:] == surname] or found
    if len(found) == 1:
        return found[0], ""
    if not found:
        return None, "no file's name spells this title"
    return None, f"several files could be this title: {', '.join(sorted(found))}"


def _accuracy_rows(project_path: Path) -> list[dict[str, str]]:
    """The project's ``palimpsest cloze accuracy --format csv``, read back."""
    from workbench.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if main(["cloze", "accuracy", str(project_path), "--format", "csv"]) != 0:
            raise RuntimeError("palimpsest cloze accuracy failed")
    return list(csv.DictReader(io.StringIO(out.getvalue())))


def run(quick: bool) -> Iterator[dict[str, Any]]:
    missing = missing_data("published_import", OUTPUTS / "gpt4_results",
                           "the public gpt4-books outputs (git clone of bamman-group/gpt4-books)")
    if missing:
        yield missing
        return
    from workbench.probes.cloze.gpt4books import import_gpt4books, readable_id
    from workbench.project import Project

    with tempfile.TemporaryDirectory(prefix="palimpsest-published-") as folder:
        project_path = Path(folder) / "published.palimpsest"
        project = Project.create(project_path)
        try:
            for model in MODELS:
                wall, cpu = time.perf_counter(), time.process_time()
                summary = import_gpt4books(project, [OUTPUTS / f"{model}_results"], model)
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                books = project.db.execute("SELECT COUNT(*) FROM books").fetchone()[0]
                yield line(f"published_import_{model}", cpu, "s", "imports every file (nothing refused)",
                           len(summary) == len(list((OUTPUTS / f"{model}_results").glob("*.txt"))),
                           wall_s=round(wall, 2), files=len(summary), answers=int(summary["rows"].sum()),
                           books_in_project=books, new_books=int(summary["new_book"].sum()),
                           same_work_files=int(summary["same_work_as"].notna().sum()))
            same_work = project.db.execute(
                "SELECT b.id, b.source_name, t.value FROM book_tags t JOIN books b ON b.id = t.book_id"
                " WHERE t.key = 'same_work' ORDER BY b.id").fetchall()
        finally:
            project.close()
        rows = _accuracy_rows(project_path)

    ours = {(r["model"], r["book_source"]): r for r in rows}
    differences, matched, files, counts_differ = [], 0, {}, []
    for model in MODELS:
        for path in sorted((OUTPUTS / f"{model}_results").glob("*.txt")):
            files[(model, path.name)] = file_rows(path)
    for key, found in files.items():
        row = ours.get(key)
        if row is None:
            continue
        matched += 1
        differences.append(abs(float(row["accuracy"]) - file_accuracy(found)))
        if int(row["n"]) != len(found):
            counts_differ.append(f"{key[0]}/{key[1]}: {row['n']} answers counted, {len(found)} rows")
    largest = max(differences) if differences else float("nan")
    yield line("published_reproduced", largest, "max |accuracy difference|",
               "every file's accuracy recomputed from the file equals its cloze accuracy row",
               matched == len(files) and largest == 0.0 and not counts_differ, files=len(files), matched=matched,
               counts_differ=counts_differ,
               accuracy_rows=len(rows), same_work=[f"{source} (book {book}, {value})" for book, source, value in same_work],
               files_not_100_rows=sorted(f"{m}/{name}: {len(r)}" for (m, name), r in files.items() if len(r) != 100))

    if not PAPER.exists():
        yield skipped("published_vs_paper", f"needs the plain-text copy of Speak, Memory; looked in {PAPER}")
        return
    titles = {}
    for path in sorted((OUTPUTS / "gpt4_results").glob("*.txt")):
        read = readable_id(path.stem)
        titles[path.name] = (_words(read.title or path.stem), read.author)
    compared, unmatched, differ, by_parse = [], [], [], 0
    for paper in paper_rows(PAPER.read_text(encoding="utf-8")):
        name, why = match_file(paper, titles)
        if name is None:
            unmatched.append(f"{paper['title']} ({paper['author']}): {why}")
            continue
        entry = {"title": paper["title"], "file": name, "tables": paper["tables"]}
        for model in MODELS:
            value = float(ours[(model, name)]["accuracy"])
            entry[model] = {"paper": paper[model], "ours": round(value, 4)}
            by_parse += round(parse_accuracy(files[(model, name)]), 2) == paper[model]
            if round(value, 2) != paper[model]:
                differ.append(f"{model}: {paper['title']} paper {paper[model]:.2f}, ours {value:.4f} ({name})")
        compared.append(entry)
    yield line("published_vs_paper", len(differ), "books differing", "0 (each matched book's numbers as printed)",
               not differ and bool(compared), books_in_tables=len(compared) + len(unmatched), matched=len(compared),
               numbers_compared=2 * len(compared), differ=differ, unmatched=unmatched,
               by_published_parse=f"{by_parse} of {2 * len(compared)}", compared=compared if not quick else None)
