"""Each part owns its tables: the platform's migrations make only what several parts use, every part applies its
own named migrations, a file records which ran by set and name, and a project of the released format (the one
list of nine migrations) still opens, upgraded whole.

The released project is ``tests/fixtures/released/format-9.sqlite.gz``, made by that release's own code
(``tests/fixtures/released/make_released.py`` says how), with rows in every table.
"""

from __future__ import annotations

import gzip
import importlib
import shutil
import sqlite3
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import sqlite_utils

from workbench import parts
from workbench.errors import ProjectError, UserError
from workbench.project import Project, schema

RELEASED = Path(__file__).resolve().parent.parent / "fixtures" / "released" / "format-9.sqlite.gz"
RETIRED = ["0003_name_cloze", "0004_annotation", "0005_rep", "0006_reading", "0007_leakage", "0008_validity",
           "0009_cloze_passages_by_origin"]
#: what the released format recorded: the one list's nine migrations
RELEASED_RECORDS = [("palimpsest", name) for name in ["0001_library", "0002_models_and_runs", *RETIRED]]
PLATFORM_TABLES = {"books", "book_texts", "book_tags", "book_sets", "book_set_members", "settings", "models",
                   "model_tags", "prompt_templates", "runs", "responses", "response_cache", "prices"}
#: each part's own tables (the 15 probe tables and annotation's 6 once made by the shared list)
PART_TABLES = {
    "name-cloze": {"cloze_passages", "cloze_extractions"},
    "annotation": {"annotation_tasks", "annotation_items", "annotators", "annotation_assignments", "annotations",
                   "annotation_adjudications"},
    "rep": {"rep_sets", "rep_prompts", "rep_entity_extractions", "rep_book_entities"},
    "reading": {"reading_scene_sets", "reading_scenes", "reading_substitutions", "reading_names",
                "reading_question_sets", "reading_questions"},
    "leakage": {"reference_corpora", "leakage_passages"},
    "downstream-validity": {"validity_passages"},
    "continuation": {"continuation_passages"},
}
#: parts' tables made after the released format: an upgraded file gets them, empty
NEWER_TABLES = {"continuation_passages"}


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not r[0].startswith("sqlite_") and r[0] != "_sqlite_migrations"}


def _rows(path: Path) -> dict[str, list[tuple]]:
    """Every row of every table (the migration records aside), in rowid order."""
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f"SELECT * FROM [{t}] ORDER BY rowid").fetchall() for t in sorted(_tables(conn))}
    finally:
        conn.close()


def _structure(path: Path) -> dict[str, tuple]:
    """Each table's columns, foreign keys and indexes (with their columns), as SQLite reports them."""
    conn = sqlite3.connect(path)
    try:
        found = {}
        for table in sorted(_tables(conn)):
            indexes = sorted(
                (name, unique, origin, tuple(conn.execute(f"PRAGMA index_xinfo([{name}])").fetchall()))
                for _, name, unique, origin, _partial in conn.execute(f"PRAGMA index_list([{table}])"))
            found[table] = (tuple(conn.execute(f"PRAGMA table_xinfo([{table}])").fetchall()),
                            tuple(conn.execute(f"PRAGMA foreign_key_list([{table}])").fetchall()),
                            tuple((n if not n.startswith("sqlite_autoindex") else "auto", *rest)
                                  for n, *rest in indexes))
        return found
    finally:
        conn.close()


def _records(path: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT migration_set, name FROM _sqlite_migrations ORDER BY rowid").fetchall()
    finally:
        conn.close()


def _every_migration() -> list[tuple[str, str]]:
    return [(s.name, name) for s in schema.migration_sets() for name in s.names]


@pytest.fixture
def released(tmp_path) -> Path:
    """A copy of the released project, ready to open."""
    path = tmp_path / "released" / "study.palimpsest"
    path.parent.mkdir()
    with gzip.open(RELEASED, "rb") as source, open(path, "wb") as target:
        shutil.copyfileobj(source, target)
    return path


def test_the_platform_makes_no_part_table_and_each_part_makes_its_own(tmp_path):
    db = sqlite_utils.Database(sqlite3.connect(tmp_path / "bare.db"))
    schema.MIGRATIONS.apply(db)
    assert _tables(db.conn) == PLATFORM_TABLES
    made = {}
    for migration_set in schema.migration_sets()[1:]:
        before = _tables(db.conn)
        migration_set.apply(db)
        made[migration_set.name] = _tables(db.conn) - before
    assert made == PART_TABLES
    # and the parts are named by their declarations, the platform's set first
    assert [s.name for s in schema.migration_sets()] == ["palimpsest", *[
        p.name for p in parts.parts() if p.migrations]]


def test_a_new_project_has_every_parts_tables_and_records_each_migration_by_set_and_name(tmp_path):
    path = tmp_path / "new.palimpsest"
    Project.create(path).close()
    conn = sqlite3.connect(path)
    assert _tables(conn) == PLATFORM_TABLES.union(*PART_TABLES.values())
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.FORMAT
    conn.close()
    # what ran, by name (none of the retired migrations of the one list: nothing ran them here)
    assert _records(path) == _every_migration()
    assert ("name-cloze", "0002_passages_by_origin") in _records(path)


def test_a_project_of_the_released_format_opens_backed_up_and_upgraded_whole(released):
    before = _rows(released)
    assert all(before.values()), [t for t, rows in before.items() if not rows]  # the fixture fills every table
    assert _records(released) == RELEASED_RECORDS

    with Project.open(released) as project:
        backup = project.migration_backup
        assert project.db.execute("PRAGMA user_version").fetchone()[0] == schema.FORMAT
    # the backup is the file as it was; every table and row is still there, nothing made twice
    assert _rows(backup) == before and _records(backup) == RELEASED_RECORDS
    assert _rows(released) == {**before, **{t: [] for t in NEWER_TABLES}}
    # the old records stay, and each part's migrations are recorded as applied (their tables were there)
    records = _records(released)
    assert records[:9] == RELEASED_RECORDS
    assert sorted(records[9:]) == sorted(m for m in _every_migration() if m[0] != "palimpsest")
    # the same tables, columns, keys and indexes as a project made now
    fresh = released.parent.parent / "fresh.palimpsest"
    Project.create(fresh).close()
    assert _structure(released) == _structure(fresh)
    # opened again: nothing left to do
    with Project.open(released) as project:
        assert not hasattr(project, "migration_backup")


def test_an_upgraded_project_reads_as_one_made_now_with_the_same_rows(released, tmp_path):
    """Every registered table and chart frame is the same on the upgraded file as on a project made by this
    version into which the same rows were copied."""
    from tests.fixtures.every_probe import OPTIONS
    from workbench.export.registry import charts, tables

    Project.open(released).close()
    fresh = tmp_path / "fresh" / "study.palimpsest"
    fresh.parent.mkdir()
    Project.create(fresh).close()
    conn = sqlite3.connect(fresh)
    conn.execute("ATTACH DATABASE ? AS old", [str(released)])
    for table in sorted(_tables(conn)):
        columns = ", ".join(f"[{r[1]}]" for r in conn.execute(f"PRAGMA main.table_info([{table}])"))
        conn.execute(f"INSERT OR REPLACE INTO main.[{table}] ({columns}) SELECT {columns} FROM old.[{table}]")
    conn.commit()
    conn.close()
    assert _rows(fresh) == _rows(released)

    def frame(project: Project, spec, name: str) -> pd.DataFrame:
        try:
            return spec.frame(project, **OPTIONS.get(name, {}))
        except UserError as refused:  # a frame for a model the released file lacks: refused alike on both
            return pd.DataFrame({"refused": [str(refused)]})

    def frames(path: Path) -> dict[str, pd.DataFrame]:
        with Project.open(path) as project:
            return {name: frame(project, spec, name) for name, spec in [*tables().items(), *charts().items()]}

    upgraded = frames(released)
    # the made-now project in the upgraded one's place: a reference corpus's index is found beside the project
    released.parent.rename(tmp_path / "put-aside")
    fresh.parent.rename(released.parent)
    made_now = frames(released)
    assert upgraded.keys() == made_now.keys()
    for name, frame in upgraded.items():
        pd.testing.assert_frame_equal(frame, made_now[name], obj=name)
    compared = sum(not frame.empty for frame in upgraded.values())
    # a frame per part at least has rows to compare
    assert compared >= 30, compared


def test_a_project_from_before_the_cloze_index_is_upgraded_by_name(released):
    """A file of the release before ``0009`` (no index yet): the cloze part's first migration is recorded as done,
    its second runs."""
    conn = sqlite3.connect(released)
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = '0009_cloze_passages_by_origin'")
    conn.execute("DROP INDEX cloze_passages_book_origin")
    conn.execute("PRAGMA user_version = 8")
    conn.commit()
    conn.close()
    with Project.open(released) as project:
        assert project.migration_backup.exists()
        indexes = {r[1] for r in project.db.execute("PRAGMA index_list(cloze_passages)")}
    assert "cloze_passages_book_origin" in indexes
    records = _records(released)
    assert ("name-cloze", "0001_passages_and_extractions") in records
    assert ("name-cloze", "0002_passages_by_origin") in records
    assert ("palimpsest", "0009_cloze_passages_by_origin") not in records


@pytest.mark.parametrize("record", [("name-cloze", "0099_later"), ("palimpsest", "0010_later"),
                                    ("a-part-this-version-lacks", "0001_tables")])
def test_a_file_with_a_migration_this_version_does_not_know_is_refused_untouched(tmp_path, record):
    path = tmp_path / "newer.palimpsest"
    Project.create(path).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES (?, ?, 'x')", record)
    conn.commit()
    conn.close()
    written = path.read_bytes()
    with pytest.raises(ProjectError, match="newer version of Palimpsest") as refused:
        Project.open(path)
    assert "/".join(record) in str(refused.value) and "Update Palimpsest" in str(refused.value)
    assert path.read_bytes() == written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["newer.palimpsest"]  # no backup: nothing was done


def test_a_file_of_a_later_format_is_refused(tmp_path):
    path = tmp_path / "later.palimpsest"
    Project.create(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {schema.FORMAT + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(ProjectError, match=f"project format {schema.FORMAT + 1}"):
        Project.open(path)


def test_the_released_format_can_no_longer_be_read_by_that_release_once_upgraded(released):
    """That release refused a file whose user_version is above its own count of migrations (9): an upgraded
    file must be above it, or that release would run its migrations into tables that exist."""
    Project.open(released).close()
    conn = sqlite3.connect(released)
    assert conn.execute("PRAGMA user_version").fetchone()[0] > len(RETIRED) + 2
    conn.close()


def _write_toy_probe(folder: Path, name: str, migrations: str) -> None:
    package = folder / name
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text(textwrap.dedent(f"""\
        from workbench.parts import Part

        PART = Part("{name}", migrations="{name}.migrations")
        """))
    (package / "migrations.py").write_text(textwrap.dedent(f"""\
        from workbench.project.schema import MigrationSet

        MIGRATIONS = MigrationSet("{name}")


        @MIGRATIONS(name="0001_notes")
        def notes(db):
            db.execute("CREATE TABLE toy_notes (id INTEGER PRIMARY KEY, book_id INTEGER REFERENCES books(id), "
                       "note TEXT NOT NULL)")
        """) + textwrap.dedent(migrations))


def _forget(name: str) -> None:
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]
    importlib.invalidate_caches()


def test_a_new_probe_brings_its_own_table_and_touches_only_the_parts_list(tmp_path, monkeypatch):
    shared = {p: p.read_bytes() for p in Path(schema.__file__).parent.glob("*.py")}
    older = tmp_path / "older.palimpsest"
    Project.create(older).close()

    code = tmp_path / "code"
    code.mkdir()
    _write_toy_probe(code, "toyprobe", "")
    monkeypatch.syspath_prepend(str(code))
    monkeypatch.setattr(parts, "PARTS", [*parts.PARTS, "toyprobe"])
    try:
        # a project made now has the probe's table; one made before gets it, after a backup
        with Project.create(tmp_path / "new.palimpsest") as project:
            project.db["toy_notes"].insert({"book_id": None, "note": "kept"})
        with Project.open(older) as project:
            assert project.migration_backup.exists()
            assert "toy_notes" in project.db.table_names()
        assert _records(older)[-1] == ("toyprobe", "0001_notes")

        # the probe's next migration, appended to its own module, runs on the next open
        _write_toy_probe(code, "toyprobe", """

            @MIGRATIONS(name="0002_note_kind")
            def note_kind(db):
                db.execute("ALTER TABLE toy_notes ADD COLUMN kind TEXT NOT NULL DEFAULT 'plain'")
            """)
        _forget("toyprobe")
        with Project.open(tmp_path / "new.palimpsest") as project:
            assert project.db.execute("SELECT note, kind FROM toy_notes").fetchall() == [("kept", "plain")]
        assert _records(tmp_path / "new.palimpsest")[-2:] == [("toyprobe", "0001_notes"),
                                                                ("toyprobe", "0002_note_kind")]
    finally:
        _forget("toyprobe")
    # no shared schema file changed for it
    assert {p: p.read_bytes() for p in Path(schema.__file__).parent.glob("*.py")} == shared

    # without the probe, its project is one this version cannot read
    monkeypatch.setattr(parts, "PARTS", [p for p in parts.PARTS if p != "toyprobe"])
    with pytest.raises(ProjectError, match="toyprobe/0001_notes"):
        Project.open(tmp_path / "new.palimpsest")
