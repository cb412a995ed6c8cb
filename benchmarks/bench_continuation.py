"""Continuation probe: a whole run on a local transformers model, batched (the backend's own batches) against one
passage per call, side by side in one process.

The tiny test model (``tests/fixtures/tiny_model_builders.py``) is built in a temporary folder and added to two
fresh projects holding the same books; the probe runs end to end in each (passages sampled, prefixes sent, greedy
continuations stored and tokenized): once with the backend batching as it does, once with batches of one
(``max_batch_size=1``). The response cache is off, so both sides ask the model every time.

Goal: the batched run at least 10x faster. Also reported: whether both gave the same scores (they must).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Iterable

from benchmarks.common import line

GOAL = 10.0


def _project(folder: Path, name: str, books: int):
    from tests.fixtures.tiny_model_builders import TINY_TEXT
    from workbench.corpus.importer import store_book
    from workbench.corpus.sources import BookDraft
    from workbench.project import Project

    project = Project.create(folder / f"{name}.palimpsest")
    for number in range(books):
        words = TINY_TEXT.split()
        text = " ".join(words[number * 11 % len(words):] + words[: number * 11 % len(words)]) * 6
        store_book(project, BookDraft("text", f"book{number}.txt", text, title=f"Book {number}"))
    return project


def _timed(folder: Path, name: str, model_dir: Path, batch: int, books: int, per_book: int):
    from workbench.models.catalog import ModelSpec, add_model
    from workbench.models.hf_backend import TransformersBackend
    from workbench.probes.continuation.results import passage_frame
    from workbench.probes.continuation.run import run_continuation

    project = _project(folder, name, books)
    add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(model_dir)))
    backend = TransformersBackend(model_dir, device="cpu", max_batch_size=batch)
    started = time.perf_counter()
    report = run_continuation(project, "tiny", per_book=per_book, prefix_tokens=32, continue_tokens=32, backend=backend)
    seconds = time.perf_counter() - started
    scores = passage_frame(project, "tiny")[["passage_id", "exact_prefix", "longest_common"]].values.tolist()
    backend.close()
    project.close()
    return seconds, report.total, scores


def run(quick: bool) -> Iterable[dict]:
    from tests.fixtures.tiny_model_builders import build_tiny_causal

    books, per_book = (4, 16) if quick else (8, 32)
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        model_dir = build_tiny_causal(folder / "model")
        batched, passages, batched_scores = _timed(folder, "batched", model_dir, 64, books, per_book)
        single, _, single_scores = _timed(folder, "single", model_dir, 1, books, per_book)
    ratio = single / batched
    same = batched_scores == single_scores
    yield line("continuation_batched_vs_one_at_a_time", ratio, "x faster", f">= {GOAL}", ratio >= GOAL and same,
               passages=passages, batched_seconds=round(batched, 2), single_seconds=round(single, 2),
               same_scores=same)
