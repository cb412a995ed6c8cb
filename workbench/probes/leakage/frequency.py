"""Book frequency in a reference corpus against name-cloze accuracy (*Speak, Memory*, section 6.2).

For each book: ``per_book`` of its name-cloze passages (default 10, drawn with a seed; the name put back),
from each one run of ``gram`` white-space words (default 10, its start drawn with the same seed), and
the number of times that run occurs in the corpus (its tokens in the corpus's tokenizer). The book's
frequency is the mean of its counts. Run kind ``leakage-frequency``: ``raw`` holds the n-gram, where
it starts and its count, so the table can be rebuilt without asking the index again.

``correlations`` gives Spearman's rho between book frequency and a model's name-cloze accuracy
(read through the export registry's public table ``cloze-book-accuracy``) over all books and within
the groups of a split: by default books published before 1928 and from 1928 on (the paper's split:
works in the public domain in the United States against those that were not); or by a book tag.
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.jobs import JobReport, Unit, find_or_create_run, get_run, run_job
from workbench.probes.leakage import passages as passage_store
from workbench.probes.leakage.corpora import get_corpus, open_index
from workbench.probes.leakage.kinds import FREQUENCY_KIND as KIND
from workbench.probes.leakage.runs import index_process, responses
from workbench.probes.leakage.statistics import spearman
from workbench.progress import TaskState
from workbench.runs import latest_run

if TYPE_CHECKING:
    from workbench.probes.leakage.corpora import NgramIndex
    from workbench.project import Project

PER_BOOK = 10
GRAM = 10
SEED = 0
SETTINGS = ("per_book", "gram", "seed")  # what a count depends on besides the corpus
YEAR_SPLIT = 1928
BOOK_COLUMNS = ["book", "book_id", "year", "group", "passages", "mean_count", "median_count", "zero_counts",
                "accuracy", "cloze_n"]
CORRELATION_COLUMNS = ["group", "books", "rho", "p_value", "ci_low", "ci_high", "model", "corpus"]


def pick_gram(text: str, gram: int, rng: random.Random) -> tuple[int, str]:
    """A run of ``gram`` white-space words of ``text`` at a random start (the whole text if shorter)."""
    words = text.split()
    if len(words) <= gram:
        return 0, " ".join(words)
    start = rng.randrange(len(words) - gram + 1)
    return start, " ".join(words[start : start + gram])


def sample_passages(project: "Project", per_book: int, seed: int, book_ids: Sequence[int] | None) -> list[int]:
    """``per_book`` name-cloze passages per book (all of a book's if it has fewer), drawn with ``seed``."""
    ids = passage_store.gather(project, passage_store.CLOZE, book_ids=book_ids)
    frame = passage_store.passages_frame(project, ids)
    chosen: list[int] = []
    for book_id, group in frame.groupby("book_id", sort=True):
        items = sorted(group["passage_id"].astype(int).tolist())
        rng = random.Random(f"{seed}:{book_id}")
        chosen += sorted(rng.sample(items, min(per_book, len(items))))
    return chosen


def run_frequency(project: "Project", corpus: str, *, per_book: int = PER_BOOK, gram: int = GRAM, seed: int = SEED,
                  book_ids: Sequence[int] | None = None, state: TaskState | None = None,
                  retry_failed: bool = False) -> JobReport:
    if per_book < 1 or gram < 1:
        raise UserError("Passages per book and words per n-gram must be at least 1.")
    chosen = get_corpus(project, corpus)
    ids = sample_passages(project, per_book, seed, book_ids)
    config = {"corpus": chosen.name, "corpus_id": chosen.id, "passage_ids": ids}
    params = {"per_book": per_book, "gram": gram, "seed": seed}
    run_id = find_or_create_run(project, KIND, model_id=None, params=params, config=config)
    return _execute(project, run_id, chosen.name, ids, gram, seed, state, retry_failed)


def _execute(project, run_id, corpus, ids, gram, seed, state, retry_failed) -> JobReport:
    texts = passage_store.passage_texts(project, ids)
    index = open_index(project, corpus)
    try:
        process = index_process(index, texts, lambda opened, text, unit: count_gram(opened, text, gram, seed,
                                                                                     unit.item_id))
        return run_job(project, run_id, [Unit(i) for i in ids], process, state, retry_failed=retry_failed)
    finally:
        index.close()


def count_gram(index: "NgramIndex", text: str, gram: int, seed: int, item: int) -> dict:
    """The raw answer for one passage: its n-gram (drawn with the seed and the passage), and its count."""
    start, words = pick_gram(text, gram, random.Random(f"{seed}:{item}"))
    ids = index.encode(words).ids
    count = index.count(ids.tolist()) if ids.size else 0
    return {"gram": words, "start_word": start, "tokens": int(ids.size), "count": int(count)}


def resume(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> JobReport:
    run = get_run(project, run_id)
    params = run["params"]
    return _execute(project, run_id, run["config"]["corpus"], list(run["config"]["passage_ids"]),
                    int(params["gram"]), int(params["seed"]), state, retry_failed)


# ---------------------------------------------------------------------------------------------- reading
def counted_settings(project: "Project", corpus: str) -> dict[str, int] | None:
    """The settings (``per_book``, ``gram``, ``seed``) of the newest count against ``corpus``; None before any."""
    corpus_id = get_corpus(project, corpus).id
    newest = latest_run(project, KIND, corpus_id=corpus_id)
    if newest is not None:
        return {key: int(newest.params[key]) for key in SETTINGS if key in newest.params}
    return None


def chosen_settings(per_book: object = None, gram: object = None, seed: object = None) -> dict[str, int] | None:
    """The settings of a count as options give them (a chart's or a table's, perhaps as text); None when none
    is given (then the newest count's are shown), the defaults for those left out."""
    given = {"per_book": per_book, "gram": gram, "seed": seed}
    if all(value in (None, "") for value in given.values()):
        return None
    defaults = {"per_book": PER_BOOK, "gram": GRAM, "seed": SEED}
    try:
        return {key: int(defaults[key] if value in (None, "") else value) for key, value in given.items()}
    except ValueError as exc:
        raise UserError("Passages per book, words per n-gram and seed are whole numbers.") from exc


def grams_frame(project: "Project", corpus: str, settings: dict[str, int] | None = None,
                book_ids: Sequence[int] | None = None) -> pd.DataFrame:
    """The n-grams counted against ``corpus`` with ``settings`` (``per_book``, ``gram``, ``seed``; by default
    those of the newest count): book, passage, the n-gram and its count. Counts made with other settings, or
    against an earlier corpus of the same name, are never mixed in. ``book_ids`` keeps those books only."""
    settings = settings or counted_settings(project, corpus)
    columns = ["book", "book_id", "passage_id", "item_id", "gram", "count"]
    if settings is None:
        return pd.DataFrame(columns=columns)
    found = responses(project, KIND, config_filter={"corpus_id": get_corpus(project, corpus).id},
                      params_filter={key: int(settings[key]) for key in SETTINGS})
    if found.empty:
        return pd.DataFrame(columns=columns)
    items = found["item_id"].astype(int).tolist()
    info = passage_store.passages_frame(project, items, text=False).set_index("passage_id").reindex(items)
    answers = [json.loads(raw) for raw in found["raw"]]  # column by column: no pandas look-up per answer
    frame = pd.DataFrame({"book": info["book"].to_numpy(), "book_id": info["book_id"].to_numpy(),
                          "passage_id": info["source_key"].to_numpy(), "item_id": items,
                          "gram": [a["gram"] for a in answers], "count": [int(a["count"]) for a in answers]},
                         columns=columns)
    if book_ids is not None:
        frame = frame[frame["book_id"].isin([int(b) for b in book_ids])]
    return frame


def _cloze_accuracy(project: "Project", model: str | None) -> pd.DataFrame:
    from workbench.export import registry

    if "cloze-book-accuracy" not in registry.tables():
        raise UserError("The name-cloze probe is not installed, so there is no accuracy to compare with.")
    frame = registry.table("cloze-book-accuracy").frame(project, model=model)
    if frame.empty:
        raise UserError("There are no name-cloze results" + (f" for '{model}'" if model else "") +
                        " yet. Run the name cloze first (palimpsest cloze run).")
    models = sorted(frame["model"].unique())
    if model is None and len(models) > 1:
        raise UserError(f"Several models have name-cloze results ({', '.join(models)}); choose one with --model.")
    frame = frame[frame["kind"] == "cloze"] if (frame["kind"] == "cloze").any() else frame
    return frame[["model", "book_id", "accuracy", "n"]].rename(columns={"n": "cloze_n"})


def book_frequency(project: "Project", corpus: str, *, model: str | None = None, split: str | None = None,
                   settings: dict[str, int] | None = None, book_ids: Sequence[int] | None = None) -> pd.DataFrame:
    """Per book: passages counted, mean (and median) count, its group in the split, and cloze accuracy
    (when ``model`` is given or only one model has results; blank otherwise). ``settings`` and ``book_ids``
    as in ``grams_frame``; the settings used are in ``attrs["settings"]``."""
    from workbench.corpus.library import books_frame

    settings = settings or counted_settings(project, corpus)
    grams = grams_frame(project, corpus, settings, book_ids)
    if grams.empty:
        empty = pd.DataFrame(columns=BOOK_COLUMNS)
        empty.attrs["settings"] = settings
        return empty
    grams = grams.dropna(subset=["book_id"])
    per_book = grams.groupby("book_id").agg(passages=("count", "size"), mean_count=("count", "mean"),
                                            median_count=("count", "median"),
                                            zero_counts=("count", lambda c: int((c == 0).sum()))).reset_index()
    books = books_frame(project, expand_tags=True)
    per_book = per_book.merge(books.rename(columns={"id": "book_id", "title": "book"}), on="book_id", how="left")
    per_book["group"] = split_groups(per_book, split)
    try:
        accuracy = _cloze_accuracy(project, model)
    except UserError:
        if model is not None:
            raise
        accuracy = pd.DataFrame(columns=["model", "book_id", "accuracy", "cloze_n"])
    per_book = per_book.merge(accuracy[["book_id", "accuracy", "cloze_n"]], on="book_id", how="left")
    per_book["year"] = per_book["year"].astype("Int64")
    per_book["book_id"] = per_book["book_id"].astype(int)
    per_book["cloze_n"] = per_book["cloze_n"].astype("Int64")
    per_book = per_book[BOOK_COLUMNS].sort_values(["mean_count", "book"], ascending=[False, True]).reset_index(drop=True)
    per_book.attrs["settings"] = settings
    return per_book


def split_groups(books: pd.DataFrame, split: str | None) -> pd.Series:
    """Each book's group: before/after ``YEAR_SPLIT`` by default, else the value of the tag ``split``."""
    if not split:
        years = books["year"]
        return pd.Series([("" if pd.isna(y) else f"before {YEAR_SPLIT}" if int(y) < YEAR_SPLIT else
                           f"{YEAR_SPLIT} and later") for y in years], index=books.index)
    column = f"tag:{split}" if f"tag:{split}" in books.columns else split
    if column not in books.columns:
        raise UserError(f"No book has the tag '{split}'. Tag books first (palimpsest tag), or leave out --split.")
    return books[column].fillna("").astype(str)


def correlations(project: "Project", corpus: str, *, model: str | None = None, split: str | None = None,
                 seed: int = SEED, settings: dict[str, int] | None = None,
                 book_ids: Sequence[int] | None = None, books: pd.DataFrame | None = None) -> pd.DataFrame:
    """Spearman's rho of book frequency against name-cloze accuracy: all books, then each group (``seed`` is
    the bootstrap's; ``settings`` and ``book_ids`` choose the counts as in ``grams_frame``; ``books``:
    ``book_frequency``'s frame for these choices, if read already)."""
    if books is None:
        books = book_frequency(project, corpus, model=model, split=split, settings=settings, book_ids=book_ids)
    chosen = model or ", ".join(sorted(_cloze_accuracy(project, None)["model"].unique()))
    books = books.dropna(subset=["accuracy"])
    rows = []
    groups = [("all", books)] + [(g, part) for g, part in books.groupby("group", sort=True) if g]
    for name, part in groups:
        result = spearman(part["mean_count"].astype(float), part["accuracy"].astype(float), seed=seed)
        rows.append({"group": name, "books": len(part), "rho": result.rho, "p_value": result.p_value,
                     "ci_low": result.ci_low, "ci_high": result.ci_high, "model": chosen, "corpus": corpus})
    return pd.DataFrame(rows, columns=CORRELATION_COLUMNS)
