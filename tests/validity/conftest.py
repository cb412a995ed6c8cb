"""A project for the validity tests: ten books known only from imported name-cloze results ('alpha' gets
book i right i times out of 10; 'beta' knows only book 10), a passage per book with its year and minutes,
and imported year and narrative-time answers."""

from __future__ import annotations

import pytest

from tests.fixtures.cloze_texts import BOOKS, gpt4books_rows
from workbench.probes.cloze.gpt4books import import_gpt4books
from workbench.probes.validity.passages import import_passages
from workbench.probes.validity.predictions import import_predictions

YEARS = {i: 1800 + 17 * i for i in range(1, BOOKS + 1)}
MINUTES = {i: float(3 ** (i % 7) * 5) for i in range(1, BOOKS + 1)}
#: the year 'alpha' gives for book i: the worse it knows the book, the further off (book 5 refused)
ALPHA_YEARS = {i: (None if i == 5 else YEARS[i] + (10 - i) * (-1) ** i * 3) for i in range(1, BOOKS + 1)}
ALPHA_MINUTES = {i: MINUTES[i] * (1 + (10 - i) / 3) for i in range(1, BOOKS + 1)}


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def studied(project, tmp_path):
    """(project, book ids by number): cloze results, passages, and alpha's answers to both tasks."""
    for model, right in (("alpha", lambda i: i), ("beta", lambda i: 10 if i == 10 else 0)):
        folder = tmp_path / model
        folder.mkdir()
        paths = [write(folder / f"b{i:02d}.tsv", gpt4books_rows(i, right(i))) for i in range(1, BOOKS + 1)]
        import_gpt4books(project, paths, model)
    ids = {i: project.db.execute("SELECT id FROM books WHERE external_id = ?", [f"b{i:02d}"]).fetchone()[0]
           for i in range(1, BOOKS + 1)}
    lines = ["book\tyear\tminutes\tpassage"] + [
        f"b{i:02d}\t{YEARS[i]}\t{MINUTES[i]}\tPassage of book {i}: the lamps were lit and the coach came at last."
        for i in range(1, BOOKS + 1)]
    import_passages(project, write(tmp_path / "passages.tsv", "\n".join(lines) + "\n"))
    years = ["book,answer"] + [f"b{i:02d},{'I cannot say.' if y is None else f'Published in {y}.'}"
                               for i, y in ALPHA_YEARS.items()]
    import_predictions(project, "year", write(tmp_path / "years.csv", "\n".join(years) + "\n"), "alpha")
    times = ["book,answer"] + [f"b{i:02d},{m:g} minutes" for i, m in ALPHA_MINUTES.items()]
    import_predictions(project, "narrative-time", write(tmp_path / "times.csv", "\n".join(times) + "\n"), "alpha")
    return project, ids


@pytest.fixture
def timed(studied, tmp_path):
    """Three more passages each for books 1, 2, 9 and 10, with minutes and alpha's estimates (by passage id)."""
    project, ids = studied
    extra = {}
    lines, answers = ["id\tbook\tminutes\tpassage"], ["book,passage_id,answer"]
    for i in (1, 2, 9, 10):
        for k in range(3):
            minutes = float(7 ** k + i)
            guess = minutes * (2 if i in (9, 10) else 1) * (1 + (k == 1 and i < 5) * 40)
            extra[f"q{i}-{k}"] = (i, minutes, guess)
            lines.append(f"q{i}-{k}\tb{i:02d}\t{minutes}\tAnother passage {k} of book {i}.")
            answers.append(f"b{i:02d},q{i}-{k},{guess:g} minutes")
    import_passages(project, write(tmp_path / "more.tsv", "\n".join(lines) + "\n"))
    import_predictions(project, "narrative-time", write(tmp_path / "more.csv", "\n".join(answers) + "\n"), "alpha")
    return project, ids, extra
