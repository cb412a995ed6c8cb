"""Error analysis (*Speak, Memory*, section 6.1): when a model gets a name wrong, does it offer a name from a
book it has memorized?

**Groups.** The books are ranked by the name-cloze accuracy of one grouping model (``grouped_by``; when several
models are compared, the same one for all of them, as the paper groups ChatGPT's books by GPT-4's accuracy):
the top decile M (memorized), the bottom decile (not memorized) and the rest H (held out), cut by the shared
rule (``workbench.corpus.book_sets.ranked_ends``; flagged books are left out of the ranking, and so are in H).

**Name sets.** Over every passage the analysed model answered, the association of a gold name n with a
book b is the pointwise mutual information PMI(n, b) = log(c(n, b) N / (c(n) c(b))), with c counting
passages (names compared without case). A name's score for a side is its largest PMI with a book of that
side; the names with a positive score for M are the candidates for S (seen), those for the bottom books
the candidates for U (unseen). A name that is a candidate for both is dropped from both, so that S and U
are disjoint. Each side is ranked by its score alone, and S and U are the ``set_size`` highest of each (by
default, as many as both sides allow). Every name found in one book only has the same, highest, score, so
most names tie: which of them make a set is not decided by their order.

**Ties** (``tie_rule``, the same rule for the books at the cuts and for the names at the set size):

- ``all`` (the default): every book tied at a cut goes in its group (a group may then hold more than a
  decile; the sizes are reported), and every name tied at the set size goes in its set, so S and U can
  differ in size. The statistic then compares errors per name:
  o = log((in S / |S|) / (in U / |U|)), which is the paper's log(in S / in U) when the sets are equal.
  Nothing is drawn, so the result has no spread over draws (p5 = p95 = o).
- ``draw``: ``draws`` seeded draws (``book_sets.draw_rng``: draw d draws its books first, as every analysis
  of the same grouping does, then its names); in each, the tied books at the cuts and the tied names at the
  set size are drawn at random (groups of exactly their share, sets of exactly ``set_size``). The row
  reported is the median draw (by o, the lower middle one; its counts, p and names), with the 5th and 95th
  percentiles of o over the draws (``log_odds_p5``, ``log_odds_p95``, inverted-CDF percentiles) and the 95th
  percentile of the draws' p-values (``p_value_p95``; each draw tested with ``DRAW_PERMUTATIONS`` deals, the
  reported one with ``permutations``).

**Set constructions.** The same analysis for several set sizes (``set_sizes``; ``None`` is 'as many as both
sides allow', the smaller side's candidates, the larger side cut there) gives one row each, so that the spread
over constructions can be read beside the spread over draws (``DEFAULT_SET_SIZES`` when none are named).

**The statistic.** On the held-out books, the errors are the answered passages scored wrong (an empty
answer or a refusal is an error, but names no one, so it counts in neither set).

**The randomization test.** The names of S and U are pooled and dealt again into two sets of their sizes at
random (``permutations`` deals, see ``deal_counts``); o is computed for each deal. The p-value is one-sided, as
the question is: (1 + deals with o at least the observed one) / (1 + deals). Only the names some error
offered matter, and a deal only needs how many names of each error count land in S, which is a multivariate
hypergeometric draw (numpy), about ten times faster than dealing name by name, so that every tie draw can
have its own test.
``plain_python`` is the same test written as an ordinary loop (the benchmark and the tests compare the two).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from workbench.analysis.intervals import draw_spread
from workbench.corpus.book_sets import (
    ALL_TIED,
    DEFAULT_DRAWS,
    DRAW_TIES,
    draw_rng,
    group_fraction,
    ranked_ends,
    tie_rule,
)
from workbench.errors import UserError
from workbench.probes.cloze.kinds import CLOZE_KIND
from workbench.progress import TaskState

if TYPE_CHECKING:
    from workbench.project import Project

DEFAULT_PERMUTATIONS = 10_000
#: deals of the test of each tie draw, for the spread of p (the draw reported gets ``permutations``)
DRAW_PERMUTATIONS = 1_000
#: the set constructions analysed when none are named: as many names as both sides allow, 500 and 100
DEFAULT_SET_SIZES: tuple[int | None, ...] = (None, 500, 100)
SEEN, UNSEEN = "seen", "unseen"
ALL_NAMES = "all"  # the set size 'as many as both sides allow', as written in the tables
SUMMARY_COLUMNS = ["model", "grouped_by", "groups", "tie_rule", "set_size", "seen_names", "unseen_names", "errors",
                   "in_seen", "in_unseen", "log_odds", "log_odds_p5", "log_odds_p95", "p_value", "p_value_p95",
                   "draws", "permutations", "seed", "seen_books", "unseen_books", "held_out_books", "note"]
#: what ``palimpsest cloze errors`` prints as a table (every column in CSV and JSON)
SHORT_COLUMNS = ["model", "grouped_by", "tie_rule", "set_size", "seen_names", "unseen_names", "errors", "in_seen",
                 "in_unseen", "log_odds", "log_odds_p5", "log_odds_p95", "p_value"]
NAME_COLUMNS = ["set", "rank", "name", "pmi", "book_id", "book", "passages", "predicted_in_errors", "tied_at_cut"]


@dataclass
class ErrorAnalysis:
    """One construction (a model, a grouping, a tie rule, a set size): under the rule ``draw`` its median draw,
    with the spread over all draws."""

    set_size: int | None  # asked for; None: as many as both sides allow
    seen_names: int
    unseen_names: int
    errors: int
    in_seen: int
    in_unseen: int
    log_odds: float
    p_value: float
    permutations: int
    seed: int
    names: pd.DataFrame  # NAME_COLUMNS: both sets, ranked
    null: np.ndarray  # o for each deal (inf where no answer fell in the new U)
    books: dict[str, int] = field(default_factory=dict)  # seen, unseen, held_out: how many books each
    note: str = ""
    tie_rule: str = ALL_TIED
    draws: int = 0
    log_odds_p5: float = math.nan
    log_odds_p95: float = math.nan
    p_value_p95: float = math.nan
    spread: np.ndarray = field(default_factory=lambda: np.zeros(0))  # o of every draw (empty under 'all')
    model: str = ""
    grouped_by: str = ""
    groups: str = "decile"


def normalised(names: pd.Series) -> pd.Series:
    return names.fillna("").astype(str).str.strip().str.casefold()


# ---------------------------------------------------------------------------------------------- the answers as arrays
class Answers:
    """One model's answers (one row per passage: ``book_id``, ``book``, ``gold``, ``parsed``, ``correct``,
    ``status``) as arrays: the PMI of every (gold name, book) pair and the wrong answers by book and name,
    which every grouping, draw and set size reuses."""

    def __init__(self, results: pd.DataFrame):
        gold = normalised(results["gold"]).to_numpy()
        books = results["book_id"].to_numpy()
        self.book_ids, book_codes = np.unique(books, return_inverse=True)
        named = gold != ""
        self.vocabulary, name_codes = np.unique(gold[named], return_inverse=True)
        pairs = pd.DataFrame({"name": name_codes, "book": book_codes[named]})
        counted = pairs.groupby(["name", "book"]).size()
        self.pair_name = counted.index.get_level_values("name").to_numpy()
        self.pair_book = counted.index.get_level_values("book").to_numpy()
        self.pair_passages = counted.to_numpy()
        total = int(named.sum())
        by_name = np.bincount(name_codes, minlength=len(self.vocabulary))
        by_book = np.bincount(book_codes[named], minlength=len(self.book_ids))
        # c(n, b) N / (c(n) c(b)) as one division of exact whole numbers: equal ratios give equal PMIs (ties are ties)
        ratio = (self.pair_passages.astype(np.float64) * total) / (by_name[self.pair_name].astype(np.float64)
                                                                    * by_book[self.pair_book])
        self.pair_pmi = np.log(ratio)
        # the tie key: PMI rounded far below any real difference (floating point never splits a tie)
        self.pair_key = np.round(self.pair_pmi, 9)
        shown = pd.DataFrame({"name": name_codes, "shown": results["gold"].astype(str).str.strip().to_numpy()[named]})
        forms = shown.groupby(["name", "shown"]).size().rename("n").reset_index()
        forms = forms.sort_values(["n", "shown"], ascending=[False, True]).drop_duplicates("name")
        self.shown = forms.set_index("name")["shown"].reindex(range(len(self.vocabulary))).to_numpy()
        self.titles = (results.drop_duplicates("book_id").set_index("book_id")["book"]
                       if "book" in results else pd.Series(dtype=str))
        wrong = (results["status"] == "ok").to_numpy() & ~results["correct"].fillna(False).astype(bool).to_numpy()
        self.wrong_book = book_codes[wrong]
        predicted = normalised(results["parsed"]).to_numpy()[wrong]
        # each wrong answer as a gold name's code (-1: nobody's gold name, an empty answer or a refusal)
        self.wrong_name = np.full(len(predicted), -1)
        if len(self.vocabulary):
            found = np.minimum(np.searchsorted(self.vocabulary, predicted), len(self.vocabulary) - 1)
            self.wrong_name = np.where(self.vocabulary[found] == predicted, found, -1)

    def book_mask(self, ids: Iterable[int]) -> np.ndarray:
        return np.isin(self.book_ids, np.fromiter((int(i) for i in ids), dtype=np.int64))


@dataclass
class Sides:
    """The candidates of both sides, each ranked by score (best first), with their score, best book and tie key."""

    codes: tuple[np.ndarray, np.ndarray]
    score: tuple[np.ndarray, np.ndarray]
    key: tuple[np.ndarray, np.ndarray]
    book: tuple[np.ndarray, np.ndarray]  # book code of the best pair
    passages: tuple[np.ndarray, np.ndarray]  # passages of the best pair


def _best_pairs(answers: Answers, mask: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per name with a pair on the side ``mask``: its best pair (highest PMI, its score; then more passages, then
    the lower book code, which only chooses the book shown), as arrays (name, pmi, key, book, passages)."""
    chosen = mask[answers.pair_book]
    name, key, pmi = answers.pair_name[chosen], answers.pair_key[chosen], answers.pair_pmi[chosen]
    book, passages = answers.pair_book[chosen], answers.pair_passages[chosen]
    order = np.lexsort((book, -passages, -key, name))
    first = np.ones(len(order), dtype=bool)
    first[1:] = name[order][1:] != name[order][:-1]
    keep = order[first]
    return name[keep], pmi[keep], key[keep], book[keep], passages[keep]


def candidates(answers: Answers, top: np.ndarray, bottom: np.ndarray) -> Sides:
    """The names with a positive PMI with a book of each side, none on both sides, each side by score (best
    first; names tied on it in the order of their codes, which decides nothing: see ``_cut``)."""
    best = [_best_pairs(answers, mask) for mask in (top, bottom)]
    best = [tuple(column[arrays[1] > 0] for column in arrays) for arrays in best]
    both = np.intersect1d(best[0][0], best[1][0])
    sides = []
    for arrays in best:
        keep = ~np.isin(arrays[0], both)
        arrays = tuple(column[keep] for column in arrays)
        order = np.argsort(-arrays[2], kind="stable")
        sides.append(tuple(column[order] for column in arrays))
    return Sides(*(tuple(side[i] for side in sides) for i in (0, 1, 2, 3, 4)))


def _cut(key: np.ndarray, k: int, rule: str, rng: np.random.Generator | None) -> tuple[np.ndarray, np.ndarray]:
    """Positions (into a side ranked by ``key``, best first) of its set of size ``k``, and which of them are at a
    tie that crosses the cut: under ``all`` every name tied with the k-th goes in, under ``draw`` the tied names
    that fill the set are drawn."""
    n = len(key)
    if k >= n:
        return np.arange(n), np.zeros(n, dtype=bool)
    edge = key[k - 1]
    crosses = key[k] == edge
    if rule == ALL_TIED:
        chosen = np.flatnonzero(key >= edge)
    else:
        above = np.flatnonzero(key > edge)
        block = np.flatnonzero(key == edge)
        chosen = np.concatenate([above, np.sort(rng.permutation(block)[: k - len(above)])])
    return chosen, (key[chosen] == edge) & crosses


# ---------------------------------------------------------------------------------------------- the test
def _log_odds(in_seen, in_unseen, seen_names: int = 1, unseen_names: int = 1):
    """log(in_seen / in_unseen) - log(seen_names / unseen_names): errors per name of S against per name of U."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.log(np.asarray(in_seen, dtype=float)) - np.log(np.asarray(in_unseen, dtype=float))
                - (math.log(seen_names / unseen_names) if seen_names and unseen_names else 0.0))


def deal_counts(counts: np.ndarray, k: int, deals: int, seed: int | Sequence[int],
                state: TaskState | None = None) -> np.ndarray:
    """For each of ``deals`` random deals of the pooled names (``counts``: errors per pooled name) into a first
    set of ``k`` and a second of the rest: the errors whose answer falls in the first set.

    A uniform deal puts a uniformly random k of the names in the first set; all that matters is how many names
    of each error count it takes, which is a multivariate hypergeometric draw (numpy's ``'marginals'`` method,
    exact) from the numbers of names with each count."""
    counts = np.asarray(counts, dtype=np.int64)
    rng = np.random.default_rng(seed)
    values, names = np.unique(counts, return_counts=True)
    if state is not None:
        state.check()
    if len(values) == 0 or deals == 0:
        return np.zeros(deals, dtype=np.int64)
    taken = rng.multivariate_hypergeometric(names, int(k), size=deals, method="marginals")
    return taken @ values


def p_at_least(null_seen: np.ndarray, total: int, in_seen: int, in_unseen: int) -> float:
    """One-sided p: deals whose log-odds is at least the observed one (compared as whole numbers:
    seen' / unseen' >= seen / unseen, the set sizes being those of the observed sets), the observed deal
    counted as one of them."""
    if in_seen == 0 and in_unseen == 0:
        return math.nan
    null_unseen = total - null_seen
    extreme = null_seen * in_unseen >= in_seen * null_unseen
    return float((1 + extreme.sum()) / (1 + len(null_seen)))


@dataclass
class _Draw:
    """One construction on one grouping and one draw of the ties."""

    seen: np.ndarray  # name codes
    unseen: np.ndarray
    seen_tied: np.ndarray
    unseen_tied: np.ndarray
    sides: Sides
    seen_at: np.ndarray  # positions into the sides' rankings
    unseen_at: np.ndarray
    counts: np.ndarray  # errors per name of S, then U
    errors: int
    in_seen: int
    in_unseen: int
    log_odds: float
    held_out: int


def _one(answers: Answers, top: np.ndarray, bottom: np.ndarray, sides: Sides, set_size: int | None, rule: str,
         rng: np.random.Generator | None) -> _Draw:
    available = min(len(sides.codes[0]), len(sides.codes[1]))
    k = available if set_size is None else min(int(set_size), available)
    cuts = [_cut(sides.key[i], k, rule, rng) if k else (np.zeros(0, dtype=int), np.zeros(0, dtype=bool))
            for i in (0, 1)]
    seen, unseen = (sides.codes[i][cuts[i][0]] for i in (0, 1))
    held = ~(top | bottom)
    on_held = held[answers.wrong_book]
    offered = answers.wrong_name[on_held]
    per_name = np.bincount(offered[offered >= 0], minlength=len(answers.vocabulary))
    counts = np.concatenate([per_name[seen], per_name[unseen]]).astype(np.int64)
    in_seen, in_unseen = int(per_name[seen].sum()), int(per_name[unseen].sum())
    o = float(_log_odds(in_seen, in_unseen, len(seen), len(unseen))) if len(seen) else math.nan
    return _Draw(seen, unseen, cuts[0][1], cuts[1][1], sides, cuts[0][0], cuts[1][0], counts, int(on_held.sum()),
                 in_seen, in_unseen, o, int(np.unique(answers.wrong_book[on_held]).size))


def _test(draw: _Draw, permutations: int, seed, state: TaskState | None) -> tuple[float, np.ndarray]:
    """The randomization p of one draw and its null log-odds."""
    k, m = len(draw.seen), len(draw.unseen)
    if not k or not m:
        return math.nan, np.zeros(0)
    total = draw.in_seen + draw.in_unseen
    null_seen = deal_counts(draw.counts, k, permutations, seed, state)
    return p_at_least(null_seen, total, draw.in_seen, draw.in_unseen), _log_odds(null_seen, total - null_seen, k, m)


def _names_frame(answers: Answers, draw: _Draw) -> pd.DataFrame:
    rows = []
    for index, (side, codes, positions, tied) in enumerate(((SEEN, draw.seen, draw.seen_at, draw.seen_tied),
                                                            (UNSEEN, draw.unseen, draw.unseen_at, draw.unseen_tied))):
        book_ids = answers.book_ids[draw.sides.book[index][positions]] if len(positions) else np.zeros(0, dtype=int)
        rows.append(pd.DataFrame({
            "set": side, "rank": np.arange(1, len(codes) + 1), "name": answers.shown[codes],
            "pmi": draw.sides.score[index][positions], "book_id": book_ids,
            "book": pd.Series(book_ids).map(answers.titles).to_numpy() if len(book_ids) else [],
            "passages": draw.sides.passages[index][positions],
            "predicted_in_errors": draw.counts[: len(codes)] if index == 0 else draw.counts[len(draw.seen):],
            "tied_at_cut": tied,
        }))
    frame = pd.concat(rows, ignore_index=True)
    # ranks follow the score; names tied on it share a rank (shown by passages, then name: that order decides
    # nothing, as the tie rule chose the names already)
    frame["key"] = np.round(frame["pmi"].to_numpy(dtype=float), 9)
    frame["rank"] = frame.groupby("set", sort=False)["key"].rank(method="min", ascending=False).astype(int)
    frame["side"] = (frame["set"] == UNSEEN).astype(int)
    frame = frame.sort_values(["side", "rank", "passages", "name"], ascending=[True, True, False, True], kind="stable")
    return frame.reset_index(drop=True)[NAME_COLUMNS]


def _analyses(answers: Answers, groupings: list[tuple[np.ndarray, np.ndarray]], rngs: Callable[[], list],
              set_sizes: Sequence[int | None], rule: str, permutations: int, seed: int,
              state: TaskState | None) -> list[ErrorAnalysis]:
    """Every set size over the groupings of every draw (one grouping, no random numbers, under ``all``);
    ``rngs()`` gives each draw's random numbers afresh, so that every set size draws its names alike."""
    if permutations < 1:
        raise UserError("The randomization test needs at least one permutation.")
    runs: list[list[tuple]] = [[] for _ in set_sizes]
    streams = [rngs() for _ in set_sizes]
    for index, (top, bottom) in enumerate(groupings):
        if state is not None:
            state.check()
            state.progress(index, len(groupings), "Drawing the ties and shuffling the names")
        sides = candidates(answers, top, bottom)
        for size_index, size in enumerate(set_sizes):
            draw = _one(answers, top, bottom, sides, size, rule, streams[size_index][index])
            if rule == ALL_TIED:
                p, null = _test(draw, permutations, seed, state)
            else:  # a rougher test of every draw for the spread of p; the median draw gets the full one below
                (p, _), null = _test(draw, min(permutations, DRAW_PERMUTATIONS), [int(seed), index, 1], state), None
            runs[size_index].append([draw, p, null, top, bottom, index])
    if rule == DRAW_TIES:
        for size_runs in runs:
            median = size_runs[_median_draw(size_runs)]
            median[1], median[2] = _test(median[0], permutations, [int(seed), median[5], 0], state)
    if state is not None:
        state.progress(len(groupings), len(groupings), "Shuffled", force=True)
    return [_summarised(answers, size_runs, size, rule, permutations, seed) for size_runs, size in zip(runs, set_sizes)]


def _median_draw(runs: list) -> int:
    """The draw whose o is the median (the lower of the middle two for an even number of draws; o undefined
    counts as highest)."""
    values = np.array([r[0].log_odds for r in runs], dtype=float)
    order = np.argsort(np.where(np.isnan(values), np.inf, values), kind="stable")
    return int(order[(len(order) - 1) // 2])


def _summarised(answers: Answers, runs: list[tuple], set_size: int | None, rule: str, permutations: int,
                seed: int) -> ErrorAnalysis:
    """One construction: its only run (``all``), or its median draw with the spread over the draws."""
    drawn = rule == DRAW_TIES
    values = np.array([r[0].log_odds for r in runs], dtype=float)
    draw, p, null, top, bottom, _ = runs[_median_draw(runs) if drawn else 0]
    low, high = draw_spread(values) if drawn else (draw.log_odds, draw.log_odds)
    p_high = draw_spread(np.array([r[1] for r in runs]))[1] if drawn else p
    books = {"seen": int(top.sum()), "unseen": int(bottom.sum()), "held_out": draw.held_out}
    notes = []
    if not len(draw.seen) or not len(draw.unseen):
        notes.append("no name is associated with one side only, so there are no sets to compare")
    elif draw.in_seen + draw.in_unseen == 0:
        notes.append("no error on the held-out books names anyone in S or U")
    notes.append(_name_note(draw, rule, set_size, len(runs)))
    return ErrorAnalysis(set_size, len(draw.seen), len(draw.unseen), draw.errors, draw.in_seen, draw.in_unseen,
                         draw.log_odds, p, permutations, seed, _names_frame(answers, draw), null, books,
                         "; ".join(filter(None, notes)), rule, len(runs) if drawn else 0, low, high, p_high,
                         values if drawn else np.zeros(0))


def _name_note(draw: _Draw, rule: str, set_size: int | None, draws: int) -> str:
    sizes = (len(draw.seen), len(draw.unseen))
    tied = (int(draw.seen_tied.sum()), int(draw.unseen_tied.sum()))
    if not any(tied):
        return ""
    if rule == ALL_TIED:
        asked = "as many as both sides allow" if set_size is None else f"{set_size} asked for"
        text = (f"names tied on PMI at the set size all go in: S holds {sizes[0]} and U {sizes[1]} names "
                f"({asked}), so o compares errors per name")
        return text
    block = [int((draw.sides.key[i] == draw.sides.key[i][draw.seen_at if i == 0 else draw.unseen_at][-1]).sum())
             for i in (0, 1)]
    parts = [f"{tied[i]} of the {block[i]} names tied on PMI at the end of {('S', 'U')[i]}" for i in (0, 1) if tied[i]]
    return (f"{' and '.join(parts)} were drawn at random; the row is the median of {draws} draws, "
            "log_odds_p5 to log_odds_p95 their spread")


def error_statistics(results: pd.DataFrame, top: Iterable[int], bottom: Iterable[int], *, set_size: int | None = None,
                     permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0, ties: str = ALL_TIED,
                     draws: int = DEFAULT_DRAWS, state: TaskState | None = None) -> ErrorAnalysis:
    """The analysis on a table of answers (one row per passage: ``book_id``, ``book``, ``gold``, ``parsed``,
    ``correct``, ``status``) and the ids of the top and bottom books (fixed: only the names' ties are drawn
    under ``draw``)."""
    tie_rule(ties)
    answers = Answers(results)
    masks = (answers.book_mask(top), answers.book_mask(bottom))
    _check_sizes([set_size])
    count = draws if ties == DRAW_TIES else 1
    if ties == DRAW_TIES and draws < 1:
        raise UserError("Drawing the ties needs at least one draw.")

    def rngs():
        return [draw_rng(seed, d) for d in range(count)] if ties == DRAW_TIES else [None]

    return _analyses(answers, [masks] * count, rngs, [set_size], ties, permutations, seed, state)[0]


def _check_sizes(set_sizes: Sequence[int | None]) -> None:
    for size in set_sizes:
        if size is not None and size < 1:
            raise UserError("The set size must be at least 1 (or leave it out for as many names as both sides "
                            "allow).")


def plain_python(errors: list[str], seen: list[str], unseen: list[str], permutations: int, seed: int) -> tuple[float, float]:
    """The same statistic and test as an ordinary loop, one deal and one error at a time: (o, p). With sets of
    different sizes o compares errors per name, as ``error_statistics`` does."""
    size_term = math.log(len(seen) / len(unseen)) if seen and unseen else 0.0

    def log_odds(s: set[str], u: set[str]) -> float:
        a = sum(1 for e in errors if e in s)
        b = sum(1 for e in errors if e in u)
        if a == 0 or b == 0:
            return math.inf if b == 0 and a else (-math.inf if a == 0 and b else math.nan)
        return math.log(a) - math.log(b) - size_term

    observed = log_odds(set(seen), set(unseen))
    pooled, k = seen + unseen, len(seen)
    rng = random.Random(seed)
    extreme = 0
    for _ in range(permutations):
        rng.shuffle(pooled)
        if log_odds(set(pooled[:k]), set(pooled[k:])) >= observed:
            extreme += 1
    return observed, (1 + extreme) / (1 + permutations)


# ---------------------------------------------------------------------------------------------- on a project
def model_answers(project: "Project", model: str) -> pd.DataFrame:
    """``model``'s name-cloze answers (the prompted kind when it has several), one row per passage."""
    from workbench.probes.cloze.analysis import passage_results

    results = passage_results(project, model)
    kinds = sorted(results["kind"].unique())
    if len(kinds) > 1:
        results = results[results["kind"] == (CLOZE_KIND if CLOZE_KIND in kinds else kinds[0])]
    if results.empty:
        raise UserError(f"'{model}' has no name-cloze answers yet: run the probe or import its results.")
    return results


@dataclass
class Grouping:
    """The grouping model's ranking and the groups cut from it, once or for every draw."""

    grouped_by: str
    groups: str
    rule: str
    ranking: pd.DataFrame  # book_id, accuracy: best first
    cuts: list  # Ends of every draw (one under 'all')
    states: list  # the state of each draw's random numbers once its books were drawn (None under 'all')

    def name_rngs(self) -> list[np.random.Generator | None]:
        """Each draw's random numbers where its books left them (fresh for every model and set size, so that
        each draws its names the same way)."""
        rngs = []
        for state in self.states:
            if state is None:
                rngs.append(None)
                continue
            rng = np.random.default_rng()
            rng.bit_generator.state = state
            rngs.append(rng)
        return rngs

    def masks(self, answers: Answers) -> list[tuple[np.ndarray, np.ndarray]]:
        ids = self.ranking["book_id"].to_numpy()
        return [(answers.book_mask(ids[ends.top]), answers.book_mask(ids[ends.bottom])) for ends in self.cuts]

    def note(self) -> str:
        """What the tie rule did at the cuts (the same for every draw: only which tied books differs)."""
        notes = [n for n in self.cuts[0].notes().values() if n]
        return f"books ranked by {self.grouped_by}: " + "; ".join(notes) if notes else ""


def grouping(project: "Project", grouped_by: str, groups: str = "decile", ties: str = ALL_TIED, *, seed: int = 0,
             draws: int = DEFAULT_DRAWS) -> Grouping:
    """The top and bottom books by ``grouped_by``'s accuracy (flagged books left out), cut by ``ties``: once
    (``all``), or for each of ``draws`` seeded draws."""
    from workbench.probes.cloze.analysis import ranked_books

    tie_rule(ties)
    if ties == DRAW_TIES and draws < 1:
        raise UserError("Drawing the ties needs at least one draw.")
    fraction = group_fraction(groups)
    ranking = ranked_books(project, grouped_by)
    if ties == ALL_TIED:
        return Grouping(grouped_by, groups, ties, ranking, [ranked_ends(ranking["accuracy"], fraction)], [None])
    rngs = [draw_rng(seed, d) for d in range(draws)]
    cuts = [ranked_ends(ranking["accuracy"], fraction, DRAW_TIES, rng) for rng in rngs]
    return Grouping(grouped_by, groups, ties, ranking, cuts, [rng.bit_generator.state for rng in rngs])


def error_analysis(project: "Project", model: str, by: str | None = None, *, groups: str = "decile",
                   set_size: int | None = None, permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0,
                   ties: str = ALL_TIED, draws: int = DEFAULT_DRAWS, state: TaskState | None = None) -> ErrorAnalysis:
    """The error analysis of ``model``'s answers, books grouped by ``by``'s accuracy (default: ``model``'s)."""
    return error_analyses(project, [model], by, groups=groups, set_sizes=[set_size], permutations=permutations,
                          seed=seed, ties=ties, draws=draws, state=state)[0]


def error_analyses(project: "Project", models: Sequence[str], grouped_by: str | None = None, *,
                   groups: str = "decile", set_sizes: Sequence[int | None] = (None,),
                   permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0, ties: str = ALL_TIED,
                   draws: int = DEFAULT_DRAWS, state: TaskState | None = None) -> list[ErrorAnalysis]:
    """The analysis of every model in ``models`` for every set size, all of them with the books grouped by one
    model: ``grouped_by``, or else the first of ``models``. Under ``draw`` the same draws of the books serve
    every model and set size."""
    if not models:
        raise UserError("Name at least one model whose errors are analysed.")
    _check_sizes(set_sizes)
    by = grouped_by or models[0]
    cut = grouping(project, by, groups, ties, seed=seed, draws=draws)
    results = []
    for model in models:
        answers = Answers(model_answers(project, model))
        for result in _analyses(answers, cut.masks(answers), cut.name_rngs, set_sizes, ties, permutations, seed,
                                state):
            result.model, result.grouped_by, result.groups = model, by, groups
            result.note = "; ".join(filter(None, [result.note, cut.note()]))
            results.append(result)
    return results


def summary_frame(results: ErrorAnalysis | Sequence[ErrorAnalysis], model: str | None = None, by: str | None = None,
                  groups: str | None = None) -> pd.DataFrame:
    """One row per analysis (``SUMMARY_COLUMNS``)."""
    if isinstance(results, ErrorAnalysis):
        results = [results]
    rows = []
    for result in results:
        rows.append({
            "model": result.model or model, "grouped_by": result.grouped_by or by or result.model or model,
            "groups": groups or result.groups, "tie_rule": result.tie_rule,
            "set_size": ALL_NAMES if result.set_size is None else int(result.set_size),
            "seen_names": result.seen_names, "unseen_names": result.unseen_names, "errors": result.errors,
            "in_seen": result.in_seen, "in_unseen": result.in_unseen, "log_odds": result.log_odds,
            "log_odds_p5": result.log_odds_p5, "log_odds_p95": result.log_odds_p95, "p_value": result.p_value,
            "p_value_p95": result.p_value_p95, "draws": result.draws, "permutations": result.permutations,
            "seed": result.seed, "seen_books": result.books.get("seen"), "unseen_books": result.books.get("unseen"),
            "held_out_books": result.books.get("held_out"), "note": result.note,
        })
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


