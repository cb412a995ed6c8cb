import csv
import io
from contextlib import redirect_stdout

import pytest

from tests.fixtures.annotation_data import add_book, invented_novel, write_csv
from workbench.cli import main
from workbench.project import Project


def run(*args):
    out = io.StringIO()
    with redirect_stdout(out):
        code = main([str(a) for a in args])
    return code, out.getvalue()


def test_the_annotation_commands_end_to_end(tmp_path, capsys):
    path = tmp_path / "study.palimpsest"
    project = Project.create(path)
    books = [add_book(project, "One", "A", invented_novel(1)), add_book(project, "Two", "B", invented_novel(2), {"group": "x"})]
    project.close()

    assert run("annotate", "create", path, "--task", "nt", "--kind", "narrative-time", "--blind",
               "--per-annotator", "4", "--overlap", "0.5", "--seed", "3")[0] == 0
    code, out = run("annotate", "items", path, "--task", "nt", "--book", books[0], "--book", books[1], "--per-book", "2")
    assert code == 0 and "Added 4 passages from 2 book(s)" in out
    assert run("annotate", "items", path, "--task", "nt", "--tag", "group=x", "--per-book", "3")[0] == 0

    code, out = run("annotate", "export", path, "--task", "nt", "--table", "items", "--out", tmp_path / "items.csv")
    keys = [row["item_id"] for row in csv.DictReader((tmp_path / "items.csv").read_text(encoding="utf-8").splitlines())]
    assert len(keys) == 5
    answers = write_csv(tmp_path / "answers.csv", ["annotator", "item_id", "value"],
                        [["Ann", k, f"{n + 1} hours"] for n, k in enumerate(keys)]
                        + [["Bob", k, f"{2 * n + 1} hours"] for n, k in enumerate(keys)])
    code, out = run("annotate", "import", path, "--task", "nt", answers)
    assert code == 0 and "Imported 10 answers and 2 new annotator(s)" in out

    code, out = run("annotate", "agreement", path, "--task", "nt", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["statistic"] for r in rows] == ["Krippendorff's alpha (interval, log minutes)", "Spearman's rho: Ann vs Bob"]
    assert {"value", "items", "annotators"} <= set(rows[0])
    assert float(rows[1]["value"]) == pytest.approx(1.0) and rows[1]["items"] == "5" and rows[0]["annotators"] == "2"

    assert run("annotate", "export", path, "--task", "nt", "--out", tmp_path / "answers-out.csv")[0] == 0
    exported = list(csv.DictReader((tmp_path / "answers-out.csv").read_text(encoding="utf-8").splitlines()))
    assert len(exported) == 10 and exported[0]["minutes"] and "seconds" in exported[0] and "true_side" in exported[0]

    code, _ = run("annotate", "import", path, "--task", "nt", answers)
    assert code == 1
    assert "already has an answer" in capsys.readouterr().err
    code, _ = run("annotate", "create", path, "--task", "lab", "--kind", "label")
    assert code == 1 and "label set" in capsys.readouterr().err
    code, out = run("annotate", "tasks", path, "--format", "csv")
    assert "nt,narrative-time" in out


def test_agreement_without_answers_says_what_it_needs(tmp_path, capsys):
    from workbench.annotation.tasks import create_task
    from workbench.cli import main
    from workbench.project import Project

    path = tmp_path / "a.palimpsest"
    with Project.create(path) as project:
        create_task(project, "nt", "narrative-time")
    capsys.readouterr()
    assert main(["annotate", "agreement", str(path), "--task", "nt"]) == 0
    out = capsys.readouterr().out
    assert "No one has answered the items of 'nt' yet" in out and "at least two annotators" in out
