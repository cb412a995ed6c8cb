"""Membership scores on the tiny test model: one batched job against one passage per call, side by side.

The passages (15 to 34 words of the test text: about 60 of the tiny tokenizer's tokens, what a 50-word
name-cloze passage makes with a real model's tokenizer) are read through the job runner twice: once in chunks of
64 (``score_texts`` pads them into one batch and reads them in one forward pass), once one passage per
chunk. Goal: batched at least 5x the throughput (CPU time of the process, all threads; wall-clock time
is reported too).
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
    from tests.fixtures.tiny_model_builders import TINY_TEXT, build_tiny_causal
    from workbench.models.registry import ModelSpec, add_model
    from workbench.probes.leakage import passages as store
    from workbench.probes.leakage.membership import run_membership
    from workbench.project import Project

    words = TINY_TEXT.split()
    texts = [" ".join(words[(7 * i) % 150 : (7 * i) % 150 + 15 + i % 20]) for i in range(32 if quick else 64)]
    with tempfile.TemporaryDirectory(prefix="bench-membership-") as tmp:
        folder = build_tiny_causal(Path(tmp) / "model")
        project = Project.create(Path(tmp) / "bench.palimpsest")
        add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(folder), params={"device": "cpu"}))
        ids = store.store_passages(project, "bench", [(str(n), None, "", t) for n, t in enumerate(texts)])
        from workbench.models.registry import get_model, open_backend

        with open_backend(get_model(project, "tiny"), project) as backend:
            tokens = sum(len(backend.tokenizer(t)["input_ids"]) for t in texts) / len(texts)
            backend.score_texts(texts[:2])  # warm up
            wall = {"batched": [], "single": []}
            cpu = {"batched": [], "single": []}
            for _ in range(2 if quick else 5):
                for which, chunk in (("batched", 64), ("single", 1)):
                    project.db.execute("DELETE FROM runs WHERE kind = 'membership'")
                    started = time.process_time()
                    with Timer() as timer:
                        run_membership(project, "tiny", passage_ids=ids, backend=backend, chunk_size=chunk)
                    wall[which].append(timer.seconds)
                    cpu[which].append(time.process_time() - started)
        project.close()
    ratio = min(cpu["single"]) / min(cpu["batched"])
    import torch

    yield line("membership_batched_vs_single", ratio, "x throughput (CPU time)", f">= {BATCH_GOAL}",
               ratio >= BATCH_GOAL, passages=len(texts), tokens_per_passage=round(tokens), wall_ratio=round(min(wall["single"]) / min(wall["batched"]), 3),
               batched_seconds=round(min(wall["batched"]), 3), single_seconds=round(min(wall["single"]), 3),
               torch_threads=torch.get_num_threads())
