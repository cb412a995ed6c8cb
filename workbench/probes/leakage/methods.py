"""Leakage and membership evidence in the methods text: run kinds, facts, paragraph and statistics."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.export.methods import MethodsSection, RunFacts, Statistic, register_methods, same
from workbench.probes.leakage import decop, frequency, kinds, membership, overlap, surprisal
from workbench.probes.leakage.statistics import CONFIDENCE, RESAMPLES

if TYPE_CHECKING:
    from workbench.project import Project

LEVEL = f"{CONFIDENCE:.0%}"


def _corpus(project: "Project", run: dict, key: str = "corpus") -> dict[str, Any]:
    from workbench.probes.leakage.corpora import list_corpora

    name = run["config"].get(key)
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


def leakage_facts(project: "Project", run: dict) -> RunFacts:
    config, params = run["config"], run["params"]
    passages = len(config.get("passage_ids") or [])
    facts: dict[str, Any] = {"passages": passages}
    if run["kind"] in (overlap.KIND, frequency.KIND, overlap.BACKGROUND_KIND):
        facts["corpus"] = _corpus(project, run)
    if run["kind"] == overlap.KIND:
        facts["max_order"] = params.get("max_order")
        facts["chance_model"] = overlap.chance_model(None, params.get("max_order") or overlap.MAX_ORDER).describe()
    elif run["kind"] == overlap.BACKGROUND_KIND:
        facts["background"] = _corpus(project, run, "background")
        facts["max_order"] = params.get("max_order")
        facts["chance_model"] = overlap.chance_model(config.get("background"),
                                                     params.get("max_order") or overlap.MAX_ORDER).describe()
    elif run["kind"] == frequency.KIND:
        facts.update(per_book=params.get("per_book"), gram=params.get("gram"), seed=params.get("seed"))
    elif run["kind"] == decop.QUIZ_KIND:
        from workbench.models.catalog import get_model

        try:
            paraphraser = get_model(project, int(config["paraphraser_id"])).label
        except Exception:  # the model was removed since
            paraphraser = f"model {config.get('paraphraser_id')}"
        facts.update(orders=config.get("orders"), seed=config.get("seed"), paraphraser=paraphraser,
                     paraphraser_tested=int(config["paraphraser_id"]) == run.get("model_id"),
                     names_book=bool(config.get("names")))
    items = passages * int(config.get("orders") or 1) if run["kind"] == decop.QUIZ_KIND else passages
    return RunFacts({"leakage": facts}, items=items)


def _corpus_line(title: str, corpus: dict[str, Any]) -> str:
    if corpus.get("removed"):
        return f"- **{title}:** '{corpus['name']}' (no longer in the project)."
    if corpus["kind"] == "remote":
        return (f"- **{title}:** '{corpus['name']}', the infini-gram index `{corpus['index']}` at {corpus['url']}"
                + (f" ({corpus['tokens']:,} tokens)" if corpus.get("tokens") else "") + ", in that index's own tokenizer.")
    return (f"- **{title}:** '{corpus['name']}', {corpus['documents']:,} documents, {corpus['tokens']:,} tokens "
            f"({corpus['words']:,} white-space words), tokenizer `{corpus['tokenizer']}`, indexed with "
            f"{corpus['engine']}"
            + (f"; documents longer than one part of the index (tens of millions of tokens) were cut into parts, and a "
               f"match cannot run across the {corpus['cuts']:,} places where they were cut" if corpus.get("cuts") else "")
            + ".")


def leakage_lines(run: dict, _seen: dict[str, int]) -> list[str]:
    facts = run.get("leakage") or {}
    lines = [f"- **Passages:** {facts.get('passages', 0):,}."]
    corpus = facts.get("corpus")
    if corpus:
        lines.append(_corpus_line("Reference corpus", corpus))
    if facts.get("background"):
        lines.append(_corpus_line("Background corpus (chance model)", facts["background"]))
    if facts.get("chance_model"):
        lines.append(f"- **Chance model:** {facts['chance_model']}" + (
            " (the default; a background corpus's counts where a background run is listed)."
            if run.get("kind") == overlap.KIND else "."))
    if facts.get("gram"):
        lines.append(f"- **Sample:** up to {facts['per_book']} passages per book, one run of {facts['gram']} words "
                     f"from each, seed {facts['seed']}.")
    if facts.get("orders"):
        lines.append(f"- **Questions:** {facts['orders']} option orders per passage (seed {facts['seed']}); "
                     f"paraphrases by {facts['paraphraser']}"
                     + ("; the question named the book's title and author" if facts.get("names_book") else
                        "; the question did not name the book (a run made before questions named it)") + ".")
        if facts.get("paraphraser_tested"):
            lines.append("- **Caution:** the paraphrases were written by the model under test, which may pick out "
                         "(or avoid) its own wording rather than recognise the book.")
    return lines


def leakage_paragraph(runs: list[dict]) -> str:
    kinds = {r["kind"] for r in runs}
    parts = []
    if kinds & {overlap.KIND, frequency.KIND}:
        corpora = [r["leakage"].get("corpus") or {} for r in runs if r["kind"] in (overlap.KIND, frequency.KIND)]
        corpora += [r["leakage"].get("background") or {} for r in runs if r["kind"] == overlap.BACKGROUND_KIND]
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
            f"interpolated {order}-gram model with additive (Dirichlet) smoothing of weight {overlap.PRIOR:g} towards "
            "the next lower order and add-one smoothing of the unigrams. So that the model never contains the "
            "match it judges, unless a background corpus is named its counts are those of the same corpus with the "
            "match's own occurrences taken out: with the match s of L tokens found f times, the count of every "
            "n-gram g inside it became c(g) - f m(g, s), where m(g, s) is the number of places g occurs in s (the "
            "occurrences of g lying inside an occurrence of the match), and the corpus size in tokens N - f L "
            "(exact unless occurrences of the match overlap one another; counts are kept at 0 or more, and a "
            "count c(h w) at most c(h)). The chance that a sequence of that probability occurs at least once in "
            "a corpus of n words is 1 - (1 - p)^n, with n the size of the corpus searched in white-space words, "
            "less the f occurrences of the match (for remote corpora n is their size in tokens); overlaps below "
            f"{overlap.CHANCE_LEVEL} are marked as unlikely to be chance. The removal cannot tell copies of a "
            "passage from other uses of the same words, so for short, common overlaps it leans towards "
            "'unlikely by chance'.")
    if overlap.BACKGROUND_KIND in kinds:
        names = sorted({(r["leakage"].get("background") or {}).get("name") or "?" for r in runs
                        if r["kind"] == overlap.BACKGROUND_KIND})
        parts.append(
            "Where a background corpus was named (" + ", ".join(f"'{n}'" for n in names) + "), as the leakage "
            "study estimates its chance model on an independent corpus, the text of each passage's longest "
            "overlap was tokenized as that corpus is and the same model counted there, its counts used as they "
            "are (occurrences of the match in an independent corpus are other uses of the same words); n remained "
            "the size of the corpus searched.")
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
            "reference model, the ratio of the two models' log-perplexities and their difference (the model's "
            "minus the reference's, the reference-based score of the mimir benchmark). Passages are scored as the "
            "tokenizer encodes them, so the first token is scored only where the tokenizer adds a start token. "
            "Scores were averaged per book; where books were tagged as known members or non-members, each score's "
            "ROC AUC was computed over books (book means) and over passages (each passage taking its book's tag), "
            "with the ROC curves.")
    if surprisal.KIND in kinds:
        parts.append(
            "Word surprisal: the model read the text after its start-of-text token (texts longer than its context "
            "in windows overlapping by half); a white-space word's surprisal in bits is minus the base-2 logarithm "
            "of the product of its tokens' probabilities, corrected for tokenizers whose tokens carry their leading "
            "space by multiplying with the probability that the next token begins a new word and dividing by the "
            "same probability before the word (Pimentel and Meister 2024; Oh and Schuler 2024).")
    if kinds & {decop.PARAPHRASE_KIND, decop.QUIZ_KIND}:
        orders = sorted({int(r["leakage"]["orders"]) for r in runs if r["kind"] == decop.QUIZ_KIND
                         and (r.get("leakage") or {}).get("orders")})
        said = " and ".join(str(o) for o in orders) or str(decop.DEFAULT_ORDERS)
        parts.append(
            f"DE-COP test (after Duarte et al. 2024): a model wrote {decop.PARAPHRASES} paraphrases of each passage "
            "(stored and reviewable); a paraphrase that was empty, the passage itself, or the same as another "
            "paraphrase of it (white space and case ignored) was refused, and a passage without three usable ones "
            "was not asked until they were rewritten. The tested model was told the book's title and author, shown "
            "the verbatim passage and the three paraphrases as options A-D, and asked which is printed in the book, "
            f"in {said} option orders per passage (24: every order, as in DE-COP; fewer: blocks of four orders in "
            "which the verbatim passage takes each place once), so that a preference for a letter cancels out. The "
            "first standalone letter A-D of the answer is taken; answers with none are counted as unanswered and "
            "left out. The passage is the unit of analysis, since a passage's answers in its several orders are "
            "not independent: a passage's score is the share of its answered orders in which the verbatim text "
            "was picked, and a book's score the mean of its passages' scores (DE-COP's book accuracy when every "
            "order is answered). A score above chance shows that the model tells the printed text from the "
            "paraphrases, which can happen without training on the book (through the paraphrases' style, say), so "
            "it is not by itself evidence of training. Following DE-COP's decision, books were divided into suspect books and clean "
            "books (tagged as not members, or published after the model's training cutoff year as given), and the "
            "ROC AUC of book scores, suspect against clean, is reported. Unlike DE-COP, answers are letters, not "
            "option probabilities, so there is no calibration of the probabilities beyond balancing the orders; "
            "and the AUC is the threshold-free area under the ROC curve, not the area of predictions thresholded "
            "at the best cut-off found on the same books.")
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
        Statistic("ROC AUC over passages (Mann-Whitney U over all passages of tagged books) with a cluster "
                  "percentile bootstrap interval",
                  f"for how well each membership score separates passages of member from non-member books ({LEVEL}, "
                  f"{RESAMPLES:,} resamples redrawing member books and non-member books each on their own, every "
                  "book with all its passages, as passages of one book are not independent; seed 0)",
                  "scipy `mannwhitneyu` and `bootstrap` over book numbers"),
        Statistic(f"Wilson score interval ({LEVEL}) with the passage as the trial (the sum of passage scores out of "
                  "the number of passages)",
                  "for a book's DE-COP score; a score in [0, 1] with mean m has variance at most m(1 - m), so the "
                  "interval is at least as wide as a normal-theory interval for the mean, and it keeps a width when "
                  "every passage scores 1", "statsmodels `proportion_confint` (method 'wilson')"),
        Statistic("Exact one-sided randomisation test of the mean passage score against 25%, the passage as the "
                  "unit",
                  "for whether a model tells the verbatim passage from its paraphrases better than chance: if it "
                  "cannot, its answers would be the same whichever of the four texts were the published one, so "
                  "each passage's score is one of its four pick shares with probability 1/4; the p-value is the "
                  "chance of a sum of passage scores at least as large (exact by convolution; 100,000 seeded Monte "
                  "Carlo draws when the grid is too fine). With every passage answered alike in all its orders it "
                  "is the exact one-sided binomial test of the passages recognised. A t-test or Wilcoxon test would "
                  "assume a normal or symmetric distribution of scores bounded in [0, 1]; counting each order as a "
                  "trial would treat dependent answers as independent and overstate the evidence",
                  "numpy (convolution), checked against scipy `binomtest`"),
        Statistic("ROC AUC of DE-COP book scores, suspect against clean books, with a percentile bootstrap interval",
                  f"for DE-COP's decision ({LEVEL}, {RESAMPLES:,} resamples drawn within each group, seed 0)",
                  "scipy `mannwhitneyu` and `bootstrap`"),
    ]


register_methods(MethodsSection(
    key="leakage",
    title="Leakage and membership evidence",
    kinds=(kinds.OVERLAP_KIND, kinds.CHANCE_KIND, kinds.FREQUENCY_KIND, kinds.MEMBERSHIP_KIND, kinds.SURPRISAL_KIND,
           kinds.PARAPHRASE_KIND, kinds.QUIZ_KIND),
    facts=leakage_facts,
    lines=leakage_lines,
    procedure=leakage_paragraph,
    statistics=leakage_statistics,
    order=60,
))
