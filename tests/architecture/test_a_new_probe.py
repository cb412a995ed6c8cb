"""A new probe is one package and one line in the parts list: nothing else of the program changes for it.

The test writes a complete toy probe, ``toylengths``, into a temporary folder: its own table (a migration set),
a run kind (typed config, units, resumer), a ``palimpsest`` command that runs it through the job runner, a table
and a chart in the export registry, a methods section, an evidence source for the exposure report and a page
of the window. The only shared change is the parts list (``workbench.parts.PARTS``, monkeypatched). The
probe computes something trivial from each passage (how many words it has: no model is asked), and the test
then finds every piece through the program's public entry points: ``palimpsest --help`` and the command, the
project file, the run store, ``palimpsest runs`` and the Jobs page, ``palimpsest continue``, ``palimpsest
table`` and ``chart``, ``palimpsest methods``, the exposure report and the window's navigation. No file of
``workbench/`` or ``ui/`` is changed, and the registries are as they were afterwards.
"""

from __future__ import annotations

import hashlib
import importlib
import sqlite3
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

import workbench
from workbench import parts

ROOT = Path(workbench.__file__).resolve().parent.parent
PACKAGE = "toylengths"
KIND = "toy-lengths"
KIND_WORDS = "Word counts of book passages"
#: paragraphs of the two books, by their word counts: a passage is "long" from 8 words on
BOOK_WORDS = {"harbour": [3, 10, 12, 5], "lantern": [9, 2, 1, 1]}

TOY_FILES = {
    "__init__.py": f'''
        """A toy probe: how many words each passage of a book has (no model is asked)."""

        from workbench.parts import PageSpec, Part

        PART = Part(
            "{KIND}",
            commands=("{PACKAGE}.commands",),
            exports=("{PACKAGE}.charts",),
            run_kinds=("{PACKAGE}.kinds",),
            methods=("{PACKAGE}.methods",),
            evidence=("{PACKAGE}.evidence",),
            migrations="{PACKAGE}.migrations",
            pages=(PageSpec("{KIND}", "Passage lengths", "{PACKAGE}.page:LengthsPage"),),
        )
        ''',
    "migrations.py": '''
        from workbench.project.schema import MigrationSet

        MIGRATIONS = MigrationSet("toy-lengths")


        @MIGRATIONS(name="0001_passages")
        def passages(db):
            db.execute("CREATE TABLE toy_length_passages (id INTEGER PRIMARY KEY, "
                       "book_id INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE, position INTEGER NOT NULL, "
                       "start_char INTEGER NOT NULL, end_char INTEGER NOT NULL, UNIQUE (book_id, position))")
        ''',
    "kinds.py": f'''
        from dataclasses import dataclass

        from workbench.runs import RunKind, declare_run_kind


        @dataclass(frozen=True)
        class LengthsConfig:
            book_ids: tuple[int, ...] = ()
            per_book: int = 4


        LENGTHS_KIND = declare_run_kind(RunKind(
            "{KIND}", "{KIND_WORDS[0].lower() + KIND_WORDS[1:]}", "passage", config=LengthsConfig,
            resume="{PACKAGE}.run:resume_run", units="{PACKAGE}.run:passage_units"))
        ''',
    "run.py": '''
        from workbench import jobs, runs
        from workbench.corpus.library import book_text
        from workbench.models.catalog import runnable_model
        from workbench.progress import TaskState

        from toylengths.kinds import LENGTHS_KIND, LengthsConfig


        def cut_passages(project, book_ids, per_book):
            """The first ``per_book`` paragraphs of each book, as offsets into its text."""
            with project.db.transaction():
                for book_id in book_ids:
                    text, start = book_text(project, book_id), 0
                    for position in range(per_book):
                        end = text.find("\\n\\n", start)
                        end = len(text) if end < 0 else end
                        if start >= len(text):
                            break
                        project.db.execute("INSERT OR IGNORE INTO toy_length_passages (book_id, position, start_char,"
                                           " end_char) VALUES (?, ?, ?, ?)", [book_id, position, start, end])
                        start = end + 2


        def passage_units(project, run):
            rows = project.db.execute(
                "SELECT id FROM toy_length_passages WHERE position < ? AND book_id IN (SELECT value FROM json_each(?))"
                " ORDER BY id", [run.config.per_book, "[" + ",".join(map(str, run.config.book_ids)) + "]"])
            return [runs.Unit(passage_id) for passage_id, in rows]


        def _process(project):
            def process(chunk, state):
                for unit in chunk:
                    state.check()
                    book_id, start, end = project.db.execute(
                        "SELECT book_id, start_char, end_char FROM toy_length_passages WHERE id = ?",
                        [unit.item_id]).fetchone()
                    words = len(book_text(project, book_id)[start:end].split())
                    yield unit, jobs.Outcome(raw=str(words), extra={"book_id": book_id})
            return process


        def run_lengths(project, model, book_ids, per_book=4, state=None):
            spec = runnable_model(project, model)
            cut_passages(project, book_ids, per_book)
            run_id = runs.find_or_create_run(project, LENGTHS_KIND, model_id=spec.id, params={},
                                             config=LengthsConfig(tuple(sorted(book_ids)), per_book))
            return resume_run(project, run_id, state or TaskState(), False)


        def resume_run(project, run_id, state, retry_failed):
            run = runs.get_run(project, run_id)
            return jobs.run_job(project, run_id, LENGTHS_KIND.units_of(project, run), _process(project), state,
                                retry_failed=retry_failed, chunk_size=2, commit_every=1)
        ''',
    "results.py": '''
        import pandas as pd

        from workbench import runs
        from workbench.analysis.intervals import wilson_interval

        from toylengths.kinds import LENGTHS_KIND

        LONG = 8
        COLUMNS = ["book_id", "passages", "long", "long_share", "ci_low", "ci_high", "mean_words"]


        def book_table(project, model):
            chosen = runs.run_ids(project, LENGTHS_KIND, model_label=model)
            answers = runs.responses(project, chosen, columns=["raw", "extra"])
            if answers.empty:
                return pd.DataFrame(columns=COLUMNS)
            import json

            answers = answers.assign(words=answers["raw"].astype(int),
                                     book_id=[json.loads(e)["book_id"] for e in answers["extra"]])
            rows = []
            for book_id, group in answers.groupby("book_id"):
                n, long = len(group), int((group["words"] >= LONG).sum())
                low, high = wilson_interval(long, n)
                rows.append({"book_id": int(book_id), "passages": n, "long": long, "long_share": long / n,
                             "ci_low": low, "ci_high": high, "mean_words": float(group["words"].mean())})
            return pd.DataFrame(rows, columns=COLUMNS)
        ''',
    "charts.py": '''
        import pandas as pd

        from workbench.export.registry import ChartOption, ChartSpec, Marks, TableSpec, register_chart, register_table


        def books_frame(project, model=None, **_):
            from toylengths.results import COLUMNS, book_table

            return book_table(project, model) if model else pd.DataFrame(columns=COLUMNS)


        def draw(frame, fig, **_):
            ax = fig.add_subplot()
            y = list(range(len(frame)))
            ax.barh(y, frame["long_share"])
            ax.set_xlabel("share of passages of 8 words or more")
            return [Marks(ax, frame["long_share"].to_numpy(), y, lambda i: str(frame["book_id"].iloc[i]))]


        register_table(TableSpec("toy-lengths-books", "Passage lengths: per book", books_frame, "model=LABEL"))
        register_chart(ChartSpec("toy-lengths-long", "Passage lengths: share of long passages", books_frame, draw,
                                 options=(ChartOption("model", "Model"),), page="toy-lengths"))
        ''',
    "methods.py": '''
        from workbench.export.methods import MethodsSection, Statistic, register_methods

        from toylengths.kinds import LENGTHS_KIND

        register_methods(MethodsSection(
            key="toy-lengths", title="Passage lengths", kinds=(LENGTHS_KIND,),
            procedure=lambda runs: f"Each of {len(runs)} run(s) counted the words of the first paragraphs of books.",
            statistics=lambda: [Statistic("Wilson score interval (95%)", "for each book's share of long passages",
                                          "statsmodels proportion_confint")],
            order=90))
        ''',
    "evidence.py": '''
        import pandas as pd

        from workbench.export.evidence import EVIDENCE_COLUMNS, NONE, SOME, EvidenceSource, register_evidence


        def lengths_evidence(project, model):
            from toylengths.results import book_table

            table = book_table(project, model)
            if table.empty:
                return pd.DataFrame(columns=EVIDENCE_COLUMNS)
            return pd.DataFrame({
                "book_id": table["book_id"], "value": table["long_share"], "ci_low": table["ci_low"],
                "ci_high": table["ci_high"], "n": table["passages"],
                "signal": [SOME if s >= 0.5 else NONE for s in table["long_share"]],
                "basis": [f"{a} of {n} passages long" for a, n in zip(table["long"], table["passages"])]})


        register_evidence(EvidenceSource(key="toylen", label="Passage lengths", measure="share of long passages",
                                         books=lengths_evidence, order=95))
        ''',
    "commands.py": '''
        from workbench.cli.common import BOOK_HELP, MODEL_HELP, add_project_argument, opened, progress_state, report_run


        def register(subparsers):
            top = subparsers.add_parser("toy-lengths", help="toy probe: count the words of book passages")
            commands = top.add_subparsers(dest="toy_command", metavar="STEP")
            p = commands.add_parser("run", help="count the words of the first paragraphs of each book")
            add_project_argument(p)
            p.add_argument("--model", required=True, help=MODEL_HELP)
            p.add_argument("--book", type=int, action="append", help=BOOK_HELP)
            p.add_argument("--per-book", type=int, default=4)
            p.set_defaults(handler=cmd_run)


        def cmd_run(args):
            from workbench.corpus.library import list_books

            from toylengths.run import run_lengths

            with opened(args.project) as project:
                books = args.book or [b.id for b in list_books(project)]
                report = run_lengths(project, args.model, books, args.per_book, progress_state("Counting"))
            return report_run(report, args.project, f"Passage lengths on {args.model}")
        ''',
    "page.py": '''
        from PySide6.QtWidgets import QLabel, QVBoxLayout

        from ui.widgets.page import Page


        class LengthsPage(Page):
            def __init__(self, ops, parent=None):
                super().__init__(ops, parent)
                QVBoxLayout(self).addWidget(QLabel("How many words each passage has."))
        ''',
}


def _sources() -> dict[Path, str]:
    """The sha256 of every Python file of the core and of the window."""
    return {path: hashlib.sha256(path.read_bytes()).hexdigest()
            for folder in ("workbench", "ui") for path in sorted((ROOT / folder).rglob("*.py"))}


def _forget(name: str) -> None:
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]
    importlib.invalidate_caches()


def _write_probe(folder: Path) -> None:
    package = folder / PACKAGE
    package.mkdir()
    for name, text in TOY_FILES.items():
        (package / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def _write_books(folder: Path) -> list[Path]:
    """A text file per book whose paragraphs have the word counts of ``BOOK_WORDS``."""
    folder.mkdir()
    paths = []
    for title, counts in BOOK_WORDS.items():
        paragraphs = [" ".join(f"{title}{k}" for k in range(n)) for n in counts]
        path = folder / f"{title}.txt"
        path.write_text("\n\n".join(paragraphs), encoding="utf-8")
        paths.append(path)
    return paths


@pytest.fixture
def toy_probe(tmp_path, monkeypatch):
    """The toy probe in a folder on ``sys.path`` and in the parts list; every registry read again from the
    parts, and put back as it was afterwards (the toy's modules forgotten)."""
    from workbench.export import evidence, methods
    from workbench.export import registry as exports
    from workbench.runs import kinds

    # everything the parts bring today, loaded before the registries are copied (so the copies are whole)
    exports.tables(), methods.sections(), kinds.declared_kinds(), evidence.evidence_sources()
    for module, names in ((exports, ("_TABLES", "_CHARTS")), (methods, ("_SECTIONS",)), (evidence, ("_SOURCES",)),
                          (kinds, ("_DECLARED",))):
        for name in names:
            monkeypatch.setattr(module, name, dict(getattr(module, name)))
        if hasattr(module, "_loaded"):  # read the parts again: the toy probe is one of them now
            monkeypatch.setattr(module, "_loaded", False)
    code = tmp_path / "code"
    code.mkdir()
    _write_probe(code)
    monkeypatch.syspath_prepend(str(code))
    monkeypatch.setattr(parts, "PARTS", [*parts.PARTS, PACKAGE])
    yield
    _forget(PACKAGE)


def _csv(capsys) -> pd.DataFrame:
    import io

    return pd.read_csv(io.StringIO(capsys.readouterr().out))


def test_a_new_probe_brings_everything_from_its_own_package(toy_probe, tmp_path, capsys, qtbot):
    from PySide6.QtCore import QSettings

    from ui.main_window import MainWindow
    from workbench import runs
    from workbench.cli import main
    from workbench.export.report import exposure_table
    from workbench.progress import TaskState
    from workbench.project import Project

    before = _sources()

    # the command is listed and has its help
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    assert "toy-lengths" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["toy-lengths", "run", "--help"])
    assert "--per-book" in capsys.readouterr().out

    # a project made now has the probe's table, its migration recorded by set and name
    path = tmp_path / "study.palimpsest"
    assert main(["new", str(path)]) == 0
    assert main(["import", str(path), *map(str, _write_books(tmp_path / "books"))]) == 0
    assert main(["model", "add", str(path), "--label", "counter", "--backend", "hf", "--ref", "some-org/none"]) == 0
    conn = sqlite3.connect(path)
    assert "toy_length_passages" in {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert ("toy-lengths", "0001_passages") in conn.execute("SELECT migration_set, name FROM _sqlite_migrations")
    conn.close()

    # the command runs the probe through the run store and the job runner
    capsys.readouterr()
    assert main(["toy-lengths", "run", str(path), "--model", "counter"]) == 0
    assert "8 of 8 answered" in capsys.readouterr().out

    # a run stopped half-way (the probe's own function, cancelled after two passages) ...
    with Project.open(path) as project:
        harbour = project.db.execute("SELECT id FROM books WHERE title LIKE 'harbour%'").fetchone()[0]
        toy_run = importlib.import_module(f"{PACKAGE}.run")
        state = TaskState(on_partial=lambda _: state.cancel())
        stopped = toy_run.run_lengths(project, "counter", [harbour], per_book=3, state=state)
        assert stopped.status == "cancelled" and stopped.done == 1
        found = runs.runs(project, KIND)
        assert [r.id for r in found] == [1, stopped.run_id]
        assert found[1].config == importlib.import_module(f"{PACKAGE}.kinds").LengthsConfig((harbour,), 3)
        assert runs.kind_name(KIND) == KIND_WORDS and runs.can_resume(KIND)

    # ... is listed, and 'palimpsest continue' finishes it with the probe's own resumer
    capsys.readouterr()
    assert main(["runs", str(path), "--format", "csv"]) == 0
    listed = _csv(capsys)
    assert listed["kind"].tolist() == [KIND, KIND] and listed["what"].tolist() == [KIND_WORDS, KIND_WORDS]
    assert listed["status"].tolist() == ["done", "cancelled"]
    assert main(["continue", str(path), str(stopped.run_id), "--yes"]) == 0
    assert "3 of 3 answered" in capsys.readouterr().out
    with Project.open(path) as project:
        assert runs.get_run(project, stopped.run_id).status == "done"
        assert runs.run_counts(project, stopped.run_id) == {"ok": 3, "failed": 0}

    # its table and chart, with the books' keys
    out = tmp_path / "out"
    out.mkdir()
    assert main(["table", str(path), "toy-lengths-books", "--out", str(out / "books.csv"),
                 "--option", "model=counter"]) == 0
    table = pd.read_csv(out / "books.csv")
    assert {"book_id", "book_source", "book_external_id", "book"} <= set(table.columns)
    # the newest run's answer per passage: harbour's first three passages (3, 10, 12 words), lantern's four
    by_book = dict(zip(table["book"].str.lower(), zip(table["passages"], table["long"])))
    assert by_book == {"harbour": (4, 2), "lantern": (4, 1)}
    assert main(["chart", str(path), "toy-lengths-long", "--out", str(out / "long.png"),
                 "--option", "model=counter"]) == 0
    assert (out / "long.png").stat().st_size > 0 and "book_source" in pd.read_csv(out / "long.csv").columns

    # the methods text has its section and statistics
    capsys.readouterr()
    assert main(["methods", str(path)]) == 0
    text = capsys.readouterr().out
    assert "### Passage lengths" in text and "counted the words of the first paragraphs" in text
    assert KIND_WORDS.lower() in text.lower() and "share of long passages" in text

    # the exposure report shows its evidence beside the other probes'
    with Project.open(path) as project:
        report = exposure_table(project, "counter")
    assert "toylen" in [s["key"] for s in report.attrs["sources"]]
    signals = dict(zip(report["book"].str.lower(), report["toylen_signal"]))
    assert signals == {"harbour": "some", "lantern": "none"}

    # the window lists its page, and the Jobs page names its runs in the probe's words
    window = MainWindow(settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    titles = [window.nav.item(i).text() for i in range(window.nav.count())]
    assert titles[-1] == "Passage lengths"  # the last part's page comes last
    assert type(window.pages[KIND]).__module__ == f"{PACKAGE}.page"
    assert window.open_project(path)
    jobs_page = window.show_page("jobs")
    jobs_page.refresh()
    table_widget = jobs_page.runs_table
    column = [table_widget.horizontalHeaderItem(c).text() for c in range(table_widget.columnCount())].index("Kind")
    kinds_shown = {table_widget.item(r, column).text() for r in range(table_widget.rowCount())}
    assert kinds_shown == {KIND_WORDS}
    window.close_project()

    # and not one file of the core or the window changed for it
    assert _sources() == before


def test_the_toy_probe_leaves_no_trace(tmp_path):
    """Run after the toy probe (and on its own): the parts, the registries and the modules are today's."""
    from workbench.export import evidence, methods
    from workbench.export import registry as exports
    from workbench.project import Project, schema
    from workbench.runs import kinds

    assert PACKAGE not in parts.PARTS and PACKAGE not in sys.modules
    assert not [n for n in exports.tables() if n.startswith("toy-")]
    assert not [n for n in exports.charts() if n.startswith("toy-")]
    assert kinds.run_kind(KIND) is None
    assert "toy-lengths" not in [s.key for s in methods.sections()]
    assert "toylen" not in [s.key for s in evidence.evidence_sources()]
    assert "toy-lengths" not in [s.name for s in schema.migration_sets()]
    with Project.create(tmp_path / "plain.palimpsest") as project:
        assert "toy_length_passages" not in project.db.table_names()
