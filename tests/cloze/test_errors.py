"""The error analysis (Speak, Memory 6.1) on a small data set whose answer is known by hand, its randomization
test against deals made one at a time, and end to end on imported results in the published format."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from workbench.cli import main
from workbench.probes.cloze.errors import deal_counts, error_analysis, error_statistics, plain_python

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
    assert list(names.loc[names["set"] == "seen", "name"]) == ["Alice", "Rabbit"]  # by PMI, then passages
    assert list(names.loc[names["set"] == "unseen", "name"]) == ["Zelda", "Quill"]  # John is on both sides: out
    assert list(names["predicted_in_errors"]) == [6, 2, 2, 0]
    assert result.set_size == 2 and result.errors == 16  # the held-out answers scored wrong (not the failed call)
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


def test_the_set_size_takes_the_most_associated_names():
    result = error_statistics(known(), TOP, BOTTOM, set_size=1, permutations=100)
    assert list(result.names["name"]) == ["Alice", "Zelda"]
    assert (result.in_seen, result.in_unseen) == (6, 2)
    assert error_statistics(known(), TOP, BOTTOM, set_size=50, permutations=1).set_size == 2  # as many as there are


def test_the_vectorised_deals_are_the_deals_made_one_at_a_time():
    counts = np.array([6, 2, 2, 0, 5, 0, 1, 3], dtype=np.int64)
    k, deals, seed = 4, 4_500, 9
    fast = deal_counts(counts, k, deals, seed)
    rng = np.random.default_rng(seed)
    named = [index for index, c in enumerate(counts) if c]
    by_hand = []
    for start in range(0, deals, 2_000):  # the same numbers, block by block, then one deal and one name at a time
        for row in rng.random((min(2_000, deals - start), len(named))):
            taken = total = 0
            for j, index in enumerate(named):
                if row[j] * (len(counts) - j) < k - taken:
                    taken += 1
                    total += int(counts[index])
            by_hand.append(total)
    assert fast.tolist() == by_hand


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
    assert result.set_size == 0 and math.isnan(result.log_odds) and "no name" in result.note


def test_on_imported_results_errors_lean_towards_memorized_books(published):
    result = error_analysis(published, "chatgpt", "gpt4", permutations=2_000, seed=0)
    assert result.set_size > 0 and result.errors > 0
    assert result.log_odds > 0.5 and result.p_value < 0.05
    again = error_analysis(published, "chatgpt", "gpt4", permutations=2_000, seed=0)
    assert (again.log_odds, again.p_value) == (result.log_odds, result.p_value)  # seeded
    quintiles = error_analysis(published, "chatgpt", "gpt4", groups="quintile", permutations=100)
    assert quintiles.books["seen"] == 8


def test_the_command_prints_the_fixed_columns(published, capsys):
    path = str(published.path)
    capsys.readouterr()
    assert main(["cloze", "errors", path, "--model", "chatgpt", "--by", "gpt4", "--permutations", "500",
                 "--format", "csv"]) == 0
    header, row = capsys.readouterr().out.strip().splitlines()
    assert header == "model,by,set_size,errors,in_seen,in_unseen,log_odds,p_value"
    assert row.startswith("chatgpt,gpt4,")
    assert main(["cloze", "errors", path, "--model", "gpt4", "--names", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "set,rank,name,pmi,book,book_id,book_source,book_external_id,passages,predicted_in_errors")


def test_books_tied_at_the_cut_are_said(published):
    from workbench.probes.cloze.analysis import book_accuracy, decile_sets

    sets = decile_sets(published, "gpt4", save=False)
    result = error_analysis(published, "gpt4", permutations=100)
    tied = int(sets["tied_at_cut"].sum())
    accuracy = book_accuracy(published, "gpt4")
    assert (tied > 0) == ("tie at the cut" in result.note) and len(accuracy) == 40
