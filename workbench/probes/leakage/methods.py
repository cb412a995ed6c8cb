"""Leakage and membership evidence in the methods text: run kinds, facts, paragraph and statistics."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.export.methods import MethodsSection, RunFacts, RunKind, Statistic, register_methods, same
from workbench.probes.leakage import decop, frequency, membership, overlap, surprisal
from workbench.probes.leakage.statistics import CONFIDENCE, RESAMPLES

if TYPE_CHECKING:
    from workbench.project import Project

LEVEL = f"{CONFIDENCE:.0%}"


def _corpus(project: "Project", run: dict) -> dict[str, Any]:
    from workbench.probes.leakage.corpora import list_corpora

    name = run["config"].get("corpus")
    found = next((c for c in list_corpora(project) if c.name == name), None)
    if found is None:
        return {"name": name, "removed": True}
    facts = {"name": found.name, "kind": found.kind, "tokenizer": found.tokenizer, "documents": found.documents,
             "tokens": found.tokens, "words": found.words, "engine": found.engine}
    if found.kind == "remote":
        facts.update(url=found.address, index=found.remote_index)
    else:
        from workbench.errors import UserError
        from workbench.probes.leakage.index_build import IndexInfo

        try:  # documents larger than one part of the index are cut there (index_build): say where a match cannot run
            cuts = IndexInfo.read(found.folder(project)).cuts
        except UserError:
            cuts = 0
        if cuts:
            facts["cuts"] = cuts
    return facts


def _index_only(_run: dict) -> str:
    return "none: no model is involved, the answers are counts from the n-gram index"


def _read_only(_run: dict) -> str:
    return "none: the model read each text once, and the log-probability of every token was kept"


def leakage_facts(project: "Project", run: dict) -> RunFacts:
    config, params = run["config"], run["params"]
    passages = len(config.get("passage_ids") or [])
    facts: dict[str, Any] = {"passages": passages}
    if run["kind"] in (overlap.KIND, frequency.KIND):
        facts["corpus"] = _corpus(project, run)
    if run["kind"] == overlap.KIND:
        facts["max_order"] = params.get("max_order")
    elif run["kind"] == frequency.KIND:
        facts.update(per_book=params.get("per_book"), gram=params.get("gram"), seed=params.get("seed"))
    elif run["kind"] == decop.QUIZ_KIND:
        from workbench.models.registry import get_model

        try:
            paraphraser = get_model(project, int(config["paraphraser_id"])).label
        except Exception:  # the model was removed since
            paraphraser = f"model {config.get('paraphraser_id')}"
        facts.update(orders=config.get("orders"), seed=config.get("seed"), paraphraser=paraphraser)
    items = passages * int(config.get("orders") or 1) if run["kind"] == decop.QUIZ_KIND else passages
    return RunFacts({"leakage": facts}, items=items)


def leakage_lines(run: dict, _seen: dict[str, int]) -> list[str]:
    facts = run.get("leakage") or {}
    lines = [f"- **Passages:** {facts.get('passages', 0):,}."]
    corpus = facts.get("corpus")
    if corpus:
        if corpus.get("removed"):
            lines.append(f"- **Reference corpus:** '{corpus['name']}' (no longer in the project).")
        elif corpus["kind"] == "remote":
            lines.append(f"- **Reference corpus:** '{corpus['name']}', the infini-gram index `{corpus['index']}` "
                         f"at {corpus['url']}" + (f" ({corpus['tokens']:,} tokens)" if corpus.get("tokens") else "")
                         + ", in that index's own tokenizer.")
        else:
            lines.append(f"- **Reference corpus:** '{corpus['name']}', {corpus['documents']:,} documents, "
                         f"{corpus['tokens']:,} tokens ({corpus['words']:,} white-space words), tokenizer "
                         f"`{corpus['tokenizer']}`, indexed with {corpus['engine']}"
                         + (f"; documents longer than one part of the index (tens of millions of tokens) were cut into "
                            f"parts, and a match cannot run across the {corpus['cuts']:,} places where they were cut"
                            if corpus.get("cuts") else "") + ".")
    if facts.get("gram"):
        lines.append(f"- **Sample:** up to {facts['per_book']} passages per book, one run of {facts['gram']} words "
                     f"from each, seed {facts['seed']}.")
    if facts.get("orders"):
        lines.append(f"- **Questions:** {facts['orders']} option orders per passage (seed {facts['seed']}); "
                     f"paraphrases by {facts['paraphraser']}.")
    return lines


def leakage_paragraph(runs: list[dict]) -> str:
    kinds = {r["kind"] for r in runs}
    parts = []
    if kinds & {overlap.KIND, frequency.KIND}:
        corpora = [r["leakage"].get("corpus") or {} for r in runs if r["kind"] in (overlap.KIND, frequency.KIND)]
        local = any(c.get("kind") == "local" for c in corpora)
        parts.append(
            "Reference corpora were indexed with the infini-gram suffix-array engine"
            + (" (local indexes built from text files; word-level tokens are runs of letters and digits or single "
               "other characters, case kept, typographic quotes made straight)" if local else "")
            + "; remote corpora were queried through the public infini-gram API in the tokenizer of the index.")
    if overlap.KIND in kinds:
        order = same(r["leakage"].get("max_order") for r in runs if r["kind"] == overlap.KIND) or overlap.MAX_ORDER
        parts.append(
            "For every passage, the length of the longest run of its tokens ending at each token that also occurs in "
            "the corpus was found, and from these the longest shared sequence, its position, and how often it "
            "occurs (among equally long sequences, the most frequent). Its probability was estimated with an "
            f"interpolated {order}-gram model counted from the same index, with additive (Dirichlet) smoothing of "
            f"weight {overlap.PRIOR:g} towards the next lower order and add-one smoothing of the unigrams; the chance "
            "that a sequence of that probability occurs at least once in a corpus of n words is 1 - (1 - p)^n, "
            f"and overlaps below {overlap.CHANCE_LEVEL} are marked as unlikely to be chance (for remote corpora n "
            "is their size in tokens).")
    if frequency.KIND in kinds:
        parts.append(
            "Book frequency: from each book's name-cloze passages (names restored) a seeded sample was drawn, one "
            "run of consecutive words taken from each at a seeded position, and its occurrences in the corpus "
            "counted; a book's frequency is the mean of its counts. It was correlated with name-cloze accuracy "
            f"over all books and within groups (by default books published before {frequency.YEAR_SPLIT} and from "
            f"{frequency.YEAR_SPLIT} on).")
    if membership.KIND in kinds:
        parts.append(
            "Membership scores: each passage was read once by the model (batched), and from the log-probability "
            "of each token given the preceding ones the following were computed: perplexity; the log-perplexity "
            "divided by the zlib-compressed length in bytes; Min-K% (the mean log-probability of the k% least "
            f"likely tokens, k = {membership.K_PERCENT:g} unless stated); Min-K%++ (the same for log-probabilities "
            "standardised by the mean and standard deviation of the model's next-token distribution); and, with a "
            "reference model, the ratio of the two models' log-perplexities. Passages are scored as the tokenizer "
            "encodes them, so the first token is scored only where the tokenizer adds a start token. Scores were "
            "averaged per book; where books were tagged as known members or non-members, each score's ROC AUC over "
            "books was computed.")
    if surprisal.KIND in kinds:
        parts.append(
            "Word surprisal: the model read the text after its start-of-text token (texts longer than its context "
            "in windows overlapping by half); a white-space word's surprisal in bits is minus the base-2 logarithm "
            "of the product of its tokens' probabilities, corrected for tokenizers whose tokens carry their leading "
            "space by multiplying with the probability that the next token begins a new word and dividing by the "
            "same probability before the word (Pimentel and Meister 2024; Oh and Schuler 2024).")
    if kinds & {decop.PARAPHRASE_KIND, decop.QUIZ_KIND}:
        parts.append(
            f"DE-COP test: a model wrote {decop.PARAPHRASES} paraphrases of each passage (stored and reviewable; "
            "unusable ones regenerated); the tested model was shown the verbatim passage and the three paraphrases "
            "as options A-D in balanced orders (each position of the verbatim passage equally often) and asked "
            "which was the published text. The first standalone letter A-D of the answer is taken; answers with "
            "none are counted as unanswered and left out of the accuracy, which is compared with chance (25%).")
    return " ".join(parts)


def leakage_statistics() -> list[Statistic]:
    return [
        Statistic("Spearman's rho with its p-value and a percentile bootstrap interval",
                  f"for book frequency against name-cloze accuracy ({LEVEL}, {RESAMPLES:,} resamples of books, seed 0)",
                  "scipy `spearmanr` and `bootstrap`"),
        Statistic("ROC AUC (Mann-Whitney U divided by the product of the group sizes, ties counted one half) with a "
                  "percentile bootstrap interval",
                  f"for how well each membership score separates member from non-member books ({LEVEL}, "
                  f"{RESAMPLES:,} resamples drawn within each group, seed 0)",
                  "scipy `mannwhitneyu` and `bootstrap`"),
        Statistic(f"Exact two-sided binomial test against 25% and a Wilson score interval ({LEVEL})",
                  "for DE-COP accuracy per book (questions on one passage in different orders are not independent, "
                  "so the test is optimistic)",
                  "scipy `binomtest`, statsmodels `proportion_confint` (method 'wilson')"),
    ]


register_methods(MethodsSection(
    key="leakage",
    title="Leakage and membership evidence",
    kinds=(
        RunKind(overlap.KIND, "overlap with a reference corpus", "passage", generation=_index_only),
        RunKind(frequency.KIND, "n-gram counts per book in a reference corpus", "passage", generation=_index_only),
        RunKind(membership.KIND, "token log-probabilities for membership scores", "passage", generation=_read_only),
        RunKind(surprisal.KIND, "word-level surprisal", "text", generation=_read_only),
        RunKind(decop.PARAPHRASE_KIND, "DE-COP paraphrases", "passage"),
        RunKind(decop.QUIZ_KIND, "DE-COP questions", "passage in one option order"),
    ),
    facts=leakage_facts,
    lines=leakage_lines,
    procedure=leakage_paragraph,
    statistics=leakage_statistics,
    order=60,
))
