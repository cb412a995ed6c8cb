"""The project's reference corpora: local n-gram indexes beside the project, and remote indexes.

A corpus is a row of ``reference_corpora`` (name, kind, where it is, tokenizer, size, files). A local
index lives in the folder ``<project name>.indexes/<corpus name>/`` next to the project file (the row
keeps the path relative to the project's folder, so project and indexes can move together); a remote
one is an infini-gram API address and the name of an index there.

``open_index`` gives an object answering ``encode``, ``suffix_lengths``, ``count`` and ``counts`` the
same way for both kinds (``local_index``, ``remote_index``).

A remote address never holds a user name, password or key: it is refused as a model's server address is
(the project would keep it, and lists, exports and messages would show it). One recorded before that
rule is shown without them and not used.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence, Union

import pandas as pd

from workbench.errors import UserError
from workbench.models.secrets import is_web_address, shown_address
from workbench.probes.leakage.index_build import DamagedIndex, IndexInfo, build_index
from workbench.probes.leakage.tokenizing import WORD, WordTokenizer, model_tokenizer, spec_from_choice
from workbench.progress import TaskState
from workbench.project import now
from workbench.runs import run_ids, update_configs

if TYPE_CHECKING:
    from workbench.probes.leakage.local_index import LocalIndex
    from workbench.probes.leakage.remote_index import RemoteIndex
    from workbench.project import Project

    NgramIndex = Union[LocalIndex, RemoteIndex]

LOCAL, REMOTE = "local", "remote"
PUBLIC_API = "https://api.infini-gram.io/"
COLUMNS = ["name", "kind", "tokenizer", "documents", "tokens", "words", "size_bytes", "where", "created_at"]
MAX_NAME = 100  # characters of a corpus name
MAX_FOLDER_NAME = 60  # characters of the folder made from it


@dataclass
class Corpus:
    id: int
    name: str
    kind: str
    tokenizer: str
    path: str | None
    url: str | None
    remote_index: str | None
    documents: int | None
    tokens: int | None
    words: int | None
    size_bytes: int | None
    files: list[dict]
    engine: str
    created_at: str

    def folder(self, project: "Project") -> Path:
        path = Path(self.path or "")
        return path if path.is_absolute() else project.path.parent / path

    def where(self, project: "Project") -> str:
        return str(self.folder(project)) if self.kind == LOCAL else f"{self.address} ({self.remote_index})"

    @property
    def address(self) -> str:
        """The remote address as it may be shown (without a user name, password or key)."""
        return shown_address(self.url or "")


def indexes_folder(project: "Project") -> Path:
    return project.path.parent / f"{project.path.stem}.indexes"


def _folder_name(name: str) -> str:
    safe = re.sub(r"[^\w.-]+", "-", name.strip()).strip("-.")
    return safe[:MAX_FOLDER_NAME].strip("-.") or "corpus"


def _check_new_name(project: "Project", name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise UserError("Give the corpus a name (for example 'litbank' or 'pile').")
    if len(name) > MAX_NAME:
        raise UserError(f"A corpus name can be at most {MAX_NAME} characters long (this one has {len(name):,}). "
                        "Choose a shorter name.")
    if any(not c.isprintable() for c in name):
        raise UserError("A corpus name cannot hold line breaks, tabs or other control characters. Choose another name.")
    if project.db.execute("SELECT 1 FROM reference_corpora WHERE name = ?", [name]).fetchone():
        raise UserError(f"There is already a corpus called '{name}'. Choose another name, or remove the old one.")
    return name


def _relative(project: "Project", folder: Path) -> str:
    try:
        return str(folder.resolve().relative_to(project.path.parent.resolve()))
    except ValueError:
        return str(folder.resolve())


def build_corpus(project: "Project", name: str, paths: Sequence[str | Path], *, tokenizer: str | None = WORD,
                 state: TaskState | None = None, cpus: int | None = None) -> Corpus:
    """Index the files and folders ``paths`` beside the project and record the corpus."""
    name = _check_new_name(project, name)
    spec = spec_from_choice(tokenizer)
    chosen = WordTokenizer() if spec == WORD else model_tokenizer(project, spec.split(":", 1)[1])
    folder = indexes_folder(project) / _folder_name(name)
    if folder.exists():
        raise UserError(f"The folder {folder} is in the way (an index left from an earlier corpus?). Remove it "
                        "or choose another name.")
    info = build_index(paths, folder, chosen, state)
    try:
        return _record_local(project, name, folder, info)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def build_notes(project: "Project", corpus: Corpus) -> list[str]:
    """What a build left out or changed, one line each: files skipped or partly indexed, documents cut."""
    lines = []
    for f in corpus.files:
        if f.get("skipped"):
            lines.append(f"{'Partly indexed' if f.get('documents') else 'Skipped'} {f['path']}: {f['skipped']}")
    if corpus.kind == LOCAL:
        try:
            cuts = IndexInfo.read(corpus.folder(project)).cuts
        except UserError:
            cuts = 0
        if cuts:
            lines.append(f"Some documents were longer than one part of the index and were cut into parts: a match "
                         f"cannot run across the {cuts:,} place{'s' if cuts != 1 else ''} where they were cut.")
    return lines


def _record_local(project: "Project", name: str, folder: Path, info: IndexInfo) -> Corpus:
    files = [f.__dict__ for f in info.files]
    with project.db.transaction():
        project.db.execute(
            "INSERT INTO reference_corpora (name, kind, path, tokenizer, documents, tokens, words, size_bytes, files,"
            " engine, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [name, LOCAL, _relative(project, folder), info.tokenizer, info.documents, info.tokens, info.words,
             info.size_bytes, json.dumps(files), info.engine, now()],
        )
    return get_corpus(project, name)


def add_remote(project: "Project", name: str, url: str, index: str, *, check: bool = True) -> Corpus:
    """Record a remote infini-gram index; ``check`` asks the server for its size first."""
    from workbench.probes.leakage.remote_index import RemoteIndex

    name = _check_new_name(project, name)
    url, index = (url or "").strip(), (index or "").strip()
    # Never repeat an address that may hold a secret: that check comes first, whatever else is wrong with it.
    if address_holds_secrets(url):
        raise UserError("That server address holds a user name, password or key. Palimpsest never keeps those in "
                        "a project: enter the address without them. (The public infini-gram API needs none.)")
    if not is_web_address(url):
        raise UserError(f"'{shown_address(url)}' is not a web address. The public infini-gram API is {PUBLIC_API}")
    if not index:
        raise UserError("Name the index on the server (for example v4_piletrain_llama).")
    if len(index) > MAX_NAME or any(not c.isprintable() or c.isspace() for c in index):
        raise UserError("That is not the name of an index (for example v4_piletrain_llama): it is at most "
                        f"{MAX_NAME} characters, without spaces.")
    tokens = None
    if check:
        remote = RemoteIndex(url, index)
        try:
            tokens = remote.total_tokens
        finally:
            remote.close()
    with project.db.transaction():
        project.db.execute(
            "INSERT INTO reference_corpora (name, kind, url, remote_index, tokenizer, tokens, words, engine, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [name, REMOTE, url, index, "remote", tokens, tokens, "infini-gram API", now()],
        )
    return get_corpus(project, name)


_SELECT = ("SELECT id, name, kind, tokenizer, path, url, remote_index, documents, tokens, words, size_bytes, files,"
           " engine, created_at FROM reference_corpora")


def _corpus(row: tuple) -> Corpus:
    values = list(row)
    values[11] = json.loads(values[11] or "[]")
    return Corpus(*values)


def list_corpora(project: "Project") -> list[Corpus]:
    return [_corpus(r) for r in project.db.execute(_SELECT + " ORDER BY name").fetchall()]


def get_corpus(project: "Project", name: str) -> Corpus:
    row = project.db.execute(_SELECT + " WHERE name = ?", [name]).fetchone()
    if row is None:
        known = ", ".join(c.name for c in list_corpora(project)) or "none yet"
        raise UserError(f"There is no reference corpus called '{name}' in this project (corpora: {known}). "
                        "Build one with 'palimpsest corpus index' or add one with 'palimpsest corpus remote'.")
    return _corpus(row)


def corpora_frame(project: "Project") -> pd.DataFrame:
    rows = [{"name": c.name, "kind": c.kind, "tokenizer": c.tokenizer, "documents": c.documents, "tokens": c.tokens,
             "words": c.words, "size_bytes": c.size_bytes, "where": c.where(project), "created_at": c.created_at}
            for c in list_corpora(project)]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    for column in ("documents", "tokens", "words", "size_bytes"):
        frame[column] = frame[column].astype("Int64")
    return frame


def remove_corpus(project: "Project", name: str, *, delete_files: bool = False) -> None:
    corpus = get_corpus(project, name)
    with project.db.transaction():
        project.db.execute("DELETE FROM reference_corpora WHERE id = ?", [corpus.id])
        # The runs against it keep their answers but no longer name it: a corpus built later may get its number
        # (and its name), and its results must never be mixed with these.
        update_configs(project, run_ids(project, corpus_id=corpus.id),
                       {"corpus_id": None, "removed_corpus_id": corpus.id})
    if delete_files and corpus.kind == LOCAL:
        shutil.rmtree(corpus.folder(project), ignore_errors=True)


def address_holds_secrets(url: str) -> bool:
    """Whether a web address carries a user name, password or key (the rule model addresses follow)."""
    from workbench.models.catalog import _address_holds_secrets

    return _address_holds_secrets(url or "")


def rebuild_advice(project: "Project", corpus: Corpus) -> str:
    """How to build a local corpus's index again, naming the files it was built from."""
    paths = [str(f.get("path")) for f in corpus.files if isinstance(f, dict) and f.get("path")]
    shown = " ".join(f'"{p}"' for p in paths[:3]) + (f" … ({len(paths):,} files)" if len(paths) > 3 else "")
    return (f"Build it again: remove the corpus with its files (Remove in the Corpora tab, or palimpsest corpus remove "
            f'"{project.path}" "{corpus.name}" --delete-files), then index its files again (palimpsest corpus index '
            f'"{project.path}" --name "{corpus.name}" {shown or "FILES"}).')


def open_index(project: "Project", name: str) -> "NgramIndex":
    """The corpus ``name`` ready for queries (close it when done). A local index is checked first and refused
    when damaged (``DamagedIndex``, saying how to build it again)."""
    corpus = get_corpus(project, name)
    if corpus.kind == REMOTE:
        from workbench.probes.leakage.remote_index import RemoteIndex

        if address_holds_secrets(corpus.url or ""):
            raise UserError(f"The address of the corpus '{corpus.name}' holds a user name, password or key, which "
                            "Palimpsest no longer keeps in a project. Remove the corpus and add it again with the "
                            "address alone.")
        return RemoteIndex(corpus.url or "", corpus.remote_index or "")
    from workbench.probes.leakage.local_index import LocalIndex

    try:
        return LocalIndex.open(project, corpus.folder(project))
    except DamagedIndex as exc:
        raise DamagedIndex(exc.detail, exc.folder, advice=rebuild_advice(project, corpus)) from None
