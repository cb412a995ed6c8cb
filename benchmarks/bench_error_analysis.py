"""The name-cloze error analysis (Speak, Memory 6.1) at the papers' scale: 570 made-up books x 100 passages x
2 models (114,000 imported answers in the published format, each book with its own cast of characters,
errors leaning towards the well-known books' characters), one model's errors analysed with the books
grouped by the other's accuracy, 10,000 deals of the randomization test.

Side by side on the same answers: the analysis as it is (``errors.error_statistics``: name sets, counts and
the deals drawn as arrays) and the same statistic and test as a plain-Python loop (the same name sets,
then for each deal a shuffle of the pooled names and a pass over every error). The value is the loop's
time over the array version's; goal: at least 20 times faster. Also reported: the time of a loop that
counts each name's errors once before dealing (a stronger plain-Python baseline), and the whole analysis
read from the project.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from benchmarks.common import Timer, line


def run(quick: bool):
    from benchmarks.published_results import write_published_results
    from workbench.probes.cloze.analysis import decile_sets
    from workbench.probes.cloze.error_analysis import (
        error_analysis,
        error_statistics,
        model_answers,
        normalised,
        plain_python,
    )
    from workbench.probes.cloze.gpt4books import import_gpt4books
    from workbench.project import Project

    books, deals = (150, 1_000) if quick else (571, 10_000)
    with tempfile.TemporaryDirectory() as folder:
        files = write_published_results(Path(folder) / "results", books=books, rows=100, cast="distinct")
        project = Project.create(Path(folder) / "errors.palimpsest")
        try:
            for model, paths in files.items():  # two made-up books can share a file name: one file each
                import_gpt4books(project, sorted(set(paths)), model)
            answers = int(project.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
            results = model_answers(project, "chatgpt")
            sets = decile_sets(project, "gpt4", save=False)
            top = set(sets.loc[sets["set"].str.startswith("cloze top"), "book_id"])
            bottom = set(sets.loc[sets["set"].str.startswith("cloze bottom"), "book_id"])

            with Timer() as fast:
                result = error_statistics(results, top, bottom, permutations=deals, seed=0)
            with Timer() as slow:
                names = error_statistics(results, top, bottom, permutations=1).names  # the same name sets
                held = results[~results["book_id"].isin(top | bottom)]
                wrong = held[(held["status"] == "ok") & ~held["correct"].astype(bool)]
                errors = list(normalised(wrong["parsed"]))
                seen = list(normalised(names.loc[names["set"] == "seen", "name"]))
                unseen = list(normalised(names.loc[names["set"] == "unseen", "name"]))
                o, p = plain_python(errors, seen, unseen, deals, 0)
            with Timer() as counted:
                counts: dict[str, int] = {}
                for answer in errors:
                    counts[answer] = counts.get(answer, 0) + 1
                pooled, k = seen + unseen, len(seen)
                rng = random.Random(0)
                for _ in range(deals):
                    rng.shuffle(pooled)
                    sum(counts.get(n, 0) for n in pooled[:k])
            with Timer() as whole:
                error_analysis(project, "chatgpt", "gpt4", permutations=deals, seed=0)
        finally:
            project.close()
    same = abs(o - result.log_odds) < 1e-9
    ratio = slow.seconds / fast.seconds
    yield line("error_analysis_vs_plain_loop", ratio, "x", ">= 20x faster than the plain-Python loop",
               ratio >= 20 and same, answers=answers, errors=len(errors), seen_names=result.seen_names, unseen_names=result.unseen_names, deals=deals,
               log_odds=round(result.log_odds, 4), p_value=result.p_value, plain_p_value=round(p, 6),
               array_seconds=round(fast.seconds, 3), loop_seconds=round(slow.seconds, 2),
               counted_loop_seconds=round(counted.seconds, 3),
               ratio_vs_counted_loop=round(counted.seconds / fast.seconds, 2),
               whole_analysis_from_project_seconds=round(whole.seconds, 2), same_statistic=same)
