"""Books at hostile sizes are read in time proportional to their size, measured side by side in one run.

- ``book_stats_92mb``: the statistics of ``palimpsest book`` (words, sentences, paragraphs, chapters) on a
  92 MB book (the Project Gutenberg books in ``../shared/data`` put together until they reach that size),
  against one plain regular-expression pass over the same text (``\\w+``), the least any word count does.
- ``book_stats_100k_chapters``: the same on a book of 100,000 short chapters (a complete works of
  letters, say), where looking for contents pages once compared every heading with all later ones.
- ``epub_20k_paragraphs``: reading an EPUB whose one chapter has 20,000 paragraphs, against lxml merely
  parsing that chapter's XHTML (inserting paragraph markers into the tree once made this quadratic).
- ``epub_10k_chapters``: reading an EPUB of 9,990 short chapters (about the most files an EPUB may hold),
  against lxml parsing them (looking each chapter up among all the book's files was quadratic).

CPU time is the headline: other work on a shared machine inflates wall-clock time unevenly.
"""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable

from benchmarks.common import SHARED_DATA, line, missing_data

GUTENBERG = SHARED_DATA / "gutenberg"
BOOK_BYTES = 92_000_000
STATS_GOAL = 4.0  # x one regex pass (before: 7.8)
MANY_CHAPTERS_GOAL = 8.0  # x one regex pass (before: more than 8 CPU minutes, about 1,000 x)
EPUB_GOAL = 10.0  # x lxml parsing the chapters


def _cpu_seconds(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def _stats_line(name: str, text: str, repeats: int, goal: float) -> dict:
    from workbench.corpus.stats import text_statistics

    word_pass = re.compile(r"\w+")
    reference = _cpu_seconds(lambda: word_pass.findall(text), repeats)
    stats_seconds = _cpu_seconds(lambda: text_statistics(text), repeats)
    ratio = stats_seconds / reference
    stats = text_statistics(text)
    return line(name, ratio, "x one regex pass (CPU time)", f"<= {goal}", ratio <= goal,
                stats_seconds=round(stats_seconds, 2), regex_pass_seconds=round(reference, 2),
                megabytes=round(len(text.encode("utf-8")) / 1e6, 1), chapters=stats.chapters)


def _gutenberg_volume(size: int) -> str:
    from workbench.corpus.decode import decode_text

    books = [decode_text(p.read_bytes(), p.name) for p in sorted(GUTENBERG.glob("pg*.txt"))]
    parts, total = [], 0
    while total < size:
        for book in books:
            parts.append(book)
            total += len(book.encode("utf-8"))
            if total >= size:
                break
    return "\n\n".join(parts)


def _many_chapters(count: int) -> str:
    body = " ".join(["It rained on the orchard, and the letters waited."] * 4)
    return "".join(f"LETTER {n}\n\n{body}\n\n" for n in range(1, count + 1))


def _epub(folder: Path, chapters: list[str]) -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("palimpsest-benchmark")
    book.set_title("A Long Book")
    book.set_language("en")
    for i, html in enumerate(chapters):
        chapter = epub.EpubHtml(title=f"Chapter {i}", file_name=f"chapter_{i}.xhtml", lang="en")
        chapter.content = html
        book.add_item(chapter)
        book.spine.append(chapter)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    path = folder / "long.epub"
    epub.write_epub(str(path), book)
    return path


def _epub_line(name: str, documents: list[str], repeats: int, **extra) -> dict:
    from lxml import etree

    from workbench.corpus.epub import read_epub

    encoded = [html.encode("utf-8") for html in documents]
    with tempfile.TemporaryDirectory() as folder:
        path = _epub(Path(folder), documents)
        parse = lambda: [etree.fromstring(d, etree.HTMLParser(encoding="utf-8")) for d in encoded]  # noqa: E731
        reference = _cpu_seconds(parse, repeats)
        reading = _cpu_seconds(lambda: read_epub(path), repeats)
    ratio = reading / reference
    return line(name, ratio, "x lxml parsing the chapters (CPU time)", f"<= {EPUB_GOAL}", ratio <= EPUB_GOAL,
                read_seconds=round(reading, 3), parse_seconds=round(reference, 4), **extra)


def run(quick: bool) -> Iterable[dict]:
    repeats = 1 if quick else 3
    if GUTENBERG.is_dir() and any(GUTENBERG.glob("pg*.txt")):
        yield _stats_line("book_stats_92mb", _gutenberg_volume(BOOK_BYTES // 6 if quick else BOOK_BYTES), repeats,
                          goal=STATS_GOAL)
    else:
        yield missing_data("book_stats_92mb", GUTENBERG, "the Gutenberg novels (gutenberg/ in the shared data folder "
                                                         "beside the checkout, or PALIMPSEST_SHARED_DATA)")
    yield _stats_line("book_stats_100k_chapters", _many_chapters(20_000 if quick else 100_000), repeats,
                      goal=MANY_CHAPTERS_GOAL)

    paragraphs = 5_000 if quick else 20_000
    paragraph = "<p>Paragraph {} of the <i>long</i> chapter, with a few more words.</p>"
    long_chapter = "<html><body><h1>The Long Chapter</h1>" + "".join(map(paragraph.format, range(paragraphs)))
    yield _epub_line("epub_20k_paragraphs", [long_chapter + "</body></html>"], repeats, paragraphs=paragraphs)
    count = 2_000 if quick else 9_990  # with the package files, the most an EPUB may hold
    chapters = [f"<html><body><h1>Chapter {i}</h1><p>{paragraph.format(i)}</p></body></html>" for i in range(count)]
    yield _epub_line("epub_10k_chapters", chapters, repeats, chapters=count)
