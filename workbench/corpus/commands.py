"""``palimpsest import``, ``books``, ``book`` and ``tag``: filling and reading the library."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.common import (
    BOOK_HELP,
    add_format_argument,
    add_project_argument,
    opened,
    print_frame,
    progress_state,
)
from workbench.errors import UserError

TABLE_COLUMNS = ["id", "title", "author", "year", "words", "tags"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "import",
        help="add books: .txt and .epub files, folders of them, or Project Gutenberg numbers",
        description="Add books to a project. Books already in it (the same text) are not added again.",
    )
    add_project_argument(p)
    p.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="files or folders to import")
    p.add_argument("--metadata", type=Path, metavar="CSV",
                   help="a table of title, author, year and tags, matched to books by file name, gutenberg_id or id")
    p.add_argument("--gutenberg-id", action="append", default=[], metavar="N",
                   help="download Project Gutenberg book number N (repeat for several)")
    p.add_argument("--mirror", metavar="URL", help="a Project Gutenberg mirror to download from")
    p.set_defaults(handler=cmd_import)

    p = subparsers.add_parser("books", help="list the books in a project")
    add_project_argument(p)
    add_format_argument(p)
    p.add_argument("--all-columns", action="store_true", help="also language, source and Gutenberg number")
    p.set_defaults(handler=cmd_books)

    p = subparsers.add_parser("book", help="one book: its details and text statistics")
    add_project_argument(p)
    p.add_argument("book_id", type=int, metavar="BOOK_ID", help=BOOK_HELP)
    p.set_defaults(handler=cmd_book)

    p = subparsers.add_parser("tag", help="set tags on a book, e.g. genre=gothic decade=1890s")
    add_project_argument(p)
    p.add_argument("book_id", type=int, metavar="BOOK_ID", help=BOOK_HELP)
    p.add_argument("tags", nargs="*", metavar="KEY=VALUE", help="tags to set")
    p.add_argument("--remove", action="append", default=[], metavar="KEY", help="a tag to remove")
    p.set_defaults(handler=cmd_tag)


def cmd_import(args: argparse.Namespace) -> int:
    from workbench.corpus.importer import import_paths

    if not args.paths and not args.gutenberg_id and args.metadata is None:
        raise UserError("Nothing to import: give files or folders, --gutenberg-id N, or --metadata CSV.")
    with opened(args.project) as project:
        report = import_paths(
            project,
            args.paths,
            metadata_csv=args.metadata,
            state=progress_state("Importing"),
            gutenberg_ids=args.gutenberg_id,
            mirror=args.mirror,
        )
    print(report.summary())
    if report.cancelled:
        return 130
    if report.failures:  # a script must not take a partial import for a whole one
        if not report.everything_failed:
            print(f"{len(report.failures)} file(s) could not be imported (listed above); the others were.",
                  file=sys.stderr)
        return 1
    return 0


def cmd_books(args: argparse.Namespace) -> int:
    from workbench.corpus.library import books_frame

    with opened(args.project) as project:
        frame = books_frame(project)
    if args.format == "table":
        frame["words"] = [f"{w:,}" if has else "no text" for w, has in zip(frame["words"], frame["has_text"])]
        if not args.all_columns:
            frame = frame[TABLE_COLUMNS]
    print_frame(frame, args.format)
    return 0


def cmd_book(args: argparse.Namespace) -> int:
    from workbench.corpus.library import RESULTS_ONLY, book_text, format_tags, get_book
    from workbench.corpus.stats import text_statistics

    with opened(args.project) as project:
        book = get_book(project, args.book_id)
        stats = text_statistics(book_text(project, book.id)) if book.has_text else None
    rows = [
        ("Title", book.title), ("Author", book.author), ("Year", book.year or ""),
        ("Language", book.language or ""), ("Source", book.source_name or ""),
        (book.id_label, book.external_id or ""),
        ("Tags", format_tags(book.tags)),
    ]  # fmt: skip
    if stats is None:
        rows.append(("Text", RESULTS_ONLY))
    else:
        rows += [("Words", f"{stats.words:,}"), ("Sentences", f"{stats.sentences:,}"),
                 ("Chapters detected", stats.chapters), ("Paragraphs", f"{stats.paragraphs:,}")]
    for label, value in rows:
        print(f"{label + ':':<19} {value}")
    return 0


def cmd_tag(args: argparse.Namespace) -> int:
    from workbench.cli.common import parse_options
    from workbench.corpus.library import format_tags, get_book, remove_tags, set_tags

    if not args.tags and not args.remove:
        raise UserError("Give tags to set (e.g. genre=gothic) or --remove KEY.")
    tags = parse_options(args.tags)
    with opened(args.project) as project:
        if tags:
            set_tags(project, args.book_id, tags)
        if args.remove:
            remove_tags(project, args.book_id, args.remove)
        book = get_book(project, args.book_id)
    print(f"Book {book.id} ({book.display_name}): {format_tags(book.tags) or 'no tags'}.")
    return 0
