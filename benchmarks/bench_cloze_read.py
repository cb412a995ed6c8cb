"""Reading name-cloze results at the papers' scale, side by side in one run.

A project holding made-up published results (``benchmarks/published_results.py``) for two models on 571
books, 114,200 answers, imported with ``palimpsest cloze import``, the books then given their titles,
years and a genre by a metadata table matched on the results files' names. Measured against pandas
reading the same answers with their model and book (``read_sql`` of responses joined to runs, models and
passages: model, book, status, raw answer) and counting them, and those answered, per model and book
(``groupby``):

- ``cloze_read_accuracy``: ``palimpsest cloze accuracy PROJECT`` (both models, every book, Wilson
  intervals), run in this process with its output captured; opening the project (which runs SQLite's
  integrity check over the whole file) is part of it and is given beside it;
- ``cloze_read_frame_<chart>``: each name-cloze chart's ``frame`` as the Charts page and ``palimpsest
  chart`` build it (default options), against pandas reading the answers of the models the frame shows
  (one model's 57,100 answers, or both models' 114,200).

Goal: each at most 3 times the pandas read (before: 7 s for the accuracy, 13 s for the model-vs-model
figure, 22 and 45 times). Every step is timed three times, interleaved with the pandas read; the best
CPU time of each counts (other work on a shared machine inflates wall-clock time unevenly). The first
call of each step is left out: it loads scipy and statsmodels, once per program.
"""

from __future__ import annotations

import contextlib
import csv
import io
import random
import tempfile
import time
from pathlib import Path
from typing import Callable

from benchmarks.common import line
from benchmarks.published_results import made_up_books, write_published_results

GOAL = 3.0
ROUNDS = 3
GENRES = ("gothic", "realist", "comic", "adventure")


def _cpu(fn: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def build_project(folder: Path, books: int):
    """The benchmark's project: both models' results imported, then a metadata table applied."""
    from workbench import Project
    from workbench.corpus.importer import import_paths
    from workbench.probes.cloze.gpt4books import import_gpt4books

    files = write_published_results(folder / "results", books=books)
    project = Project.create(folder / "speak-memory.palimpsest")
    for model, paths in files.items():
        import_gpt4books(project, paths, model)
    rng = random.Random(5)
    table = folder / "metadata.csv"
    with table.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["file", "title", "author", "year", "genre"])
        for book in made_up_books(books):
            writer.writerow([f"{book.stem}.txt", book.title, book.author, book.year, rng.choice(GENRES)])
    import_paths(project, [], metadata_csv=table)
    return project


def pandas_read(project, models: list[str]) -> int:
    """The answers of ``models`` with their model and book, read by pandas and counted per model and book."""
    import pandas as pd

    frame = pd.read_sql_query(
        "SELECT m.label AS model, p.book_id, x.status, x.raw FROM responses x JOIN runs r ON r.id = x.run_id"
        " JOIN models m ON m.id = r.model_id JOIN cloze_passages p ON p.id = x.item_id"
        f" WHERE m.label IN ({','.join('?' * len(models))})", project.db.conn, params=models)
    frame.assign(ok=frame["status"] == "ok").groupby(["model", "book_id"])["ok"].agg(["size", "sum"])
    return len(frame)


def models_of(result, every: list[str]) -> list[str]:
    """The models whose answers a step read: those its frame names (all for the accuracy command)."""
    if result is None:
        return every
    named = {m for column in ("model", "model_a", "model_b") if column in result for m in result[column].unique()}
    return sorted(named) or every


def run(quick: bool):
    from workbench import Project
    from workbench.cli import main
    from workbench.export import registry

    books, rounds = 571, 2 if quick else ROUNDS  # the goal is at the papers' scale: --quick times fewer rounds
    with tempfile.TemporaryDirectory() as folder:
        project = build_project(Path(folder), books)
        every = sorted(r[0] for r in project.db.execute("SELECT label FROM models").fetchall())

        def accuracy_command() -> None:
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(["cloze", "accuracy", str(project.path)]) == 0

        def open_only() -> None:  # the command's share that is not reading results: opening (and checking) the file
            Project.open(project.path).close()

        steps: dict[str, Callable[[], object]] = {"cloze_read_accuracy": accuracy_command}
        for name, spec in sorted(registry.charts().items()):
            if name.startswith("cloze-"):
                steps[f"cloze_read_frame_{name.removeprefix('cloze-')}"] = lambda spec=spec: spec.frame(project)
        # the first call loads scipy and statsmodels, as in a program that has drawn a chart before
        read = {name: models_of(step(), every) for name, step in steps.items()}
        baselines = {tuple(models) for models in read.values()}
        answers = {models: pandas_read(project, list(models)) for models in baselines}
        times: dict[object, list[tuple[float, float]]] = {key: [] for key in [*baselines, *steps, "open"]}
        for _ in range(rounds):
            times["open"].append(_cpu(open_only))
            for models in baselines:
                times[models].append(_cpu(lambda models=models: pandas_read(project, list(models))))
            for name, step in steps.items():
                times[name].append(_cpu(step))
        project.close()
    best = {key: (min(t[0] for t in runs), min(t[1] for t in runs)) for key, runs in times.items()}
    for name in steps:
        (cpu, wall), models = best[name], tuple(read[name])
        pandas_cpu, pandas_wall = best[models]
        ratio = cpu / pandas_cpu
        extra = {"opening_the_project_cpu_s": round(best["open"][0], 3)} if name == "cloze_read_accuracy" else {}
        yield line(name, ratio, "x", f"<= {GOAL:g} x pandas read_sql + groupby", ratio <= GOAL, books=books,
                   models=list(models), answers=answers[models], cpu_s=round(cpu, 3), wall_s=round(wall, 3),
                   pandas_cpu_s=round(pandas_cpu, 3), pandas_wall_s=round(pandas_wall, 3), **extra)
