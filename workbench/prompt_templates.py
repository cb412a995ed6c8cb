"""Prompt templates: shipped as data files, stored in the project, versioned and hashed.

**Files.** Shipped templates are text files in ``resources/prompts/``. A file may start with a small
header between two ``---`` lines::

    ---
    name: name-cloze
    kind: cloze
    description: one line shown in lists
    ---
    Here is an excerpt ... {passage} ...

``name`` defaults to the file name without ``.txt``; ``kind`` (what the template is for: ``cloze``,
``rep-judge``, ``summary`` ...) to ``general``. The body is everything after the header, exactly.

**In the project.** Templates live in ``prompt_templates``. Files with a header are copied into a
project the first time templates are listed or fetched (``install_shipped``). Saving a template whose
text differs from its latest version adds a new version (the old one stays, so old runs still point
at the exact text they used; ``runs.template_id``). ``hash`` is the SHA-256 of the body.

**Placeholders** are ``{word}``; ``render(passage=...)`` fills them. Other braces are left alone. Each
kind may declare which placeholders it needs (``register_kind``); a ``cloze`` template must contain
``{passage}``.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import pandas as pd

from workbench.errors import UserError
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

PROMPTS_DIR = Path(__file__).resolve().parents[1] / "resources" / "prompts"
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
HEADER_FENCE = "---"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,79}$")


@dataclass(frozen=True)
class KindRules:
    required: frozenset[str]
    #: the only placeholders allowed; None means any
    allowed: frozenset[str] | None = None
    description: str = ""


_KINDS: dict[str, KindRules] = {}


def register_kind(kind: str, required: Iterable[str] = (), allowed: Iterable[str] | None = None, description: str = "") -> None:
    """Declare the placeholders a kind of template needs (and, optionally, the only ones it may use)."""
    _KINDS[kind] = KindRules(frozenset(required), None if allowed is None else frozenset(allowed), description)


register_kind("cloze", required=["passage"], allowed=["passage"], description="name-cloze probe prompts")


def template_hash(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def placeholders(body: str) -> list[str]:
    """The placeholder names in ``body``, in order of first appearance."""
    return list(dict.fromkeys(PLACEHOLDER.findall(body)))


def validate(kind: str, body: str, name: str = "") -> None:
    """Raise ``UserError`` with a plain message if ``body`` cannot serve as a template of ``kind``."""
    label = f"The template '{name}'" if name else "The template"
    if not body.strip():
        raise UserError(f"{label} is empty. Write the prompt text first.")
    rules = _KINDS.get(kind)
    if rules is None:
        return
    found = set(placeholders(body))
    missing = sorted(rules.required - found)
    if missing:
        marks = ", ".join("{" + m + "}" for m in missing)
        raise UserError(f"{label} must contain {marks}: that is where the text goes in a {kind} prompt.")
    if rules.allowed is not None:
        unknown = sorted(found - rules.allowed)
        if unknown:
            marks = ", ".join("{" + u + "}" for u in unknown)
            allowed = ", ".join("{" + a + "}" for a in sorted(rules.allowed))
            raise UserError(f"{label} uses {marks}, which a {kind} prompt cannot fill. It may use: {allowed}.")


@dataclass(frozen=True)
class Template:
    id: int
    name: str
    version: int
    kind: str
    body: str
    hash: str
    origin: str
    created_at: str

    @property
    def placeholders(self) -> list[str]:
        return placeholders(self.body)

    @property
    def label(self) -> str:
        return f"{self.name} v{self.version}"

    def render(self, **values: str) -> str:
        """The body with every placeholder filled; ``UserError`` if one has no value."""
        missing = [p for p in self.placeholders if p not in values]
        if missing:
            raise UserError(f"The template '{self.label}' needs a value for {{{missing[0]}}}.")
        return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), self.body)


# ---------------------------------------------------------------------------- shipped files


@dataclass(frozen=True)
class TemplateFile:
    name: str
    kind: str
    description: str
    body: str
    path: Path


def parse_template_file(path: Path, default_kind: str = "general") -> TemplateFile:
    """Read a template file (header optional, see the module notes)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"The prompt template {path} could not be read ({exc}).") from exc
    meta: dict[str, str] = {}
    body = text
    lines = text.split("\n")
    if lines and lines[0].strip() == HEADER_FENCE:
        for number, line in enumerate(lines[1:], start=2):
            if line.strip() == HEADER_FENCE:
                body = "\n".join(lines[number:])
                break
            key, sep, value = line.partition(":")
            if not sep or not key.strip():
                raise UserError(f"{Path(path).name}, line {number}: write header lines as 'key: value'.")
            meta[key.strip().lower()] = value.strip()
        else:
            raise UserError(f"{Path(path).name}: the header starting with '---' has no closing '---' line.")
    return TemplateFile(
        name=meta.get("name") or Path(path).stem,
        kind=meta.get("kind") or default_kind,
        description=meta.get("description", ""),
        body=body,
        path=Path(path),
    )


def shipped_files(directory: Path = PROMPTS_DIR) -> list[TemplateFile]:
    """Template files with a header in ``directory`` (headerless files are loaded by their own probe)."""
    files = []
    for path in sorted(directory.glob("*.txt")):
        stat = path.stat()
        parsed = _shipped_file(path, stat.st_mtime_ns, stat.st_size)
        if parsed is not None:
            files.append(parsed)
    return files


@functools.lru_cache(maxsize=256)
def _shipped_file(path: Path, _mtime_ns: int, _size: int) -> TemplateFile | None:
    """One shipped file parsed (None without a header), read again only when it changes: every template
    lookup makes sure the shipped ones are in the project, and the window looks one up for each preview."""
    with open(path, encoding="utf-8") as fh:
        if fh.readline().strip() != HEADER_FENCE:
            return None
    return parse_template_file(path)


def install_shipped(project: "Project", directory: Path = PROMPTS_DIR) -> list[Template]:
    """Make sure every shipped template is in the project (a new version if its text changed). A read-only
    project is shown as it is: nothing is added to it."""
    if project.read_only:
        return []
    installed = []
    for file in shipped_files(directory):
        validate(file.kind, file.body, file.name)
        installed.append(_store(project, file.name, file.body, file.kind, "shipped"))
    return installed


def load_shipped(project: "Project", name: str, *, kind: str = "general", directory: Path = PROMPTS_DIR) -> Template:
    """The shipped file ``NAME.txt`` (header optional), recorded in the project; its kind from the header
    or ``kind``."""
    path = directory / f"{name}.txt"
    if not path.exists():
        raise UserError(f"There is no shipped prompt template called '{name}' (looked for {path}).")
    file = parse_template_file(path, default_kind=kind)
    validate(file.kind, file.body, file.name)
    return _store(project, file.name, file.body, file.kind, "shipped")


# ---------------------------------------------------------------------------- stored templates

_COLUMNS = "id, name, version, kind, body, hash, origin, created_at"


def _template(row) -> Template:
    return Template(*row)


def _store(project: "Project", name: str, body: str, kind: str, origin: str) -> Template:
    """The stored version with exactly this text if it is the latest, else a new version."""
    db = project.db
    digest = template_hash(body)
    latest = db.execute(
        f"SELECT {_COLUMNS} FROM prompt_templates WHERE name = ? ORDER BY version DESC LIMIT 1", [name]
    ).fetchone()
    if latest is not None and latest[5] == digest:
        return _template(latest)
    if latest is not None and origin == "shipped":
        # A shipped text the project already has in some version (perhaps edited since): keep the user's.
        same = db.execute(f"SELECT {_COLUMNS} FROM prompt_templates WHERE name = ? AND hash = ?", [name, digest]).fetchone()
        if same is not None:
            return _template(same)
    if latest is not None and latest[3] != kind:
        raise UserError(
            f"A template called '{name}' already exists for another purpose ({latest[3]}). Choose another name."
        )
    with db.transaction():
        version = (latest[2] if latest else 0) + 1
        cur = db.execute(
            "INSERT INTO prompt_templates (name, version, kind, body, hash, origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [name, version, kind, body, digest, origin, now()],
        )
    return template_by_id(project, cur.lastrowid)


def save_template(project: "Project", name: str, body: str, kind: str) -> Template:
    """Add a template, or a new version of one (editing never overwrites: old runs keep their text).

    Returns the stored template; saving the same text as the latest version changes nothing.
    """
    name = name.strip()
    if not NAME_PATTERN.match(name):
        raise UserError(
            f"'{name}' cannot be a template name: use letters, digits, spaces, dots, dashes or underscores "
            "(at most 80), starting with a letter or digit."
        )
    validate(kind, body, name)
    install_shipped(project)
    return _store(project, name, body, kind, "user")


def template_by_id(project: "Project", template_id: int) -> Template:
    row = project.db.execute(f"SELECT {_COLUMNS} FROM prompt_templates WHERE id = ?", [template_id]).fetchone()
    if row is None:
        raise UserError(f"There is no prompt template number {template_id} in this project.")
    return _template(row)


def get_template(project: "Project", name: str, version: int | None = None, *, kind: str | None = None) -> Template:
    """A template by name: its latest version, or ``version``. ``kind`` checks what it is for."""
    install_shipped(project)
    sql = f"SELECT {_COLUMNS} FROM prompt_templates WHERE name = ?"
    params: list = [name]
    if version is not None:
        sql += " AND version = ?"
        params.append(version)
    row = project.db.execute(sql + " ORDER BY version DESC LIMIT 1", params).fetchone()
    if row is None:
        known = ", ".join(templates_frame(project, kind=kind)["name"]) or "none"
        which = f"version {version} of " if version is not None else ""
        raise UserError(f"There is no {which}prompt template called '{name}'. Templates: {known}.")
    template = _template(row)
    if kind is not None and template.kind != kind:
        raise UserError(f"The template '{name}' is a {template.kind} template, not a {kind} template.")
    return template


def templates_frame(project: "Project", kind: str | None = None, *, all_versions: bool = False) -> pd.DataFrame:
    """Templates in the project: name, version, kind, origin, hash, created_at, id (latest versions unless
    ``all_versions``)."""
    install_shipped(project)
    sql = f"SELECT {_COLUMNS} FROM prompt_templates t WHERE 1 = 1"
    params: list = []
    if kind is not None:
        sql += " AND kind = ?"
        params.append(kind)
    if not all_versions:
        sql += " AND version = (SELECT MAX(version) FROM prompt_templates u WHERE u.name = t.name)"
    frame = pd.read_sql_query(sql + " ORDER BY name, version", project.db.conn, params=params)
    frame["versions"] = [
        project.db.execute("SELECT COUNT(*) FROM prompt_templates WHERE name = ?", [n]).fetchone()[0] for n in frame["name"]
    ]
    return frame[["name", "version", "versions", "kind", "origin", "hash", "created_at", "id", "body"]]
