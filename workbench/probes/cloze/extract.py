"""From a book's text to a seeded sample of name-cloze passages, and from books to stored passages.

The book is cut into *blocks* of whole paragraphs (at least ``block_words`` words each); spaCy reads
blocks, and a passage never crosses a block boundary, so both modes below find passages from the same
pool:

- **full mode** reads every block, counts every candidate, and samples ``per_book`` of them with
  ``random.Random(seed)``;
- **fast mode** visits the blocks in a seeded random order and stops once it has ``per_book``
  candidates (if the last block gives more than needed, a seeded sample keeps ``per_book``). The sample
  is spread over the whole book and is the same for the same seed, but the candidate count it records
  is only what it saw before stopping. A book that runs out of blocks has been read whole, so its
  count is then the full count.

Books with fewer candidates than ``per_book`` keep all they have and are *flagged*; analyses can
leave them out (the paper drops them).

**Extracting again.** Passages are what runs point at. Extracting a book again replaces its extracted
passages only when no run has responses for them; otherwise it is refused unless ``replace=True``,
which deletes the old passages *and their responses* (the CLI asks first). While a name-cloze run is being
executed, in this program or another, nothing is replaced: it may be writing answers for these passages.
Both are checked again inside the transaction that stores each book. Imported passages (gpt4-books) are
never touched.

Several books are read in several processes (``workers``), each loading spaCy once.
"""

from __future__ import annotations

import concurrent.futures as futures
import multiprocessing
import queue
import random
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import pandas as pd

from workbench.errors import CancelledError, UserError
from workbench.probes.cloze.candidates import BookSample, Candidate, find_candidates
from workbench.probes.cloze.rules import ExtractionSettings, project_settings
from workbench.progress import TaskState

if TYPE_CHECKING:
    from spacy.language import Language

    from workbench.project import Project

PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
PIPE_BATCH = 16
FAST_PIPE_BATCH = 4


def paragraphs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each paragraph: text between blank lines, surrounding whitespace trimmed."""
    spans = []
    start = 0
    for match in PARAGRAPH_BREAK.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    trimmed = []
    for a, b in spans:
        chunk = text[a:b]
        stripped = chunk.strip()
        if stripped:
            a += len(chunk) - len(chunk.lstrip())
            trimmed.append((a, a + len(stripped)))
    return trimmed


def blocks(text: str, min_words: int) -> list[tuple[int, int]]:
    """Consecutive paragraphs grouped until each group has at least ``min_words`` words."""
    grouped: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    words = 0
    for start, end in paragraphs(text):
        current = (current[0], end) if current else (start, end)
        words += len(text[start:end].split())
        if words >= min_words:
            grouped.append(current)
            current, words = None, 0
    if current:
        grouped.append(current)
    return grouped


def _sample(found: list[Candidate], settings: ExtractionSettings) -> list[Candidate]:
    chosen = found if len(found) <= settings.per_book else random.Random(settings.seed).sample(found, settings.per_book)
    return sorted(chosen, key=lambda c: c.name_start)


def sample_passages(
    text: str,
    settings: ExtractionSettings,
    nlp: "Language | None" = None,
    *,
    check: Callable[[], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> BookSample:
    """Find the candidates of ``text`` and draw the seeded sample (full or fast mode, see above).

    ``check`` is called between blocks (it raises to cancel); ``progress(blocks_read, blocks)``.
    """
    if nlp is None:
        from workbench.nlp import load_english

        nlp = load_english()
    spans = blocks(text, settings.block_words)
    order = list(range(len(spans)))
    if settings.fast:
        random.Random(settings.seed).shuffle(order)
    found: list[Candidate] = []
    read = 0
    batch = FAST_PIPE_BATCH if settings.fast else PIPE_BATCH
    docs = nlp.pipe(((text[spans[i][0] : spans[i][1]], i) for i in order), as_tuples=True, batch_size=batch)
    for doc, index in docs:
        if check:
            check()
        found.extend(find_candidates(doc, settings, offset=spans[index][0]))
        read += 1
        if progress:
            progress(read, len(spans))
        if settings.fast and len(found) >= settings.per_book:
            break
    chosen = _sample(found, settings)
    return BookSample(
        candidates=len(found),
        passages=chosen,
        texts=[c.passage(text) for c in chosen],
        blocks=len(spans),
        blocks_read=read,
        per_book=settings.per_book,
    )


# ---------------------------------------------------------------------------- several books


@dataclass(frozen=True)
class BookJob:
    book_id: int
    title: str


@dataclass
class BookResult:
    book_id: int
    sample: BookSample
    seconds: float
    model: str = ""


def _extract_one(book_id: int, text: str, settings: ExtractionSettings, nlp, check, progress) -> BookResult:
    started = time.perf_counter()
    sample = sample_passages(text, settings, nlp, check=check, progress=progress)
    return BookResult(book_id, sample, time.perf_counter() - started, _model_label(nlp))


def _model_label(nlp) -> str:
    return f"{nlp.meta.get('lang', '')}_{nlp.meta.get('name', '')}-{nlp.meta.get('version', '')}"


# Worker-process state: spaCy is loaded once per worker by the pool's initializer.
_worker: dict = {}


def _worker_init(model: str, cancel_event, progress_queue) -> None:
    from workbench.nlp import load_english

    _worker["nlp"] = load_english(model)
    _worker["cancel"] = cancel_event
    _worker["queue"] = progress_queue


def _worker_extract(book_id: int, text: str, settings: ExtractionSettings) -> BookResult:
    def check() -> None:
        if _worker["cancel"].is_set():
            raise CancelledError("Stopped at your request.")

    def progress(done: int, total: int) -> None:
        _worker["queue"].put((book_id, done, total))

    return _extract_one(book_id, text, settings, _worker["nlp"], check, progress)


def extract_texts(
    jobs: Sequence[BookJob],
    load_text: Callable[[int], str],
    settings: ExtractionSettings,
    *,
    model: str,
    workers: int = 1,
    state: TaskState | None = None,
    on_result: Callable[[BookResult], None] | None = None,
) -> list[BookResult]:
    """Extract from several books, in ``workers`` processes when there is more than one book.

    ``load_text(book_id)`` is called in this process just before a book is read, so only a few texts
    are in memory at once. ``on_result`` is called in this process as each book finishes (e.g. to
    store it at once).
    """
    state = state or TaskState()
    fractions = {job.book_id: 0.0 for job in jobs}
    titles = {job.book_id: job.title for job in jobs}

    def report(book_id: int, done: int, total: int) -> None:
        fractions[book_id] = done / total if total else 1.0
        finished = sum(1 for f in fractions.values() if f >= 1.0)
        state.progress(
            round(sum(fractions.values()) * 100),
            len(jobs) * 100,
            f"{finished} of {len(jobs)} books done; reading {titles[book_id]}",
        )

    def finished(result: BookResult) -> None:
        report(result.book_id, 1, 1)
        results.append(result)
        if on_result:
            on_result(result)

    results: list[BookResult] = []
    if workers <= 1 or len(jobs) <= 1:
        from workbench.nlp import load_english

        nlp = load_english(model)
        for job in jobs:
            state.check()
            progress = lambda d, t, b=job.book_id: report(b, d, t)  # noqa: E731
            finished(_extract_one(job.book_id, load_text(job.book_id), settings, nlp, state.check, progress))
        return results
    _extract_in_pool(jobs, load_text, settings, model, workers, state, report, finished)
    return results


def _extract_in_pool(jobs, load_text, settings, model, workers, state, report, finished) -> None:
    # 'spawn': a fresh interpreter per worker, safe beside GUI threads and loaded libraries.
    context = multiprocessing.get_context("spawn")
    cancel_event = context.Event()
    progress_queue = context.Queue()
    workers = min(workers, len(jobs))
    pool = futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_worker_init,
        initargs=(model, cancel_event, progress_queue),
    )
    waiting = list(jobs)
    running: dict[futures.Future, BookJob] = {}
    try:
        while waiting or running:
            # Keep each worker busy with one book and one more queued; the rest wait unread.
            while waiting and len(running) < workers + 1 and not state.cancelled:
                job = waiting.pop(0)
                running[pool.submit(_worker_extract, job.book_id, load_text(job.book_id), settings)] = job
            done, _ = futures.wait(running, timeout=0.2, return_when=futures.FIRST_COMPLETED)
            _drain(progress_queue, report)
            if state.cancelled:
                cancel_event.set()
            for future in done:
                running.pop(future)
                try:
                    result = future.result()
                except futures.process.BrokenProcessPool as exc:
                    raise UserError(
                        "A worker process stopped unexpectedly (perhaps out of memory). Try again with fewer workers."
                    ) from exc
                finished(result)
            if state.cancelled and not running:
                state.check()
    except BaseException:
        cancel_event.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        progress_queue.close()
        progress_queue.join_thread()


def _drain(progress_queue, report) -> None:
    while True:
        try:
            book_id, done, total = progress_queue.get_nowait()
        except queue.Empty:
            return
        report(book_id, done, total)


# ---------------------------------------------------------------------------- storing in a project


def extract_books(
    project: "Project",
    book_ids: Iterable[int] | None = None,
    settings: ExtractionSettings | None = None,
    *,
    workers: int = 1,
    replace: bool = False,
    state: TaskState | None = None,
) -> pd.DataFrame:
    """Extract and store passages for ``book_ids`` (default: every book with a stored text).

    Each book is written as soon as it is done, so a cancel keeps the books already finished.
    Returns one row per book: book_id, title, candidates, sampled, per_book, flagged, fast, seconds.
    Raises ``UserError`` if a book's old passages have responses and ``replace`` is False, and whenever a
    name-cloze run is being executed (here or in another program), checked again as each book is stored.
    """
    from workbench.nlp import resolve_model_name
    from workbench.probes.cloze import passages as stored

    settings = settings or project_settings(project)
    books = _books_to_read(project, book_ids)
    if not books:
        raise UserError("There are no books with a stored text to extract passages from. Import some books first.")
    titles = dict(books)
    stored.refuse_replacing(project, titles, replace=replace, titles=titles)
    model = resolve_model_name(project)
    rows = []

    def store(result: BookResult) -> None:
        stored.replace_extracted(project, result.book_id, result.sample, settings, model=result.model, replace=replace,
                                 title=titles[result.book_id])
        rows.append(_summary_row(result, _title(books, result.book_id), settings))

    jobs = [BookJob(book_id, title) for book_id, title in books]
    extract_texts(jobs, lambda book_id: _text(project, book_id), settings, model=model, workers=workers,
                  state=state, on_result=store)
    order = {book_id: n for n, (book_id, _) in enumerate(books)}
    return pd.DataFrame(sorted(rows, key=lambda r: order[r["book_id"]]), columns=SUMMARY_COLUMNS)


SUMMARY_COLUMNS = ["book_id", "title", "candidates", "sampled", "per_book", "flagged", "fast", "seconds"]


def _summary_row(result: BookResult, title: str, settings: ExtractionSettings) -> dict:
    return {
        "book_id": result.book_id,
        "title": title,
        "candidates": result.sample.candidates,
        "sampled": len(result.sample.passages),
        "per_book": settings.per_book,
        "flagged": result.sample.flagged,
        "fast": settings.fast,
        "seconds": round(result.seconds, 2),
    }


def _books_to_read(project: "Project", book_ids: Iterable[int] | None) -> list[tuple[int, str]]:
    db = project.db
    if book_ids is None:
        rows = db.execute(
            "SELECT b.id, COALESCE(NULLIF(b.title, ''), b.external_id, 'Book ' || b.id) FROM books b"
            " JOIN book_texts t ON t.book_id = b.id ORDER BY b.id"
        ).fetchall()
        return [(r[0], r[1]) for r in rows]
    from workbench.corpus.library import get_book

    chosen = []
    for book_id in dict.fromkeys(book_ids):
        book = get_book(project, book_id)
        if db.execute("SELECT 1 FROM book_texts WHERE book_id = ?", [book_id]).fetchone() is None:
            raise UserError(
                f"'{book.display_name}' has no stored text (it is known only from imported results), "
                "so passages cannot be extracted from it."
            )
        chosen.append((book.id, book.display_name))
    return chosen


def _title(books: list[tuple[int, str]], book_id: int) -> str:
    return dict(books).get(book_id, f"Book {book_id}")


def _text(project: "Project", book_id: int) -> str:
    from workbench.corpus.library import book_text

    return book_text(project, book_id)

