"""The name cloze in the methods text: its run kinds, its passages' facts, its paragraph and statistics."""

from __future__ import annotations

import inspect
import json
import statistics as pystats
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from workbench.analysis.intervals import SPREAD_PERCENTILES
from workbench.corpus.book_sets import ALL_TIED, DEFAULT_DRAWS, TIE_RULES
from workbench.export.methods import MethodsSection, RunFacts, Statistic, number, register_methods, same
from workbench.probes.cloze import error_analysis, score
from workbench.probes.cloze.kinds import CLOZE_KIND, LOGPROB_KIND, MLM_KIND

if TYPE_CHECKING:
    from workbench.project import Project

FAST_MODE = "fast mode (blocks read in a seeded order until enough candidates)"
#: extraction settings that describe the procedure (the word lists are given by size and in full in JSON)
EXTRACTION_KEYS = ("spacy_model", "per_book", "seed", "fast", "min_tokens", "target_tokens", "max_tokens",
                   "block_words", "reject_other_proper_nouns")


def _chunks(ids: Sequence[int], size: int = 500) -> Iterable[list[int]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def run_passages(project: "Project", run: dict) -> list[int]:
    """The passages a run covers: those its config lists, else (an import whose config does not list them:
    its answers do) those it holds answers for."""
    listed = run["config"].get("passage_ids")
    if listed is not None:
        return [int(i) for i in listed]
    rows = project.db.execute("SELECT DISTINCT item_id FROM responses WHERE run_id = ? ORDER BY item_id", [run["id"]])
    return [int(i) for (i,) in rows.fetchall()]


def _same_work(project: "Project", book_ids: list[int]) -> list[dict[str, Any]]:
    """The works that more than one of these books hold results of (the import's ``same_work`` tag): each
    published file was kept as a book of its own."""
    works: dict[str, list[int]] = {}
    for chunk in _chunks(book_ids):
        for book_id, value in project.db.execute(
            "SELECT book_id, value FROM book_tags WHERE key = 'same_work' AND book_id IN"
            f" ({','.join('?' * len(chunk))}) ORDER BY book_id", chunk
        ).fetchall():
            works.setdefault(value, []).append(int(book_id))
    return [{"work": work, "books": ids} for work, ids in sorted(works.items()) if len(ids) > 1]


def cloze_facts(project: "Project", run: dict) -> RunFacts:
    """The books behind a name-cloze run's passages, how the passages were found, and candidate counts."""
    ids = run_passages(project, run)
    books: dict[int, int] = {}
    imported = 0
    for chunk in _chunks(ids):
        for book_id, origin in project.db.execute(
            f"SELECT book_id, origin FROM cloze_passages WHERE id IN ({','.join('?' * len(chunk))})", chunk
        ).fetchall():
            books[book_id] = books.get(book_id, 0) + 1
            imported += origin == "imported"
    facts: dict[str, Any] = {"passages": len(ids), "books": len(books), "imported_passages": imported}
    if run["config"].get("imported_from"):
        facts["imported_from"] = run["config"]["imported_from"]
    if run["config"].get("files"):  # an import's files and their rows (earlier imports named one file)
        facts["imported_files"] = [{"file": f["file"], "rows": f["rows"]} for f in run["config"]["files"]]
    same_work = _same_work(project, sorted(books))
    if same_work:
        facts["same_work"] = same_work
    rows = []
    for chunk in _chunks(sorted(books)):
        rows += project.db.execute(
            "SELECT book_id, candidates, sampled, per_book, settings FROM cloze_extractions"
            f" WHERE book_id IN ({','.join('?' * len(chunk))}) ORDER BY book_id", chunk).fetchall()
    if rows:
        groups: dict[str, dict[str, Any]] = {}
        for _book, _candidates, _sampled, _per_book, settings in rows:
            record = json.loads(settings or "{}")
            described = {key: record.get(key) for key in EXTRACTION_KEYS}
            described["excluded_words"] = sorted(record.get("excluded_words") or [])
            described["titles"] = sorted(record.get("titles") or [])
            described["proper_labels"] = sorted(record.get("proper_labels") or [])
            key = json.dumps(described, sort_keys=True)
            groups.setdefault(key, {**described, "books": 0})["books"] += 1
        candidates = [r[1] for r in rows]
        facts["extraction"] = list(groups.values())
        facts["candidates"] = {"total": int(sum(candidates)), "min": int(min(candidates)),
                               "median": float(pystats.median(candidates)), "max": int(max(candidates)),
                               "books": len(rows)}
        facts["flagged_books"] = sum(1 for r in rows if r[2] < r[3])
    from workbench.probes.cloze.human import people_counts

    people = people_counts(project, ids)
    if people:
        facts["people"] = people
    return RunFacts({"cloze": facts}, items=facts["passages"])


def cloze_lines(run: dict, _seen: dict[str, int]) -> list[str]:
    facts = run["cloze"]
    lines = [f"- **Passages:** {facts['passages']:,} from {facts['books']:,} book{'s' if facts['books'] != 1 else ''}"
             + (f", {facts['imported_passages']:,} of them imported" if facts["imported_passages"] else "")
             + (f" (from {facts['imported_from']})" if facts.get("imported_from") else "") + "."]
    for group in facts.get("extraction", []):
        lines.append(
            f"- **Extraction** ({group['books']} book{'s' if group['books'] != 1 else ''}): spaCy "
            f"`{group['spacy_model']}`; windows of {group['min_tokens']}-{group['max_tokens']} tokens "
            f"({group['target_tokens']} preferred) within blocks of at least {group['block_words']} words; "
            f"other proper nouns {'rejected' if group['reject_other_proper_nouns'] else 'allowed'}; "
            f"{FAST_MODE if group['fast'] else 'whole books read'}; "
            f"up to {group['per_book']} passages per book, seed {group['seed']}; "
            f"{len(group['excluded_words'])} excluded words, {len(group['titles'])} titles allowed before a name "
            "(both lists in the JSON record).")
    for group in facts.get("same_work", []):
        lines.append(
            f"- **Same work, {len(group['books'])} books:** {group['work']} (books "
            f"{', '.join(str(b) for b in group['books'])}): each results file was kept as a book of its own, so "
            "per-book tables and statistics count this work once per file.")
    if "people" in facts:
        p = facts["people"]
        lines.append(
            f"- **People:** {p['annotators']} annotator{'s' if p['annotators'] != 1 else ''} gave {p['answers']:,} "
            f"answer{'s' if p['answers'] != 1 else ''} ({p['dont_know']:,} \"don't know\") to {p['passages']:,} of "
            f"this run's {facts['passages']:,} passages, {p['shared_passages']:,} of them answered by two or more; "
            f"{p['skipped']:,} skip{'s' if p['skipped'] != 1 else ''} left out.")
    if "candidates" in facts:
        c = facts["candidates"]
        flagged = facts["flagged_books"]
        short = ("no book had fewer than the passages asked for" if not flagged else
                 f"{flagged} book{'s' if flagged != 1 else ''} had fewer than the passages asked for (flagged)")
        lines.append(
            f"- **Candidates:** {c['total']:,} in all; per book median {number(c['median'])} (range {c['min']:,}-"
            f"{c['max']:,}); {short}.")
    return lines


def cloze_paragraph(runs: list[dict]) -> str:
    groups = [{k: v for k, v in g.items() if k != "books"}
              for r in runs for g in (r.get("cloze") or {}).get("extraction", [])]
    extraction = same(groups)
    imported = [r for r in runs if (r.get("cloze") or {}).get("imported_from")]
    prompted = [r for r in runs if r["kind"] == CLOZE_KIND and r not in imported]
    parts = []
    if groups:
        if extraction:
            spacy_model = f" ({extraction['spacy_model']})" if extraction.get("spacy_model") else ""
            window = (f"between {extraction['min_tokens']} and {extraction['max_tokens']} tokens long, the one "
                      f"nearest {extraction['target_tokens']} tokens preferred")
            sample = (f"Up to {extraction['per_book']} such passages per book were drawn at random with seed "
                      f"{extraction['seed']}")
        else:
            spacy_model, window = "", "of the length given with each run"
            sample = "A fixed number of such passages per book was drawn at random with a seed (see each run)"
        parts.append(
            f"Passages were taken from the books with spaCy{spacy_model}, which marks sentences and named entities. "
            f"A candidate is a mention of a person by a single-word name, inside a stretch of whole sentences "
            f"{window}, in which no other proper name occurs and the name itself occurs only once; words for "
            "relatives, forms of address and deities never count as names. The name is replaced by [MASK]. "
            f"{sample}; a book with fewer candidates keeps all of them and is flagged.")
    if prompted:
        parts.append("Each model saw every passage once, inside the prompt template quoted with its run, and was "
                     "asked to give the missing name between <name> tags.")
    if imported:
        parts.append("Published passages and answers were imported as they were released (the files are named with "
                     "each run).")
    if prompted or imported:
        parts.append(
            "Scoring removes the <name> tags and the spaces around the answer; the answer is correct when the rest "
            "equals the true name, ignoring case. A book's accuracy is its correct answers divided by the passages "
            "the model answered, with a 95% Wilson interval; calls that failed are reported separately and are "
            "not part of that denominator.")
    people = [(r.get("cloze") or {}).get("people") for r in runs]
    people = [p for p in people if p]
    if people:
        parts.append(people_paragraph(people))
    kinds = {r["kind"] for r in runs}
    if MLM_KIND in kinds:
        parts.append(
            "As a baseline, a masked language model read each passage with no instruction, [MASK] written as its "
            "own mask token; its single most probable filler was scored by the same rule.")
    if LOGPROB_KIND in kinds:
        parts.append(
            "For local models, the log-probability of the expected answer (the true name between the tags) right "
            "after the prompt was also computed, as a natural logarithm summed over its tokens.")
    return " ".join(parts)


def people_paragraph(people: list[dict[str, Any]]) -> str:
    """How people's answers were gathered and scored, with their counts (those of the run that holds the most
    answers; the runs' own lines give theirs)."""
    from workbench.probes.cloze.human import MAJORITY_RULE

    p = max(people, key=lambda c: c["answers"])
    differ = "" if same(people) else " (for the run with the most; each run's line gives its own)"
    return (
        f"People did the same task as the models on a subset of the passages: {p['annotators']} "
        f"annotator{'s' if p['annotators'] != 1 else ''} gave {p['answers']:,} answer{'s' if p['answers'] != 1 else ''} "
        f"to {p['passages']:,} passages of {p['books']:,} book{'s' if p['books'] != 1 else ''}{differ}, shown in a "
        "blinded annotation task (no title, author or year) in an order of their own, and typed the hidden name or "
        f"chose \"don't know\". Their answers were scored by the same function as the models' answers; \"don't "
        f"know\" ({p['dont_know']:,} answer{'s' if p['dont_know'] != 1 else ''}) counts as wrong, as a model's empty answer does, and skipped passages "
        f"({p['skipped']:,} skips) are left out of the denominator, as failed model calls are. "
        f"{p['shared_passages']:,} passages were answered by two or more annotators. Where several annotators' "
        f"answers are pooled, the unit is the passage: {MAJORITY_RULE}, and the accuracy with even splits counted "
        "right is reported beside it; counting every answer as a unit (an option) is reported as treating answers "
        "to the same passage as independent, which they are not. People, models and the most-frequent-name "
        "baseline are compared on the passages people answered, each with a 95% Wilson interval over passages. "
        "Agreement between annotators is measured on whether each got the name right (as scored), on the passages "
        "answered by two or more: Krippendorff's alpha (nominal; the krippendorff package) with a 95% percentile "
        "bootstrap interval over passages, and the raw share of those passages on which all agree.")


def _default(function: Any, parameter: str) -> Any:
    """The default the scoring code uses for ``parameter`` (so the statistics below follow the code)."""
    return inspect.signature(function).parameters[parameter].default


def cloze_statistics() -> list[Statistic]:
    level = f"{1 - _default(score.accuracy_interval, 'alpha'):.0%}"
    resamples = _default(score.bootstrap_interval, "resamples")
    return [
        Statistic(f"Wilson score interval ({level})",
                  "for each book's accuracy, the correct answers out of the passages answered",
                  "statsmodels `proportion_confint` (method 'wilson')"),
        Statistic(f"Percentile bootstrap interval ({level}, {resamples:,} resamples, fixed seed)",
                  "for a book's accuracy where it is chosen instead of the Wilson interval",
                  "scipy `bootstrap` (method 'percentile')"),
        Statistic(f"t interval over books ({level}, clipped to 0-1)",
                  "for the mean per-book accuracy of the books that share a tag value (genre, decade, source ...)",
                  "statsmodels `DescrStatsW.tconfint_mean`"),
        Statistic("Wilcoxon signed-rank test",
                  "for comparing two models on their per-book accuracies, paired by book",
                  "scipy `wilcoxon`"),
        Statistic("McNemar's exact test",
                  "for comparing two models on the passages both of them answered",
                  "statsmodels `mcnemar(exact=True)`"),
        Statistic("Spearman's rank correlation",
                  "for per-book accuracy against the year of publication (rho with its p-value)",
                  "scipy `spearmanr`"),
        Statistic(f"Randomization test of the error analysis ({error_analysis.DEFAULT_PERMUTATIONS:,} seeded deals, one-sided)",
                  "for the log-odds o that a wrong answer on a held-out book names a character of a memorized (top "
                  "decile) rather than an unmemorized (bottom decile) book. " + error_analysis_choices()
                  + " The test deals the pooled names of S and U into sets of their sizes at random "
                  "(p = (1 + deals at least as extreme) / (1 + deals))",
                  "numpy `multivariate_hypergeometric` (`workbench.probes.cloze.error_analysis`)"),
        Statistic(f"Spread over tie draws ({DEFAULT_DRAWS} seeded draws unless stated, "
                  f"{SPREAD_PERCENTILES[0]}th-{SPREAD_PERCENTILES[1]}th percentile, inverted CDF)",
                  "for o and its p-value when books tied at a cut and names tied on PMI are drawn at random: the "
                  "draw with the median o is reported with these percentiles of o (log_odds_p5, log_odds_p95) and "
                  f"of p (p_value_p95) over all draws; each draw is tested with {error_analysis.DRAW_PERMUTATIONS:,} deals "
                  "for the spread of p, the reported draw with the full number",
                  "numpy `percentile` (method 'inverted_cdf')"),
    ]


def error_analysis_choices() -> str:
    """The choices behind every error-analysis result, in words (from the code's defaults)."""
    sizes = ", ".join("as many as both sides allow" if k is None else f"{k}" for k in error_analysis.DEFAULT_SET_SIZES)
    return (
        "Books are ranked by the name-cloze accuracy of one grouping model, the same for every model compared and "
        "named with each result (by default the first model analysed). Books tied at a cut either all go in their "
        f"group, so that a group may hold more than a decile (the default; {TIE_RULES[ALL_TIED]}), or are drawn at "
        "random over seeded draws; the group sizes are reported. The names of S and U are those with the highest "
        "positive PMI with a book of their group, none in both; names tied on PMI at the set size follow the same "
        "rule: all in (S and U may then differ in size, and o compares errors per name: "
        "log((in S / |S|) / (in U / |U|))) or drawn. The analysis is reported for several set sizes (by default "
        f"{sizes} names per set), one row each, so that the spread over set constructions shows beside the spread "
        "over tie draws.")


register_methods(MethodsSection(
    key="name-cloze",
    title="Name cloze",
    kinds=(CLOZE_KIND, LOGPROB_KIND, MLM_KIND),
    facts=cloze_facts,
    lines=cloze_lines,
    procedure=cloze_paragraph,
    statistics=cloze_statistics,
    order=10,
))
