"""The error analysis (Speak, Memory 6.1) on a small data set whose answer is known by hand, its randomization
test against exact enumeration, its tie rules (every tied book and name in, or random draws reported as a
spread), and end to end on imported results in the published format."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from workbench.cli import main
from workbench.errors import UserError
from workbench.probes.cloze.error_analysis import (
    deal_counts,
    error_analyses,
    error_analysis,
    error_statistics,
    plain_python,
)

TOP, BOTTOM = {1}, {2}


def answers(book_id: int, rows: list[tuple[str, str]]) -> list[dict]:
    """(gold, answer) pairs of one book as rows of the per-passage table."""
    return [{"book_id": book_id, "book": f"Book {book_id}", "gold": gold, "parsed": answer,
             "correct": answer.casefold() == gold.casefold(), "status": "ok"} for gold, answer in rows]


def known() -> pd.DataFrame:
    """Book 1 (memorized) is about Alice and the Rabbit, book 2 (not memorized) about Zelda and Quill; John is in
    both. Held-out books 3-5 have their own names; the model's errors there offer Alice 6 times (once as
    'alice'), Rabbit twice, Zelda twice, John 5 times, nobody once; it gets 4 answers right."""
    rows = answers(1, [("Alice", "Alice")] * 3 + [("Rabbit", "Rabbit")] * 2 + [("John", "John")])
    rows += answers(2, [("Zelda", "Mark")] * 3 + [("Quill", "Mark")] * 2 + [("John", "Mark")])
    held = [("Ned", "Alice")] * 5 + [("Ned", "alice"), ("Ned", "Rabbit"), ("Ora", "Rabbit"), ("Ora", "Zelda"),
                                     ("Ora", "Zelda"), ("Pip", "")] + [("Pip", "John")] * 5 + [("Pip", "Pip")] * 4
    for number, chunk in enumerate((held[:8], held[8:14], held[14:]), start=3):
        rows += answers(number, chunk)
    failed = answers(5, [("Pip", "Alice")])[0] | {"status": "failed", "correct": False}
    return pd.DataFrame(rows + [failed])


def test_the_known_answer():
    result = error_statistics(known(), TOP, BOTTOM, permutations=20_000, seed=1)
    names = result.names
    assert list(names.loc[names["set"] == "seen", "name"]) == ["Alice", "Rabbit"]  # tied on PMI; shown by passages
    assert list(names.loc[names["set"] == "unseen", "name"]) == ["Zelda", "Quill"]  # John is on both sides: out
    assert list(names["rank"]) == [1, 1, 1, 1]  # names tied on PMI share a rank
    assert list(names["predicted_in_errors"]) == [6, 2, 2, 0]
    assert (result.seen_names, result.unseen_names) == (2, 2)
    assert result.set_size is None and result.errors == 16  # the held-out answers scored wrong (not the failed call)
    assert (result.in_seen, result.in_unseen) == (8, 2)
    assert result.log_odds == pytest.approx(math.log(8 / 2))
    # every deal of {Alice 6, Rabbit 2, Zelda 2, Quill 0} into two pairs: S' gets 8 or more in 2 of 6
    assert result.p_value == pytest.approx(2 / 6, abs=0.01)
    assert result.books == {"seen": 1, "unseen": 1, "held_out": 3}


def test_pmi_of_names_and_books():
    frame = known()
    names = error_statistics(frame, TOP, BOTTOM, permutations=1).names.set_index("name")
    total = len(frame[frame["gold"] != ""])  # every passage with a gold name, the failed one too
    assert names.loc["Alice", "pmi"] == pytest.approx(math.log(3 * total / (3 * 6)))
    assert names.loc["Alice", "book_id"] == 1 and names.loc["Quill", "book_id"] == 2


def quill_elsewhere() -> pd.DataFrame:
    """``known`` with Quill also named once in held-out book 4: a lower PMI with book 2 than Zelda's."""
    frame = known()
    rows = frame.index[(frame["book_id"] == 4) & (frame["gold"] == "Ora")]
    frame.loc[rows[0], "gold"] = "Quill"
    return frame


def test_the_set_size_takes_the_most_associated_names():
    result = error_statistics(quill_elsewhere(), TOP, BOTTOM, set_size=1, permutations=100)
    names = result.names
    assert list(names.loc[names["set"] == "unseen", "name"]) == ["Zelda"]
    assert error_statistics(known(), TOP, BOTTOM, set_size=50, permutations=1).seen_names == 2  # as many as there are


def test_names_tied_on_pmi_at_the_set_size_all_go_in():
    """Alice and Rabbit are each named in book 1 only, so they have the same PMI: a set of one cannot choose
    between them by PMI, and neither their number of passages nor the alphabet may choose for it."""
    frame = quill_elsewhere()
    result = error_statistics(frame, TOP, BOTTOM, set_size=1, permutations=20_000, seed=3)
    names = result.names
    assert sorted(names.loc[names["set"] == "seen", "name"]) == ["Alice", "Rabbit"]
    assert names.loc[names["set"] == "seen", "tied_at_cut"].all()
    assert (result.seen_names, result.unseen_names) == (2, 1) and (result.in_seen, result.in_unseen) == (8, 2)
    # sets of different sizes: errors per name are compared, log((8 / 2) / (2 / 1))
    assert result.log_odds == pytest.approx(math.log(2))
    assert result.log_odds_p5 == result.log_odds_p95 == result.log_odds and result.draws == 0
    # the test deals the three pooled names into sets of two and one: S' gets 8 or more in 2 of 3 deals
    assert result.p_value == pytest.approx(2 / 3, abs=0.01)
    assert "S holds 2 and U 1 names" in result.note
    renamed = frame.replace({"gold": {"Alice": "Zed"}, "parsed": {"Alice": "Zed", "alice": "zed"}})
    again = error_statistics(renamed, TOP, BOTTOM, set_size=1, permutations=20_000, seed=3)
    assert (again.in_seen, again.log_odds, again.p_value) == (result.in_seen, result.log_odds, result.p_value)


def test_drawn_ties_report_the_spread_over_draws():
    """Drawing one of Alice (offered 6 times) and Rabbit (twice) for S, and one of Zelda (twice) and Quill
    (never) for U: o is log(6/2), log(2/2) or infinite, by the draw."""
    result = error_statistics(known(), TOP, BOTTOM, set_size=1, permutations=500, seed=5, ties="draw", draws=200)
    assert result.tie_rule == "draw" and result.draws == 200 and len(result.spread) == 200
    assert set(np.round(result.spread, 9)) == {round(math.log(3), 9), 0.0, math.inf}
    low, high = np.percentile(result.spread, [5, 95], method="inverted_cdf")
    assert (result.log_odds_p5, result.log_odds_p95) == (low, high) == (0.0, math.inf)
    assert result.log_odds == np.sort(result.spread)[99]  # the median draw (the lower middle one)
    assert (result.seen_names, result.unseen_names) == (1, 1)
    assert "were drawn at random" in result.note and "median of 200 draws" in result.note
    again = error_statistics(known(), TOP, BOTTOM, set_size=1, permutations=500, seed=5, ties="draw", draws=200)
    assert np.array_equal(again.spread, result.spread) and again.p_value == result.p_value  # seeded
    with pytest.raises(UserError, match="not a way of treating ties"):
        error_statistics(known(), TOP, BOTTOM, ties="alphabetical")


def test_each_deal_is_a_uniform_split_of_the_names():
    counts = np.array([1, 10, 100, 0, 0, 1000], dtype=np.int64)  # every subset of named names has its own sum
    null = deal_counts(counts, 3, 60_000, 2)
    splits = {}
    for chosen in itertools.combinations(range(6), 3):
        total = int(counts[list(chosen)].sum())
        splits[total] = splits.get(total, 0) + 1 / 20
    observed = {total: np.mean(null == total) for total in splits}
    assert observed == pytest.approx(splits, abs=0.01)


def test_the_p_value_converges_on_the_exact_one():
    counts = np.array([9, 4, 3, 1, 0, 2, 0, 1], dtype=np.int64)
    k, observed = 4, 9 + 4 + 3 + 1
    total = int(counts.sum())
    splits = [sum(counts[list(c)]) for c in itertools.combinations(range(8), k)]
    exact = np.mean([s * (total - observed) >= observed * (total - s) for s in splits])
    null = deal_counts(counts, k, 40_000, 0)
    approximate = (1 + np.sum(null * (total - observed) >= observed * (total - null))) / 40_001
    assert approximate == pytest.approx(exact, abs=0.006)


def test_the_plain_python_loop_gives_the_same_statistic():
    frame = known()
    result = error_statistics(frame, TOP, BOTTOM, permutations=5_000, seed=0)
    held = frame[frame["book_id"] > 2]
    wrong = held[(held["status"] == "ok") & ~held["correct"]]
    o, p = plain_python([a.casefold() for a in wrong["parsed"]], ["alice", "rabbit"], ["zelda", "quill"], 5_000, 0)
    assert o == pytest.approx(result.log_odds) and p == pytest.approx(result.p_value, abs=0.03)


def test_no_names_on_one_side_means_no_sets():
    frame = known()
    frame = frame[frame["book_id"] != 2]
    result = error_statistics(frame, TOP, {99}, permutations=10)
    assert result.seen_names == 0 and math.isnan(result.log_odds) and "no name" in result.note


def test_on_imported_results_errors_lean_towards_memorized_books(published):
    result = error_analysis(published, "chatgpt", "gpt4", permutations=2_000, seed=0)
    assert result.seen_names > 0 and result.errors > 0
    assert result.log_odds > 0.5 and result.p_value < 0.05
    again = error_analysis(published, "chatgpt", "gpt4", permutations=2_000, seed=0)
    assert (again.log_odds, again.p_value) == (result.log_odds, result.p_value)  # seeded
    quintiles = error_analysis(published, "chatgpt", "gpt4", groups="quintile", permutations=100)
    assert quintiles.books["seen"] == 8


ERROR_COLUMNS = ["grouped_by", "set_size", "tie_rule", "log_odds", "log_odds_p5", "log_odds_p95", "p_value"]


def test_the_command_groups_every_model_by_one_model_and_names_it(published, capsys):
    path = str(published.path)
    capsys.readouterr()
    assert main(["cloze", "errors", path, "--model", "gpt4", "--model", "chatgpt", "--set-size", "all",
                 "--set-size", "5", "--permutations", "500", "--format", "csv"]) == 0
    frame = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert set(ERROR_COLUMNS) <= set(frame.columns)
    assert list(frame["model"]) == ["gpt4", "gpt4", "chatgpt", "chatgpt"]
    assert set(frame["grouped_by"]) == {"gpt4"}  # the first model groups both, as the paper groups by GPT-4
    assert list(frame["set_size"].astype(str)) == ["all", "5", "all", "5"] and set(frame["tie_rule"]) == {"all"}
    chatgpt = error_analysis(published, "chatgpt", "gpt4", permutations=500)
    assert frame.loc[2, "log_odds"] == pytest.approx(chatgpt.log_odds)
    own = error_analysis(published, "chatgpt", permutations=500)  # grouped by itself only when asked
    assert own.grouped_by == "chatgpt" and own.books != chatgpt.books
    assert main(["cloze", "errors", path, "--model", "chatgpt", "--grouped-by", "gpt4", "--ties", "draw", "--draws",
                 "20", "--set-size", "10", "--permutations", "200", "--format", "csv"]) == 0
    row = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out)).iloc[0]
    assert (row["grouped_by"], row["tie_rule"], row["draws"], row["set_size"]) == ("gpt4", "draw", 20, 10)
    assert row["log_odds_p5"] <= row["log_odds"] <= row["log_odds_p95"]
    assert main(["cloze", "errors", path, "--model", "gpt4", "--names", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "set,rank,name,pmi,book,book_id,book_source,book_external_id,passages,predicted_in_errors,tied_at_cut")


def test_every_tied_book_goes_in_or_is_drawn(published):
    """The analyses of one grouping share its books: under 'all' every book tied at a cut is in its group;
    under 'draw' each draw fills the decile from the tie, and the spread is over those draws."""
    from workbench.probes.cloze.analysis import book_accuracy, ranked_books

    ranking = ranked_books(published, "gpt4")
    scores = ranking["accuracy"].to_numpy()
    share = math.ceil(len(scores) * 0.1)
    tied_bottom = int((scores == scores[-share]).sum())
    assert tied_bottom > share  # the made-up results have many books with no name right, like the real ones
    result = error_analysis(published, "gpt4", permutations=100)
    assert result.books["unseen"] == int((scores <= scores[-share]).sum())
    assert f"{tied_bottom} books tie at the bottom cut" in result.note
    assert f"the bottom group holds {result.books['unseen']} books, not {share}" in result.note
    drawn = error_analysis(published, "gpt4", permutations=100, ties="draw", draws=30)
    assert drawn.books["unseen"] == share and drawn.draws == 30 and len(set(drawn.spread)) > 1
    assert "were drawn at random" in drawn.note and len(book_accuracy(published, "gpt4")) == 40
    both = error_analyses(published, ["gpt4", "chatgpt"], set_sizes=[None, 5], ties="draw", draws=30, permutations=50)
    assert [r.grouped_by for r in both] == ["gpt4"] * 4 and both[0].log_odds == drawn.log_odds
