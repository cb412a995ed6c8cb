"""Downstream validity in the methods text: run kinds, the passages behind a run, the procedure, statistics."""

from __future__ import annotations

import inspect
import json
from typing import TYPE_CHECKING, Any

from workbench.analysis.intervals import BOOTSTRAP_RESAMPLES, CONFIDENCE, SPREAD_PERCENTILES
from workbench.analysis.permutation import PERMUTATION_RESAMPLES
from workbench.corpus.book_sets import ALL_TIED, DEFAULT_DRAWS, DRAW_TIES, GROUP_FRACTIONS, TIE_RULES
from workbench.export.methods import MethodsSection, RunFacts, Statistic, register_methods
from workbench.probes.validity import NARRATIVE_TIME, YEAR
from workbench.probes.validity.groups import SMALL_GROUP
from workbench.probes.validity.kinds import RUN_KINDS
from workbench.probes.validity.parsers import DEFAULT_SPANS, SPAN_RULES, YEAR_RANGE
from workbench.probes.validity.passages import TRIES_PER_PASSAGE, WORD_TOLERANCE

if TYPE_CHECKING:
    from workbench.project import Project


def run_passages(project: "Project", run: dict) -> list[int]:
    """The passages a run covers: those its config lists (Palimpsest's own runs, and earlier imports), else
    those it holds answers for (an import's config gives their number only: its answers list them)."""
    listed = run["config"].get("passage_ids")
    if listed is not None:
        return [int(i) for i in listed]
    rows = project.db.execute("SELECT DISTINCT item_id FROM responses WHERE run_id = ? ORDER BY item_id", [run["id"]])
    return [int(i) for (i,) in rows.fetchall()]


def validity_facts(project: "Project", run: dict) -> RunFacts:
    """The passages a run asked about: how many, from how many books, sampled or imported, and how."""
    ids = run_passages(project, run)
    books: set[int] = set()
    origins = {"sampled": 0, "imported": 0}
    settings: dict[str, dict[str, Any]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for book_id, origin, record in project.db.execute(
                f"SELECT book_id, origin, settings FROM validity_passages WHERE id IN ({','.join('?' * len(chunk))})",
                chunk):
            books.add(book_id)
            origins[origin] = origins.get(origin, 0) + 1
            if origin == "sampled":
                settings.setdefault(record or "{}", json.loads(record or "{}"))
    facts: dict[str, Any] = {"task": run["config"].get("task"), "passages": len(ids), "books": len(books),
                             "sampled": origins["sampled"], "imported": origins["imported"],
                             "sampling": list(settings.values())}
    if run["config"].get("imported_from"):
        facts["answers_imported_from"] = run["config"]["imported_from"]
    return RunFacts({"validity": facts}, items=len(ids))


def validity_lines(run: dict, _seen: dict[str, int]) -> list[str]:
    facts = run["validity"]
    lines = [f"- **Passages:** {facts['passages']:,} from {facts['books']:,} book{'s' if facts['books'] != 1 else ''}"
             f" ({facts['sampled']:,} sampled, {facts['imported']:,} imported)."]
    for sampling in facts["sampling"]:
        lines.append(f"- **Sampling:** about {sampling.get('words')} words of whole sentences (spaCy "
                     f"`{sampling.get('spacy_model')}`), {sampling.get('per_book')} per book, seed {sampling.get('seed')}.")
    if facts.get("answers_imported_from"):
        lines.append(f"- **Answers imported from:** {facts['answers_imported_from']}.")
    return lines


def validity_paragraph(runs: list[dict]) -> str:
    tasks = {r["kind"] for r in runs}
    low, high = int(WORD_TOLERANCE * 100), YEAR_RANGE
    parts = [
        "Passages for the downstream tasks are runs of whole sentences, sentence boundaries from spaCy, of about the "
        f"chosen length (within {low}%), never crossing a chapter heading and never taken from the front matter. For "
        "each passage a stretch of prose is drawn with probability proportional to its length, then a paragraph of it "
        "in the same way, then a sentence of that paragraph where the passage begins; draws that overlap an earlier "
        f"passage or run out of prose are drawn again (up to {TRIES_PER_PASSAGE} times per passage). The random "
        "generator is seeded with the stated seed and a hash of the book's text. Passages may also be imported with "
        "their year of first publication and a reference narrative time.",
    ]
    if RUN_KINDS[YEAR] in tasks:
        widest = SPAN_RULES[DEFAULT_SPANS]
        parts.append(
            "For the year of first publication, each answer is read for the year it commits to: a four-digit year "
            f"between {high[0]} and {high[1]}, or a year written in words. Hedges (\"c. 1850\", \"around\", "
            "\"probably\", a closing question mark) keep the year, and \"from 1996\" is the year 1996, not an open "
            "range. Where an answer names more than one, a single year is taken before a span and a narrower span "
            "before a wider one; among equals, a year the answer calls the first publication, then one it ties to "
            "publishing, then the first named. Years the answer gives as the story's setting, a birth or death, or "
            "a knowledge cutoff are passed over. A range (\"1850-1860\", midpoint 1855) or a decade (\"the 1850s\", "
            f"taken as 1850 up to 1860, midpoint 1855) at most {widest} years wide is read as its midpoint and "
            "flagged as approximate; a wider span, such as a century (\"the 19th century\", \"the late eighteenth "
            "century\"), counts as missing. This rule for spans is a choice, and every table names the one it used "
            "(`spans`): 'decade' is the default; 'century' also reads spans up to a century wide as their "
            "midpoint; 'missing' counts every span as missing; the missing share, MAE and Spearman's rho under "
            "each rule are reported side by side (`validity-year-spans`). An open bound (\"before 1850\"), a decade without "
            "its century (\"the fifties\"), a refusal, or an answer without a year counts as missing. Missing "
            "answers are reported per group as a share; the absolute error |predicted - true| is averaged over the "
            "books with a prediction.")
    if RUN_KINDS[NARRATIVE_TIME] in tasks:
        parts.append(
            "For narrative time, the first duration in the answer is read (a number or number word and a unit; parts "
            "joined by 'and' are added; a range is read as its midpoint and a bound such as 'over two hours' as the "
            "bound, both flagged; 'a few' and 'several' are read as 3, flagged; a night as 12 hours); in an answer "
            "given in numbered steps, the minutes reported in step 4 are read, as the prompt of Underwood (2023) "
            "asks. Durations are converted to minutes by the same parser the annotation sessions use (a month is a "
            "twelfth of 365.25 days). The reference is the adjudicated annotation where there is one, otherwise the "
            "geometric mean of the annotators' answers, or a time imported with the passage.")
    if tasks & {RUN_KINDS[YEAR], RUN_KINDS[NARRATIVE_TIME]}:
        parts.append(
            "Each analysis reports, per group compared, how many of the answers it counts the parser read (the "
            "parse rate), how many of the values were flagged as approximate, and how many answers the model "
            "declined, and it lists every answer without a value with its book, passage and the reason "
            "(`validity-unparsed`), so that a phrasing read differently in the two groups can be seen.")
    fractions = " or ".join(f"{kind} ({value:.0%})" for kind, value in GROUP_FRACTIONS.items())
    parts.append(
        "Books are grouped by one model's name-cloze accuracy (books with fewer passages than asked for left out): the "
        f"top and bottom {fractions} of the ranking, at least one book each and never more than half the books. Books "
        f"tied at a cut are treated by a stated rule, named with each table: either {TIE_RULES[ALL_TIED]} (the "
        f"default; the groups' sizes are reported), or {TIE_RULES[DRAW_TIES]} (by default {DEFAULT_DRAWS} draws; the "
        f"table shows the draw with the median top - bottom difference and the {SPREAD_PERCENTILES[0]}th and "
        f"{SPREAD_PERCENTILES[1]}th percentile of each group's statistic over the draws). The order of tied books "
        "(their titles, say) never decides which of them are in.")
    return " ".join(parts)


def _default(function: Any, parameter: str) -> Any:
    return inspect.signature(function).parameters[parameter].default


def validity_statistics() -> list[Statistic]:
    from workbench.probes.validity.year import year_table

    level = f"{CONFIDENCE:.0%}"
    seed = _default(year_table, "seed")
    return [
        Statistic(f"Wilson score interval ({level})", "for the share of missing answers in a group",
                  "statsmodels `proportion_confint` (method 'wilson')"),
        Statistic(f"Percentile bootstrap interval ({level}, {BOOTSTRAP_RESAMPLES:,} resamples, seed {seed})",
                  "for a group's mean absolute error of the year, and (groups drawn independently) for the top - "
                  "bottom difference", "scipy `bootstrap` (method 'percentile')"),
        Statistic(f"Permutation test ({PERMUTATION_RESAMPLES:,} random deals unless fewer exist, seed {seed}, "
                  "two-sided)", "for the top - bottom difference in mean absolute error",
                  "scipy `permutation_test` (independent samples)"),
        Statistic("Fisher's exact test", "for the top - bottom difference in the share of missing answers, and in "
                  "the parse rate (when each book has one answer)", "scipy `fisher_exact`"),
        Statistic(f"Wilson score interval ({level}) of the parse rate", "for the share of a group's answers the "
                  "parser read; where books have several answers, a percentile bootstrap over books "
                  f"({BOOTSTRAP_RESAMPLES:,} resamples) instead, since a book's answers are not independent",
                  "statsmodels `proportion_confint`; scipy `bootstrap` (paired)"),
        Statistic("Spearman's rank correlation", "for name-cloze accuracy against the year's absolute error over all "
                  "books, and for predicted against reference narrative time per group", "scipy `spearmanr`"),
        Statistic(f"Percentile bootstrap interval of Spearman's rho ({level}, {BOOTSTRAP_RESAMPLES:,} resamples over "
                  "pairs)", "for each group's rho and, each group drawn on its own, for the top - bottom difference "
                  f"(groups under {SMALL_GROUP} items are flagged)", "scipy `bootstrap` (paired)"),
    ]


register_methods(MethodsSection(
    key="downstream-validity",
    title="Downstream validity",
    kinds=(RUN_KINDS[YEAR], RUN_KINDS[NARRATIVE_TIME]),
    facts=validity_facts,
    lines=validity_lines,
    procedure=validity_paragraph,
    statistics=validity_statistics,
    order=70,
))
