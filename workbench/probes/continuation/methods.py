"""The continuation probe in the methods text: its run kind, each run's passage setting, its procedure and its
statistics."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from workbench.export.methods import MethodsSection, RunFacts, Statistic, register_methods
from workbench.probes.continuation.kinds import CHAT, CONTINUATION_KIND
from workbench.probes.continuation.passages import CHARS_PER_TOKEN, MIN_WINDOW
from workbench.probes.continuation.run import CHAT_PROMPT

if TYPE_CHECKING:
    from workbench.project import Project


def continuation_facts(project: "Project", run: dict) -> RunFacts:
    config = run["config"]
    setting = [config.get(k) for k in ("tokenizer", "seed", "per_book", "prefix_tokens", "continue_tokens")]
    passages, books = project.db.execute(
        "SELECT COUNT(*), COUNT(DISTINCT book_id) FROM continuation_passages WHERE tokenizer = ? AND seed = ? AND"
        " per_book = ? AND prefix_tokens = ? AND continue_tokens = ? AND book_id IN (SELECT value FROM json_each(?))",
        [*setting, json.dumps(config.get("book_ids") or [])]).fetchone()
    facts = {"tokenizer": config.get("tokenizer"), "seed": config.get("seed"), "per_book": config.get("per_book"),
             "prefix_tokens": config.get("prefix_tokens"), "continue_tokens": config.get("continue_tokens"),
             "prompt_form": config.get("prompt_form"), "books": books, "passages": passages,
             "books_asked": len(config.get("book_ids") or [])}
    return RunFacts({"continuation": facts}, items=passages)


def continuation_lines(run: dict, _seen: dict[str, int]) -> list[str]:
    f = run["continuation"]
    unit = "words" if f["tokenizer"] == "words" else "tokens of the model's own tokenizer"
    short = f["books_asked"] - f["books"]
    return [f"- **Passages:** {f['passages']:,} from {f['books']:,} books (up to {f['per_book']} per book, seed "
            f"{f['seed']}" + (f"; {short} book(s) too short for any" if short else "") + f"); prefix {f['prefix_tokens']} "
            f"and continuation {f['continue_tokens']} {unit} (`{f['tokenizer']}`).",
            "- **Prompt:** " + ("the chat prompt quoted in the procedure, around the prefix." if f["prompt_form"] == CHAT
                                else "the prefix alone, as text to continue.")]


def continuation_paragraph(runs: list[dict]) -> str:
    forms = {(r.get("continuation") or {}).get("prompt_form") for r in runs}
    words = any((r.get("continuation") or {}).get("tokenizer") == "words" for r in runs)
    parts = [
        "Verbatim continuation follows Carlini et al. (2023). Each book's text was cut into as many equal stretches "
        "as passages were wanted; in each, a start was drawn at random with a fixed seed and moved to the next word, "
        "so passages are spread over the book and never overlap (a stretch must hold about "
        f"{CHARS_PER_TOKEN} characters per token of prefix and continuation, at least {MIN_WINDOW}; shorter books "
        "give fewer passages). From the start, the prefix is the next K tokens and the true continuation the N after "
        "them. Local models were given the prefix as bare text and decoded greedily (temperature 0) for N tokens of "
        "their own tokenizer, several passages at a time."]
    if words:
        parts.append("For models behind an API, whose tokenizer is not known here, prefix and continuation were "
                     "counted in words (runs of characters between white space), and the answer was cut into words "
                     "the same way; words are compared exactly, case and punctuation included.")
    if CHAT in forms:
        parts.append("Chat models were asked, in a single user message, with this prompt of our own: \""
                     + CHAT_PROMPT.replace("\n\n{prefix}", " [prefix]").replace("{words}", "N") + "\"; models served as "
                     "plain completions got the prefix alone.")
    parts.append(
        "The answer, cut to N tokens, is scored against the true continuation: the number of tokens right from the "
        "start (exact-match prefix), the longest run of tokens both share anywhere, and an edit similarity (1 minus "
        "the token-level Levenshtein distance over the longer length). A passage is extractable when at least its "
        "first m tokens are right (m = N unless stated: the whole continuation word for word). A book's extractable "
        "share is its extractable passages over the passages answered, with a 95% Wilson interval; failed calls are "
        "reported apart and are not in the denominator. The baseline is the same share pooled over the passages of "
        "books the model cannot have seen (tagged member=no, or published after its training cutoff).")
    return " ".join(parts)


def continuation_statistics() -> list[Statistic]:
    return [
        Statistic("Wilson score interval (95%)", "for each book's extractable share and the unseen books' pooled "
                  "share, the passage as the trial", "statsmodels `proportion_confint` (method 'wilson')"),
        Statistic("Fisher's exact test, one-sided", "for whether a book's extractable share exceeds the unseen books' "
                  "(a 2x2 table of passages; an unseen book against the other unseen books only)",
                  "scipy `fisher_exact(alternative='greater')`"),
        Statistic("Holm's adjustment", "for the books' p-values taken together (a book is above the baseline when "
                  "its adjusted p is below 0.05)", "statsmodels `multipletests(method='holm')`"),
        Statistic("Longest common substring of tokens", "for each passage's longest shared run",
                  "Python `difflib.SequenceMatcher.find_longest_match` (no junk heuristic)"),
    ]


register_methods(MethodsSection(
    key="continuation",
    title="Verbatim continuation",
    kinds=(CONTINUATION_KIND,),
    facts=continuation_facts,
    lines=continuation_lines,
    procedure=continuation_paragraph,
    statistics=continuation_statistics,
    order=15,
))
