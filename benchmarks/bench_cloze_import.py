"""Importing published name-cloze results at the papers' scale, side by side in one run.

Made-up results in the gpt4-books format (``benchmarks/published_results.py``): 571 files of 100 rows for
each of two models. Measured:

- ``cloze_import_ratio``: importing and scoring one model's 571 files (57,100 answers:
  ``import_gpt4books``, which checks every row, finds or creates the books and passages, stores the run
  and scores the answers for its summary) against pandas merely reading the same files
  (``read_csv`` per file). Goal: at most 3 times (before: 25 to 43 times; one run per file, 3,994 commits).
- ``cloze_import_writes``: for that import, the runs made, the commits and the statements SQLite executed
  (a statement run by ``executemany`` counts once per row, as SQLite's trace reports it). Goal: one run
  and a handful of commits (before: 571 runs, 3,994 commits, 86,854 statements).
- ``cloze_import_second_model``: the second model's 571 files (their passages are found again, not
  added), against the same pandas reading; ``cloze_import_again``: the first model's files imported
  again, which must add nothing.

CPU time is the headline (other work on a shared machine inflates wall-clock time unevenly); the
wall-clock seconds are given beside it.
"""

from __future__ import annotations

import csv
import tempfile
import time
from pathlib import Path
from typing import Callable

from benchmarks.common import line
from benchmarks.published_results import write_published_results

GOAL = 3.0
ROUNDS = 3


def _timed(fn: Callable[[], object]) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def pandas_read(paths: list[Path]) -> int:
    import pandas as pd

    return sum(len(pd.read_csv(p, sep="\t", header=None, quoting=csv.QUOTE_NONE, dtype=str, keep_default_na=False))
               for p in paths)


def counted_import(project, paths: list[Path], label: str) -> dict[str, int]:
    """Import with SQLite's statement trace on: how many statements and commits it took."""
    from workbench.probes.cloze.gpt4books import import_gpt4books

    statements: list[str] = []
    project.db.conn.set_trace_callback(statements.append)
    try:
        import_gpt4books(project, paths, label)
    finally:
        project.db.conn.set_trace_callback(None)
    return {"statements": len(statements), "commits": sum(s.strip().upper() == "COMMIT" for s in statements)}


def run(quick: bool):
    from workbench import Project
    from workbench.probes.cloze.gpt4books import import_gpt4books

    books, rounds = 571, 2 if quick else ROUNDS  # the goal is at the papers' scale: --quick times fewer rounds
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        files = write_published_results(folder / "results", books=books)
        first, second = files["gpt4"], files["chatgpt"]
        pandas_read(first)  # the files in the page cache for both sides
        reads, imports = [], []
        for round_number in range(rounds):
            reads.append(_timed(lambda: pandas_read(first)))
            project = Project.create(folder / f"round{round_number}.palimpsest")
            imports.append(_timed(lambda project=project: import_gpt4books(project, first, "gpt4")))
            if round_number < rounds - 1:
                project.close()
        read_cpu, read_wall = min(r[0] for r in reads), min(r[1] for r in reads)
        import_cpu, import_wall = min(i[0] for i in imports), min(i[1] for i in imports)
        rows = reads[0][2]
        ratio = import_cpu / read_cpu
        yield line("cloze_import_ratio", ratio, "x", f"<= {GOAL:g} x pandas reading the files", ratio <= GOAL,
                   files=len(first), answers=rows, import_cpu_s=round(import_cpu, 3),
                   import_wall_s=round(import_wall, 3), pandas_cpu_s=round(read_cpu, 3),
                   pandas_wall_s=round(read_wall, 3), wall_ratio=round(import_wall / read_wall, 2))

        second_cpu, second_wall, _ = _timed(lambda: import_gpt4books(project, second, "chatgpt"))
        yield line("cloze_import_second_model", second_cpu / read_cpu, "x",
                   f"<= {GOAL:g} x pandas reading the files", second_cpu / read_cpu <= GOAL,
                   files=len(second), cpu_s=round(second_cpu, 3), wall_s=round(second_wall, 3))

        def counts() -> tuple[int, int, int]:
            return tuple(project.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                         for table in ("runs", "responses", "cloze_passages"))

        before = counts()
        again_cpu, again_wall, _ = _timed(lambda: import_gpt4books(project, first, "gpt4"))
        after = counts()
        yield line("cloze_import_again", again_cpu / read_cpu, "x", "adds nothing", after == before,
                   runs=after[0], responses=after[1], passages=after[2], cpu_s=round(again_cpu, 3),
                   wall_s=round(again_wall, 3))
        project.close()

        project = Project.create(folder / "counted.palimpsest")
        writes = counted_import(project, first, "gpt4")
        runs = project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        project.close()
        yield line("cloze_import_writes", writes["commits"], "commits", "one run, at most 5 commits",
                   runs == 1 and writes["commits"] <= 5, runs=runs, statements=writes["statements"],
                   answers=rows)
