"""Where books come from: files and folders on disk, or a Project Gutenberg number. Each source is
read into a ``BookDraft`` (text + what the file says about itself), ready to be stored."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from workbench.corpus import gutenberg
from workbench.corpus.decode import decode_text, remove_nul_characters
from workbench.corpus.download import fetch_gutenberg_text
from workbench.corpus.epub import read_epub
from workbench.corpus.stats import WORD_RE
from workbench.errors import UserError
from workbench.progress import TaskState

MAX_BOOK_BYTES = 100 * 1024 * 1024  # the longest novels are under 10 MB as plain text
TEXT_SUFFIXES = (".txt", ".text")
EPUB_SUFFIXES = (".epub",)
TABLE_SUFFIXES = (".csv", ".tsv")


@dataclass
class BookDraft:
    source_kind: str  # text, gutenberg, epub, download
    source_name: str  # the file name, or the address it was downloaded from
    text: str
    title: str = ""
    author: str = ""
    language: str | None = None
    year: int | None = None
    external_id: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Source:
    path: Path | None = None
    gutenberg_id: int | None = None

    @property
    def label(self) -> str:
        return self.path.name if self.path is not None else f"Gutenberg book {self.gutenberg_id}"


@dataclass
class Expanded:
    sources: list[Source] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files in folders that are not books
    missing: list[str] = field(default_factory=list)  # paths that do not exist


def _is_hidden(name: str) -> bool:
    return name.startswith(".") or name.startswith("~$")


def _book_files_in(folder: Path, expanded: Expanded) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not _is_hidden(d))
        for name in sorted(files):
            if _is_hidden(name):
                continue
            path = Path(root) / name
            if path.suffix.lower() in TEXT_SUFFIXES + EPUB_SUFFIXES:
                found.append(path)
            else:
                expanded.skipped.append(str(path.relative_to(folder)))
    return found


def expand_paths(paths: list[str | Path], gutenberg_ids: list[int] = ()) -> Expanded:
    """Files as given, folders searched (with their subfolders) for .txt and .epub files."""
    expanded = Expanded()
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            files = _book_files_in(path, expanded)
        elif path.exists():
            files = [path]
        else:
            expanded.missing.append(str(raw))
            continue
        for file in files:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                expanded.sources.append(Source(path=file))
    for number in dict.fromkeys(gutenberg_ids):
        expanded.sources.append(Source(gutenberg_id=int(number)))
    return expanded


def _check_has_words(draft: BookDraft, what: str) -> BookDraft:
    if not WORD_RE.search(draft.text):
        raise UserError(f"{what} has no text to import. Check that it is the right file.")
    return draft


def draft_from_text(text: str, name: str, *, kind: str = "text") -> BookDraft:
    """A plain text, with the Project Gutenberg header and licence taken off when it has them."""
    text, nul_note = remove_nul_characters(text, name)
    if gutenberg.looks_like_gutenberg(text):
        header = gutenberg.parse_header(text)
        draft = BookDraft(
            source_kind="gutenberg" if kind == "text" else kind,
            source_name=name,
            text=gutenberg.strip_boilerplate(text),
            title=header.title,
            author=header.author,
            language=header.language or None,
            external_id=header.ebook_number or gutenberg.number_from_file_name(name),
        )
        if not gutenberg.has_markers(text):
            draft.notes.append(
                f"{name} looks like a Project Gutenberg file but has no '*** START OF' line, "
                "so its header and licence could not be told apart from the book and were kept."
            )
    else:
        number = gutenberg.number_from_file_name(name) if name.lower().startswith("pg") else None
        draft = BookDraft(source_kind=kind, source_name=name, text=text.strip("\n") + "\n", external_id=number)
    draft.title = draft.title or Path(name).stem
    if nul_note:
        draft.notes.append(nul_note)
    return draft


def _check_size(path: Path) -> None:
    size = path.stat().st_size
    if size > MAX_BOOK_BYTES:
        raise UserError(
            f"{path.name} is {size / (1024 * 1024):.0f} MB, more than the {MAX_BOOK_BYTES // (1024 * 1024)} MB "
            "one book may have. Check that it is a single book (a novel is usually under 5 MB)."
        )
    if size == 0:
        raise UserError(f"{path.name} is empty (0 bytes). Check that it is the right file, or download it again.")


def read_file(path: Path) -> BookDraft:
    path = Path(path)
    if path.suffix.lower() in TABLE_SUFFIXES:
        raise UserError(
            f"{path.name} is a table, not a book. To add titles, authors and years from it, "
            "give it as the metadata table (--metadata, or Import ▸ Metadata table in the app)."
        )
    _check_size(path)
    if path.suffix.lower() in EPUB_SUFFIXES:
        book = read_epub(path)
        draft = draft_from_text(book.text, path.name, kind="epub") if book.text else BookDraft("epub", path.name, "")
        draft.title = book.title or draft.title or path.stem
        draft.author = book.author or draft.author
        draft.language = book.language or draft.language
        return _check_has_words(draft, path.name)
    return _check_has_words(draft_from_text(decode_text(path.read_bytes(), path.name), path.name), path.name)


def read_download(gutenberg_id: int, *, mirror: str | None = None, state: TaskState | None = None) -> BookDraft:
    downloaded = fetch_gutenberg_text(gutenberg_id, mirror=mirror, max_bytes=MAX_BOOK_BYTES, state=state)
    what = f"Gutenberg book {gutenberg_id}"
    draft = draft_from_text(decode_text(downloaded.data, what), f"pg{gutenberg_id}.txt", kind="download")
    draft.source_name = downloaded.url
    draft.external_id = str(gutenberg_id)
    if draft.title == f"pg{gutenberg_id}":
        draft.title = what
    return _check_has_words(draft, what)


def read_source(source: Source, *, mirror: str | None = None, state: TaskState | None = None) -> BookDraft:
    if source.path is not None:
        return read_file(source.path)
    return read_download(source.gutenberg_id, mirror=mirror, state=state)
