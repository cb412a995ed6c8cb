"""The reading probe in the methods text: its run kinds, the facts of its runs, its paragraph and statistics."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from workbench.export.methods import MethodsSection, RunFacts, Statistic, number, register_methods, same
from workbench.probes.reading import names, results
from workbench.probes.reading.questions import RECONSTRUCTION_KINDS, get_question_set, missing_kinds, question_counts
from workbench.probes.reading.run import ANSWER_RUN
from workbench.probes.reading.summaries import FALSE_RUN, SUMMARY_RUN
from workbench.summaries.runs import RETRY_TEMPERATURE

if TYPE_CHECKING:
    from workbench.project import Project


def _book(project: "Project", book_id: int | None) -> dict[str, Any] | None:
    if book_id is None:
        return None
    row = project.db.execute("SELECT id, title, author, words FROM books WHERE id = ?", [book_id]).fetchone()
    return None if row is None else {"id": row[0], "title": row[1], "author": row[2], "words": row[3]}


def _scene_set(project: "Project", set_id: int | None) -> dict[str, Any] | None:
    if set_id is None:
        return None
    row = project.db.execute("SELECT target_words, scenes, words FROM reading_scene_sets WHERE id = ?",
                             [set_id]).fetchone()
    return None if row is None else {"id": set_id, "target_words": row[0], "scenes": row[1], "words": row[2]}


def _substitution(project: "Project", book_id: int | None) -> dict[str, Any] | None:
    row = project.db.execute("SELECT seed, pipeline FROM reading_substitutions WHERE book_id = ?", [book_id]).fetchone()
    if row is None:
        return None
    words = project.db.execute("SELECT COUNT(*) FROM reading_names WHERE book_id = ?", [book_id]).fetchone()[0]
    return {"seed": row[0], "spacy": row[1], "name_words": words,
            "names_file": project.get_setting(names.NAMES_SETTING) or "shipped list"}


def reading_facts(project: "Project", run: dict) -> RunFacts:
    """For summary runs the book, its scenes and the level; for answer runs the question set."""
    config = run["config"]
    facts: dict[str, Any] = {"book": _book(project, config.get("book_id"))}
    if run["kind"] in (SUMMARY_RUN, FALSE_RUN):
        facts.update(scenes=_scene_set(project, config.get("scene_set")), level=config.get("level", 0),
                     group=config.get("group"), max_attempts=config.get("max_attempts"),
                     retry_temperature=RETRY_TEMPERATURE, imported_from=config.get("file"))
        return RunFacts({"reading": facts})
    question_set = get_question_set(project, config["question_set"])
    counts = question_counts(project, question_set.id)
    facts.update(
        variant=question_set.variant, summaries_by=question_set.summaries, origin=question_set.origin,
        settings={k: question_set.settings.get(k) for k in ("every", "options", "seed", "kinds", "none_share",
                                                             "reconstruction", "max_level")},
        scenes=_scene_set(project, question_set.scene_set_id),
        questions=counts.to_dict("records"), context_words=config.get("context_words"),
        templates=config.get("templates"),
        substitution=_substitution(project, question_set.book_id) if question_set.variant == "substituted" else None,
    )
    return RunFacts({"reading": facts}, items=int(counts["questions"].sum()) if len(counts) else 0)


def _known(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _book_line(facts: dict) -> str:
    book = facts.get("book")
    name = f"*{book['title']}*" + (f" by {book['author']}" if book.get("author") else "") if book else "no library book"
    sc = facts.get("scenes")
    cut = (f", cut into {sc['scenes']:,} scenes of about {sc['target_words']:,} words ({sc['words']:,} words in all)"
           if sc else "")
    return f"- **Book:** {name}{cut}."


def reading_lines(record: dict, _seen: dict[str, int]) -> list[str]:
    facts = record.get("reading") or {}
    lines = [_book_line(facts)]
    if record["kind"] in (SUMMARY_RUN, FALSE_RUN):
        level = facts.get("level") or 0
        what = "each scene" if level == 0 else f"level {level}: every {facts.get('group')} summaries of the level below"
        if record["kind"] == FALSE_RUN:
            what = "each summary of " + what.replace("each scene", "a scene")
        source = f" (imported from {facts['imported_from']})" if facts.get("imported_from") else ""
        label = "False versions of" if record["kind"] == FALSE_RUN else "Summarized"
        lines.append(f"- **{label}:** {what}{source}.")
        return lines
    settings = facts.get("settings") or {}
    lines.append(
        f"- **Questions** on the {facts.get('variant')} text, from the summaries of {facts.get('summaries_by') or '-'}: "
        f"a checkpoint after every {settings.get('every')} scenes, {settings.get('options')} choices per question "
        f"('None of the above' included), wrong options of the kinds {', '.join(settings.get('kinds') or [])}, "
        f"{settings.get('reconstruction')} scenes with reconstruction questions, seed {settings.get('seed')}.")
    for row in facts.get("questions") or []:
        if row["kind"] in RECONSTRUCTION_KINDS:
            levels = row.get("levels")
            above = (f" (summary levels {levels}: 0 the scenes, 1 and up hierarchical summaries)"
                     if isinstance(levels, str) and levels != "0" else "")
            lines.append(f"  - {row['kind']}: {row['questions']:,} questions{above}.")
        elif _known(row.get("retention_median")):
            lines.append(f"  - {row['kind']}: {row['questions']:,} questions ({row['none_of_the_above']} with 'None "
                         f"of the above' as the answer, at the demand of the whole book read so far); retention "
                         f"demand median {number(row['retention_median'])} "
                         f"words (quartiles {number(row['retention_q1'])}-{number(row['retention_q3'])}, range "
                         f"{number(row['retention_min'])}-{number(row['retention_max'])}).")
        else:
            lines.append(f"  - {row['kind']}: {row['questions']:,} questions, all with 'None of the above' as the "
                         "answer.")
    built = [row["kind"] for row in facts.get("questions") or []]
    if settings.get("options"):
        lines += [f"  - {note}" for note in missing_kinds(settings.get("kinds") or [], built, settings["options"])]
    words = facts.get("context_words")
    lines.append("- **Book text given:** " + (f"at most the last {words:,} words before each checkpoint." if words
                                              else "everything before the checkpoint that fits the model (where "
                                                   "its context is known; else all of it)."))
    sub = facts.get("substitution")
    if sub:
        lines.append(f"- **Names substituted:** {sub['name_words']:,} name words replaced (seed {sub['seed']}, "
                     f"spaCy `{sub['spacy']}`, names from the {sub['names_file']}).")
    return lines


def reading_paragraph(records: list[dict]) -> str:
    answers = [r for r in records if r["kind"] == ANSWER_RUN]
    summaries = [r for r in records if r["kind"] in (SUMMARY_RUN, FALSE_RUN)]
    attempts = same((r.get("reading") or {}).get("max_attempts") for r in summaries if not r["imported"])
    parts = [
        "Reading questions follow NarrativeXL (Moskvichev and Mai, 2023). Each book was cut, whole and in order, into "
        "scenes of about a set number of words, ending at paragraph boundaries (or between the sentences of a "
        "paragraph longer than a scene), so that every word belongs to exactly one scene and every question knows "
        "how many words lie between the scene it is about and the point where it is asked (its retention demand).",
    ]
    made = [r for r in summaries if not r["imported"]]
    if made:
        retry = (f" An unusable answer was asked again (at most {attempts} attempts, later ones at a temperature of "
                 f"at least {number(RETRY_TEMPERATURE)} with another seed)." if attempts else "")
        parts.append("A model summarized every scene and then wrote a false version of each summary with the same "
                     "characters and setting but other events." + retry)
    if len(made) < len(summaries):
        parts.append("Scene summaries and false summaries made elsewhere were imported from files as they were.")
    if answers:
        parts.append(
            "At checkpoints through the book a read-along question asked which of several scene summaries told "
            "something from the text read so far: the true option was the summary of a scene drawn at random from "
            "those read, the wrong ones, by the question's kind, summaries of scenes not yet read, false summaries "
            "of scenes read (the true scene's own among them), or summaries of other books' scenes, one from each "
            "of as many other books drawn at random (their character names replaced by the book's own where both "
            "were known). 'None of the above' was always the last choice and the answer in a share of the "
            "questions; as ruling out every option asks for everything read, such a question's retention demand "
            "is that of the first scene, as in NarrativeXL. A kind of question was asked at a checkpoint only where "
            "there were wrong options enough for a 'None of the above' question, so that its share does not "
            "depend on the place in the book. Options were drawn and shuffled with a seed. The model saw the book "
            "up to the checkpoint (cut from the start to the stated number of words, or to what fits the model) "
            "and the numbered choices; the first number in its reply that names a choice was taken as its answer, "
            "and a reply naming none counted as wrong (reported as unparsed). Before any question was sent, every "
            "prompt was counted with the model's own tokenizer (or its server's, or estimated on the safe side) "
            "against what the model reads at once, where that was known; a run some of whose prompts could not "
            "fit was refused, not sent. Reconstruction questions gave a false summary to be corrected, once alone "
            "and once with the scene's text; with hierarchical summaries the same was asked of summaries of longer "
            "stretches of the book (with the text of the stretch), level by level.")
        parts.append(
            "Where this differs from NarrativeXL's code: retention demand is counted in words, not scenes; each "
            "summary has one false version, so false-summary options are drawn evenly from the scenes read, where "
            "NarrativeXL's several false versions of the first scenes make those likelier; NarrativeXL asks after "
            "every scene, here after every stated number of scenes, and it may ask a kind of question near the end "
            "of a book only when its answer is a summary; it builds a hierarchical question on every summary above "
            "the scenes and shows the whole book, here on a stated number per level, drawn with the seed, with the "
            "stretch the summary covers.")
        if any((r.get("reading") or {}).get("variant") == "substituted" for r in answers):
            parts.append(
                "As a control for knowledge of the book from training, questions were also asked on a text whose "
                "character names were replaced: spaCy's entity recogniser found the name words, each received a "
                "replacement drawn with a seed from a list of names (by gender where the book's use showed one), "
                "and the same replacements were made in the book and in every summary.")
    return " ".join(parts)


def reading_statistics() -> list[Statistic]:
    return [
        Statistic("Accuracy with a Wilson score interval (95%)",
                  "for read-along questions per retention-demand bin (the forgetting curve, 'None of the above' "
                  "questions included at their demand), text variant and kind; chance, drawn bin by bin, is what "
                  "guessing earns on the questions each point counts: the mean of 1 / choices over them",
                  "`workbench.analysis.intervals.wilson_interval` (statsmodels `proportion_confint`, method 'wilson')"),
        Statistic("Logistic regression of right answers on ln(1 + retention demand in words), with a 95% Wald "
                  "interval and p-value for the slope",
                  f"for whether accuracy falls with distance (per text variant; at least {results.MIN_FOR_SLOPE} "
                  "answers)", "statsmodels `Logit`"),
        Statistic("ROUGE-1, ROUGE-2 and ROUGE-L F1 (Porter stemming)",
                  "for corrected summaries and, as the baseline, the false summaries, each against the true summary",
                  "the `rouge-score` package"),
        Statistic("Mean with a 95% percentile bootstrap interval",
                  f"for reconstruction scores and their gain over the baseline (paired by question; "
                  f"{results.BOOTSTRAP_DRAWS:,} draws, seed 0)",
                  "`workbench.analysis.intervals.bootstrap_interval` (scipy `bootstrap`)"),
    ]


register_methods(MethodsSection(
    key="reading",
    title="Reading questions (NarrativeXL)",
    kinds=(SUMMARY_RUN, FALSE_RUN, ANSWER_RUN),
    facts=reading_facts,
    lines=reading_lines,
    procedure=reading_paragraph,
    statistics=reading_statistics,
    order=60,
))
