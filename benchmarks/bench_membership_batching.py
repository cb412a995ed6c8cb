"""Membership scores on the tiny test model: one batched job against one passage per call, side by side.

The passages (15 to 34 words of the test text: about 60 of the tiny tokenizer's tokens, what a 50-word
name-cloze passage makes with a real model's tokenizer) are read through the job runner twice: once in chunks of
64 (``score_texts`` pads them into a few batches of similar length, one forward pass each), once one passage
per chunk. Goal: batched at least 5x the throughput (CPU time of the process, all threads; wall-clock time
is reported too).

Measured with torch's own number of threads (the program's setting; the goal line) and with one thread
(no thread waits counted: the steadiest figure on a shared machine). ``forward_only_ratio`` is the same
comparison for the model's bare forward passes (same batches, no tokenizing, scoring or storing): the
most batching can give for this model on this processor, since what is left in a one-passage pass is the
model's own arithmetic.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Iterable

from benchmarks.common import Timer, line

BATCH_GOAL = 5.0


def run(quick: bool) -> Iterable[dict]:
    yield from _membership(quick)


def _membership(quick: bool) -> Iterable[dict]:
    import torch

    from tests.fixtures.tiny_model_builders import TINY_TEXT, build_tiny_causal
    from workbench.models.catalog import ModelSpec, add_model, get_model, open_backend
    from workbench.probes.leakage import passages as store
    from workbench.probes.leakage.membership import run_membership
    from workbench.project import Project

    words = TINY_TEXT.split()
    texts = [" ".join(words[(7 * i) % 150 : (7 * i) % 150 + 15 + i % 20]) for i in range(32 if quick else 64)]
    repeats = 3 if quick else 7
    default_threads = torch.get_num_threads()
    with tempfile.TemporaryDirectory(prefix="bench-membership-") as tmp:
        folder = build_tiny_causal(Path(tmp) / "model")
        project = Project.create(Path(tmp) / "bench.palimpsest")
        add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(folder), params={"device": "cpu"}))
        ids = store.store_passages(project, "bench", [(str(n), None, "", t) for n, t in enumerate(texts)])

        def one_run(chunk: int) -> None:
            project.db.execute("DELETE FROM runs WHERE kind = 'membership'")
            run_membership(project, "tiny", passage_ids=ids, backend=backend, chunk_size=chunk)

        try:
            with open_backend(get_model(project, "tiny"), project) as backend:
                tokens = [backend.tokenizer(t)["input_ids"] for t in texts]
                backend.score_texts(texts[:2])  # warm up
                for threads in dict.fromkeys((default_threads, 1)):
                    torch.set_num_threads(threads)
                    runs = _best({"batched": lambda: one_run(64), "single": lambda: one_run(1)}, repeats)
                    forward = _best(_bare_forwards(backend, tokens), repeats)
                    ratio = runs["single"][1] / runs["batched"][1]
                    yield line(
                        "membership_batched_vs_single" + ("" if threads == default_threads else "_one_thread"),
                        ratio, "x throughput (CPU time)", f">= {BATCH_GOAL}", ratio >= BATCH_GOAL,
                        passages=len(texts), tokens_per_passage=round(sum(map(len, tokens)) / len(tokens)),
                        wall_ratio=round(runs["single"][0] / runs["batched"][0], 3),
                        batched_seconds=round(runs["batched"][0], 3), single_seconds=round(runs["single"][0], 3),
                        forward_only_ratio=round(forward["single"][1] / forward["batched"][1], 3),
                        torch_threads=threads)
        finally:
            torch.set_num_threads(default_threads)
            project.close()


def _best(work: dict, repeats: int) -> dict[str, tuple[float, float]]:
    """Per piece of work: the best wall-clock and the best CPU seconds of ``repeats`` turns, interleaved."""
    wall: dict[str, list[float]] = {name: [] for name in work}
    cpu: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(repeats):
        for name, fn in work.items():
            started = time.process_time()
            with Timer() as timer:
                fn()
            wall[name].append(timer.seconds)
            cpu[name].append(time.process_time() - started)
    return {name: (min(wall[name]), min(cpu[name])) for name in work}


def _bare_forwards(backend, tokens: list[list[int]]) -> dict:
    """The model's forward passes alone: the passages in four batches of similar length, and one by one."""
    import torch

    ordered = sorted(tokens, key=len, reverse=True)
    quarter = max(1, len(ordered) // 4)
    groups = [ordered[i : i + quarter] for i in range(0, len(ordered), quarter)]

    def forward(batch: list[list[int]]) -> None:
        width = max(map(len, batch))
        with torch.inference_mode():
            backend.model(input_ids=torch.tensor([t + [backend.pad_id] * (width - len(t)) for t in batch]),
                          use_cache=False)

    return {"batched": lambda: [forward(g) for g in groups], "single": lambda: [forward([t]) for t in ordered]}
