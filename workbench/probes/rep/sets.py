"""REP and EEP sets stored in the project, versioned and hashed, so every run names its exact set.

The shipped files in ``resources/rep/`` are copied into a project the first time it needs them.
Saving an edited text (or importing a file) adds a new version when the text changed; the newest
version of each set is the one new runs use. Old versions stay, because runs refer to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from workbench.errors import UserError
from workbench.probes.rep.setfile import EepSet, Prompt, RepSet, SetFileError, normalise_newlines, parse_set
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

RESOURCES = Path(__file__).resolve().parents[3] / "resources" / "rep"
EEP_DEFAULT = "eep"


@dataclass(frozen=True)
class StoredSet:
    id: int
    version: int
    origin: str
    created_at: str
    parsed: RepSet | EepSet
    prompt_ids: dict[str, int]  # prompt key -> rep_prompts.id (the item_id of runs)

    @property
    def name(self) -> str:
        return self.parsed.name

    @property
    def kind(self) -> str:
        return self.parsed.kind

    @property
    def hash(self) -> str:
        return self.parsed.hash

    def prompt_by_id(self) -> dict[int, Prompt]:
        by_key = {p.key: p for p in self.parsed.prompts}
        return {pid: by_key[key] for key, pid in self.prompt_ids.items()}


@lru_cache(maxsize=1)
def shipped_sets() -> tuple[RepSet | EepSet, ...]:
    """The sets that ship in ``resources/rep/`` (read once per process)."""
    return tuple(parse_set(path.read_text(encoding="utf-8"), path.name) for path in sorted(RESOURCES.glob("*.toml")))


def install_shipped(project: "Project") -> list[str]:
    """Store each shipped set the project does not have yet. Returns the names added (none to a read-only
    project, which is shown as it is)."""
    if project.read_only:
        return []
    have = {row[0] for row in project.db.execute("SELECT DISTINCT name FROM rep_sets").fetchall()}
    added = []
    for parsed in shipped_sets():
        if parsed.name not in have:
            _store(project, parsed, origin="shipped")
            added.append(parsed.name)
    return added


def save_set(project: "Project", body: str, *, origin: str = "user", source: str = "the set text") -> StoredSet:
    """Check ``body`` and store it as the newest version of its set (unchanged text: nothing new)."""
    parsed = parse_set(body, source)
    latest = _latest_row(project, parsed.name)
    if latest is not None:
        kind = latest[1]
        if kind != parsed.kind:
            raise UserError(
                f"'{parsed.name}' is already the name of {'a REP' if kind == 'rep' else 'an EEP'} set; "
                "give the new set another name."
            )
        if latest[2] == parsed.hash:
            return get_set(project, parsed.name)
    return _store(project, parsed, origin=origin)


def import_set_file(project: "Project", path: str | Path) -> StoredSet:
    path = Path(path)
    try:
        body = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"There is no file at {path}.") from None
    except UnicodeDecodeError:
        raise UserError(f"{path.name} is not a UTF-8 text file. Save it as UTF-8 text and import it again.") from None
    return save_set(project, body, origin="imported", source=path.name)


def export_set_file(project: "Project", name: str, path: str | Path, *, version: int | None = None) -> Path:
    stored = get_set(project, name, version=version)
    path = Path(path)
    path.write_text(stored.parsed.body, encoding="utf-8")
    return path


def reset_to_shipped(project: "Project", name: str) -> StoredSet:
    """Make the shipped text of ``name`` the newest version again."""
    for parsed in shipped_sets():
        if parsed.name == name:
            return save_set(project, parsed.body, origin="shipped", source=f"{name}.toml")
    raise UserError(f"No set called '{name}' ships with Palimpsest.")


def _latest_row(project: "Project", name: str):
    return project.db.execute(
        "SELECT id, kind, hash FROM rep_sets WHERE name = ? ORDER BY version DESC LIMIT 1", [name]
    ).fetchone()


def _store(project: "Project", parsed: RepSet | EepSet, *, origin: str) -> StoredSet:
    db = project.db
    with db.transaction():
        version = db.execute("SELECT COALESCE(MAX(version), 0) + 1 FROM rep_sets WHERE name = ?", [parsed.name]).fetchone()[0]
        set_id = db.execute(
            "INSERT INTO rep_sets (kind, name, version, hash, body, origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [parsed.kind, parsed.name, version, parsed.hash, normalise_newlines(parsed.body), origin, now()],
        ).lastrowid
        for position, prompt in enumerate(parsed.prompts):
            db.execute(
                "INSERT INTO rep_prompts (set_id, key, position, name, stem, subject) VALUES (?, ?, ?, ?, ?, ?)",
                [set_id, prompt.key, position, prompt.name, prompt.stem, prompt.subject],
            )
    return load_set(project, set_id)


def load_set(project: "Project", set_id: int) -> StoredSet:
    row = project.db.execute(
        "SELECT id, name, version, origin, created_at, body FROM rep_sets WHERE id = ?", [set_id]
    ).fetchone()
    if row is None:
        raise UserError(f"There is no REP set number {set_id} in this project.")
    set_id, name, version, origin, created_at, body = row
    try:
        parsed = parse_set(body, f"version {version} of the set '{name}'")
    except SetFileError as exc:  # only if a stored text predates a stricter check
        raise UserError(f"{exc} Save a corrected version of the set.") from None
    ids = dict(project.db.execute("SELECT key, id FROM rep_prompts WHERE set_id = ?", [set_id]).fetchall())
    return StoredSet(id=set_id, version=version, origin=origin, created_at=created_at, parsed=parsed, prompt_ids=ids)


def get_set(project: "Project", name: str, *, version: int | None = None) -> StoredSet:
    install_shipped(project)
    sql, params = "SELECT id FROM rep_sets WHERE name = ?", [name]
    if version is not None:
        sql += " AND version = ?"
        params.append(version)
    row = project.db.execute(sql + " ORDER BY version DESC LIMIT 1", params).fetchone()
    if row is None:
        known = ", ".join(set_names(project)) or "none"
        what = f"version {version} of the set '{name}'" if version is not None else f"a set called '{name}'"
        raise UserError(f"This project has no {what}. Sets: {known}.")
    return load_set(project, row[0])


def set_names(project: "Project", kind: str | None = None) -> list[str]:
    sql = "SELECT name, MIN(id) FROM rep_sets"
    params: list = []
    if kind is not None:
        sql += " WHERE kind = ?"
        params.append(kind)
    rows = project.db.execute(sql + " GROUP BY name ORDER BY MIN(id)", params).fetchall()
    return [r[0] for r in rows]


def current_sets(project: "Project", kind: str = "rep") -> list[StoredSet]:
    """The newest version of every set of ``kind``, in the order they were added."""
    install_shipped(project)
    return [get_set(project, name) for name in set_names(project, kind)]


def versions_frame(project: "Project", name: str) -> pd.DataFrame:
    return pd.read_sql_query(
        "SELECT version, origin, created_at, hash FROM rep_sets WHERE name = ? ORDER BY version",
        project.db.conn, params=[name],
    )


def sets_frame(project: "Project") -> pd.DataFrame:
    """One row per role of the current REP sets: demographic, role, stem, categories."""
    rows = []
    for stored in current_sets(project, "rep"):
        parsed = stored.parsed
        for role in parsed.roles:
            rows.append({
                "demographic": parsed.name,
                "version": stored.version,
                "role": role.key,
                "stem": role.stem,
                "subject": role.subject or "",
                "categories": "; ".join(parsed.categories),
            })
    return pd.DataFrame(rows, columns=["demographic", "version", "role", "stem", "subject", "categories"])
