"""The ``palimpsest cloze`` commands and the name-cloze charts written as real PDF, SVG and PNG files."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET

import pytest

from tests.fixtures.cloze_texts import add_book, novel
from workbench.cli import main
from workbench.corpus.library import set_tags, update_book
from workbench.export.registry import charts, export_chart, tables
from workbench.jobs import Outcome, Unit, create_run, run_job
from workbench.probes.cloze.gpt4books import external_model

CHARTS = ["cloze-accuracy", "cloze-categories", "cloze-models", "cloze-year"]


def _tsv(book: int, right: int) -> str:
    return "".join(
        f"<name>{f'N{book}k{k}' if k < right else 'X'}</name>\tx\tN{book}k{k}\tPart {k} of {book}: [MASK] left.\n"
        for k in range(8)
    )


@pytest.fixture
def imported(tmp_path, project):
    """Two published-results 'models' over six books with years and a genre tag, imported by the CLI."""
    for model, right in (("gpt-a", lambda i: i), ("gpt-b", lambda i: max(0, i - 2))):
        folder = tmp_path / model
        folder.mkdir()
        files = []
        for i in range(1, 7):
            path = folder / f"book{i}.tsv"
            path.write_text(_tsv(i, right(i)), encoding="utf-8")
            files.append(str(path))
        assert main(["cloze", "import", str(project.path), "--model-label", model, *files]) == 0
    for i in range(1, 7):
        book_id = project.db.execute("SELECT id FROM books WHERE external_id = ?", [f"book{i}"]).fetchone()[0]
        update_book(project, book_id, year=1840 + 9 * i)
        set_tags(project, book_id, {"genre": "sea" if i % 2 else "city"})
    return project


def _csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_accuracy_command_prints_the_per_book_table(imported, capsys):
    capsys.readouterr()
    assert main(["cloze", "accuracy", str(imported.path), "--model", "gpt-a", "--format", "csv"]) == 0
    rows = _csv(capsys.readouterr().out)
    assert list(rows[0]) == ["book", "book_id", "book_source", "book_external_id", "model", "n", "correct", "accuracy",
                             "ci_low", "ci_high"]
    by_book = {r["book"]: r for r in rows}
    assert by_book["book3"]["book_source"] == "book3.tsv" and by_book["book3"]["book_external_id"] == "book3"
    ids = dict(imported.db.execute("SELECT external_id, id FROM books").fetchall())
    assert all(int(r["book_id"]) == ids[r["book_external_id"]] for r in rows)
    assert set(by_book) == {f"book{i}" for i in range(1, 7)}  # imported books are named by their id
    assert by_book["book3"]["n"] == "8" and by_book["book3"]["correct"] == "3"
    assert float(by_book["book3"]["accuracy"]) == pytest.approx(3 / 8)


def test_analysis_commands(imported, capsys):
    capsys.readouterr()
    assert main(["cloze", "compare", str(imported.path), "gpt-a", "gpt-b", "--format", "csv"]) == 0
    tests = {r["test"]: r for r in _csv(capsys.readouterr().out)}
    assert float(tests["Wilcoxon signed-rank (per-book accuracy)"]["p_value"]) < 0.05
    assert main(["cloze", "compare", str(imported.path), "gpt-a", "gpt-b", "--books", "--format", "csv"]) == 0
    rows = _csv(capsys.readouterr().out)
    assert {(r["model_a"], r["model_b"]) for r in rows} == {("gpt-a", "gpt-b")}  # which model each column is
    assert main(["cloze", "categories", str(imported.path), "genre", "--format", "csv"]) == 0
    assert {r["value"] for r in _csv(capsys.readouterr().out)} == {"sea", "city"}
    assert main(["cloze", "year", str(imported.path), "--format", "csv"]) == 0
    assert float(_csv(capsys.readouterr().out)[0]["rho"]) == pytest.approx(1.0)
    assert main(["cloze", "deciles", str(imported.path), "--model", "gpt-a", "--format", "csv"]) == 0
    assert [r["book"] for r in _csv(capsys.readouterr().out)] == ["book6", "book1"]  # top and bottom of six


def test_charts_are_registered_and_listed(imported, capsys):
    assert set(CHARTS) <= set(charts())
    assert {"cloze-passage-results", "cloze-book-accuracy", "cloze-passages", "cloze-extractions"} <= set(tables())
    capsys.readouterr()
    assert main(["charts", str(imported.path), "--format", "csv"]) == 0
    assert set(CHARTS) <= {r["name"] for r in _csv(capsys.readouterr().out)}


@pytest.mark.parametrize("name", CHARTS)
def test_every_chart_writes_valid_pdf_svg_and_png_with_its_csv(imported, tmp_path, name):
    from PIL import Image

    options = ["--option", "color_by=genre"] if name == "cloze-accuracy" else []
    options += ["--option", "tag=genre"] if name == "cloze-categories" else []
    for suffix in ("pdf", "svg", "png"):
        out = tmp_path / f"{name}.{suffix}"
        assert main(["chart", str(imported.path), name, "--out", str(out), *options]) == 0
        data = out.read_bytes()
        if suffix == "pdf":
            assert data.startswith(b"%PDF")
        elif suffix == "svg":
            assert ET.fromstring(data).tag.endswith("svg")
        else:
            with Image.open(out) as image:
                dpi = image.info["dpi"]
                width_inches = image.size[0] / dpi[0]
            assert dpi == pytest.approx((300, 300), abs=0.01)
            assert 3 <= width_inches <= 12  # a figure's width, drawn at 300 pixels per inch
        rows = _csv(out.with_suffix(".csv").read_text(encoding="utf-8"))
        assert rows


def test_the_ranked_chart_plots_what_its_csv_says(imported, tmp_path):
    written = export_chart(imported, "cloze-accuracy", tmp_path / "ranked.png", model="gpt-b", color_by="genre")
    rows = _csv(written[1].read_text(encoding="utf-8"))
    assert [r["rank"] for r in rows] == [str(i) for i in range(1, 7)]
    assert [float(r["accuracy"]) for r in rows] == sorted((float(r["accuracy"]) for r in rows), reverse=True)
    assert {r["group"] for r in rows} == {"sea", "city"} and {r["model"] for r in rows} == {"gpt-b"}


def test_per_passage_export_has_raw_parsed_correct_and_errors(imported, tmp_path):
    from workbench.export.registry import export_table

    model_id = external_model(imported, "gpt-c")
    passage = imported.db.execute("SELECT id FROM cloze_passages ORDER BY id LIMIT 1").fetchone()[0]
    run_id = create_run(imported, "cloze", model_id=model_id)
    run_job(imported, run_id, [Unit(passage)], lambda units, s: [(u, Outcome.failure("timed out")) for u in units])
    path = export_table(imported, "cloze-passage-results", tmp_path / "answers.csv")
    rows = _csv(path.read_text(encoding="utf-8"))
    assert {"book", "passage_id", "passage", "gold", "raw", "parsed", "correct", "status", "error"} <= set(rows[0])
    failed = [r for r in rows if r["model"] == "gpt-c"]
    assert failed == [dict(failed[0], status="failed", error="timed out", correct="")]
    ok = [r for r in rows if r["model"] == "gpt-a" and r["book"] == "book2"]
    assert sorted(r["correct"] for r in ok) == ["False"] * 6 + ["True"] * 2


def test_extract_and_passages_commands(project, capsys):
    book_id = add_book(project, novel(30), "wet.txt", title="Wet Week")
    capsys.readouterr()
    assert main(["cloze", "extract", str(project.path), "--per-book", "5", "--seed", "4", "--fast"]) == 0
    assert "Wet Week" in capsys.readouterr().out
    assert main(["cloze", "passages", str(project.path), "--format", "csv"]) == 0
    rows = _csv(capsys.readouterr().out)
    assert list(rows[0]) == ["book", "book_id", "book_source", "book_external_id", "passage_id", "passage", "gold",
                            "start_char", "end_char"]
    assert len(rows) == 5 and all(r["book_id"] == str(book_id) and "[MASK]" in r["passage"] for r in rows)


def test_replacing_used_passages_needs_confirmation(project, capsys):
    add_book(project, novel(12), "wet.txt", title="Wet Week")
    assert main(["cloze", "extract", str(project.path), "--per-book", "3"]) == 0
    ids = [r[0] for r in project.db.execute("SELECT id FROM cloze_passages")]
    run_id = create_run(project, "cloze")
    run_job(project, run_id, [Unit(i) for i in ids], lambda units, s: [(u, Outcome(raw="x")) for u in units])
    capsys.readouterr()
    assert main(["cloze", "extract", str(project.path), "--per-book", "4"]) == 1
    assert "replace" in capsys.readouterr().err
    assert main(["cloze", "extract", str(project.path), "--per-book", "4", "--replace"]) == 1  # no terminal to ask
    assert "--yes" in capsys.readouterr().err
    assert project.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3
    assert main(["cloze", "extract", str(project.path), "--per-book", "4", "--replace", "--yes"]) == 0
    assert project.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0


def test_templates_command_lists_and_adds_versions(project, tmp_path, capsys):
    capsys.readouterr()
    assert main(["cloze", "templates", str(project.path), "--format", "csv"]) == 0
    assert [r["name"] for r in _csv(capsys.readouterr().out)] == ["name-cloze"]
    mine = tmp_path / "mine.txt"
    mine.write_text("Who is hidden here? {passage}\nAnswer:", encoding="utf-8")
    assert main(["cloze", "templates", str(project.path), "--add", "name-cloze", str(mine)]) == 0
    assert "name-cloze v2" in capsys.readouterr().out
    mine.write_text("No placeholder here.", encoding="utf-8")
    assert main(["cloze", "templates", str(project.path), "--add", "other", str(mine)]) == 1
    assert "{passage}" in capsys.readouterr().err


def test_deciles_of_flagged_books_say_so_and_how_to_include_them(two_books, capsys):
    from workbench import jobs
    from workbench.models.catalog import external_model
    from workbench.probes.cloze.extract import extract_books
    from workbench.probes.cloze.rules import ExtractionSettings

    project, _, _ = two_books
    extract_books(project, settings=ExtractionSettings(per_book=500, seed=1))  # fewer found than asked: flagged
    gold = dict(project.db.execute("SELECT id, CASE WHEN book_id = 1 THEN gold ELSE 'Nobody' END FROM cloze_passages"))
    run_id = jobs.create_run(project, "cloze", model_id=external_model(project, "m"), total=len(gold))
    jobs.run_job(project, run_id, [jobs.Unit(i) for i in gold],
                 lambda units, state: [(u, jobs.Outcome(raw=f"<name>{gold[u.item_id]}</name>")) for u in units])
    path = str(project.path)
    project.close()
    capsys.readouterr()
    assert main(["cloze", "deciles", path, "--model", "m"]) == 1
    err = capsys.readouterr().err
    assert "All 2 books with results for 'm' are flagged" in err and "--include-flagged" in err
    assert main(["cloze", "deciles", path, "--model", "m", "--include-flagged", "--format", "csv"]) == 0, \
        capsys.readouterr().err
