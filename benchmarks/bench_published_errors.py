"""The error analysis of *Speak, Memory* (section 6.1) on the published GPT-4 and ChatGPT name-cloze outputs
(bamman-group/gpt4-books, ``data/model_output/{gpt4,chatgpt}_results``, found through ``benchmarks.common``),
beside the paper's numbers: o = 1.37 for GPT-4 and 1.34 for ChatGPT, p < 0.0001 for both.

Both models' books are grouped by GPT-4's accuracy, as in the paper. The analysis is run with both tie rules
(every book tied at a cut and every name tied on PMI at the set size in; or random seeded draws of them,
reported as the median draw with the 5th-95th percentile over the draws) and several set sizes (the paper
does not say how many names S and U hold). One line per model, tie rule and set size; then one line per model
with the range of o over all of them and whether the paper's o falls inside it; then ChatGPT grouped by its
own accuracy (what the analysis did by default before), for contrast.

The published folders hold two files for one book (``472_the_house_behind_the_cedars.txt`` and
``chesnutt_the_house_behind_the_cedars_gutenberg_pg472_...``, with different passages). The whole folder is
imported when the importer accepts it; when it refuses two files for one book, the ``chesnutt_..._pg472``
file is left out (570 books) and the lines say so.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from benchmarks.common import GPT4_BOOKS, Timer, line, missing_data

OUTPUTS = GPT4_BOOKS / "data" / "model_output"
PAPER = {"gpt4": 1.37, "chatgpt": 1.34}  # Speak, Memory, section 6.1
CLASHING = "chesnutt_the_house_behind_the_cedars_gutenberg_pg472_"


def _import(project, model: str) -> str:
    """Import one model's folder (whole, or without the second file of book 472); say which."""
    from workbench.errors import UserError
    from workbench.probes.cloze.gpt4books import import_gpt4books

    files = sorted((OUTPUTS / f"{model}_results").glob("*.txt"))
    try:
        import_gpt4books(project, files, model)
        return f"whole folder ({len(files)} files)"
    except UserError:
        kept = [f for f in files if not f.name.startswith(CLASHING)]
        import_gpt4books(project, kept, model)
        return f"{len(kept)} of {len(files)} files: {CLASHING}* left out (a second file for book 472)"


def _number(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else round(float(value), 4)


def run(quick: bool):
    skipped = missing_data("published_errors", OUTPUTS / "gpt4_results",
                           "the published name-cloze outputs of bamman-group/gpt4-books")
    if skipped:
        yield skipped
        return
    from workbench.probes.cloze.error_analysis import error_analyses
    from workbench.project import Project

    draws, permutations = (20, 1_000) if quick else (100, 10_000)
    sizes = [None, 100] if quick else [None, 500, 250, 100, 50]
    models = ["gpt4", "chatgpt"]
    with tempfile.TemporaryDirectory() as folder:
        project = Project.create(Path(folder) / "published.palimpsest")
        try:
            with Timer() as reading:
                imported = {model: _import(project, model) for model in models}
            results = {}
            seconds = {}
            for ties in ("all", "draw"):
                with Timer() as timer:
                    results[ties] = error_analyses(project, models, "gpt4", set_sizes=sizes, ties=ties, draws=draws,
                                                   permutations=permutations, seed=0)
                seconds[ties] = timer.seconds
            with Timer() as own_timer:
                own = error_analyses(project, ["chatgpt"], None, set_sizes=[None], ties="all",
                                     permutations=permutations, seed=0)[0]
        finally:
            project.close()

    spans: dict[str, list[float]] = {m: [] for m in models}
    for ties, analyses in results.items():
        for result in analyses:
            low, high = result.log_odds_p5, result.log_odds_p95
            spans[result.model] += [v for v in (low, high) if math.isfinite(v)]
            size = "all" if result.set_size is None else result.set_size
            yield line(f"o_{result.model}_by_gpt4_{ties}_{size}", result.log_odds, "log-odds",
                       "the paper's o beside ours (a reproduction, not a speed goal)",
                       math.isnan(low) or low <= result.log_odds <= high,
                       model=result.model, grouped_by=result.grouped_by, tie_rule=ties, set_size=size,
                       seen_names=result.seen_names, unseen_names=result.unseen_names,
                       log_odds_p5=_number(low), log_odds_p95=_number(high), p_value=_number(result.p_value),
                       p_value_p95=_number(result.p_value_p95), draws=result.draws, permutations=permutations,
                       errors=result.errors, in_seen=result.in_seen, in_unseen=result.in_unseen,
                       seen_books=result.books["seen"], unseen_books=result.books["unseen"],
                       held_out_books=result.books["held_out"], paper_log_odds=PAPER[result.model],
                       imported=imported[result.model], seconds_for_every_model_and_size=round(seconds[ties], 2),
                       note=result.note)
    for model in models:
        low, high = min(spans[model]), max(spans[model])
        inside = low <= PAPER[model] <= high
        yield line(f"o_{model}_range_over_ties_and_sets", high - low, "log-odds",
                   "the paper's o lies within the range of o over tie draws (5th-95th percentile) and set sizes",
                   inside, model=model, grouped_by="gpt4", lowest=round(low, 4), highest=round(high, 4),
                   paper_log_odds=PAPER[model], set_sizes=["all" if s is None else s for s in sizes], draws=draws)
    yield line("o_chatgpt_by_chatgpt_all_all", own.log_odds, "log-odds",
               "for contrast: ChatGPT grouped by its own accuracy (the paper groups it by GPT-4's)", True,
               model="chatgpt", grouped_by="chatgpt", tie_rule="all", set_size="all", seen_names=own.seen_names,
               unseen_names=own.unseen_names, p_value=_number(own.p_value), seen_books=own.books["seen"],
               unseen_books=own.books["unseen"], paper_log_odds=PAPER["chatgpt"], seconds=round(own_timer.seconds, 2),
               import_seconds=round(reading.seconds, 2), note=own.note)
