"""Book frequency (Speak, Memory 6.2): n-gram counts per book against name-cloze accuracy."""

import random

import numpy as np
import pytest
from scipy.stats import spearmanr

from tests.fixtures.leakage import add_cloze_answers, add_cloze_book, write_corpus
from workbench.errors import UserError
from workbench.probes.leakage import corpora, frequency, passages

# three books whose sentences are all in the reference corpus, two that are not; one sentence per name
IN_CORPUS = [
    "The ferry left the harbour at dawn, and Ada watched the gulls. Nobody on deck spoke until Bea looked back.",
    "In the spring the orchard flowered and Cai walked in it. Then the rain came, and Dov stayed in the lane.",
    "She kept the letters for Eve in a tin box under the bed. Every winter she read them to Fay again.",
]
NOT_IN_CORPUS = [
    "Quartz zebras juggled Gil near seven purple volcanoes. Hal painted umbrellas beneath frozen waterfalls quickly.",
    "Ivy sorted copper kettles for Jon under tangerine skies. Kit whistled sonatas inside empty observatories slowly.",
]
NAMES = [["Ada", "Bea"], ["Cai", "Dov"], ["Eve", "Fay"], ["Gil", "Hal"], ["Ivy", "Jon", "Kit"]]
YEARS = [1850, 1900, 1990, 1880, 2005]


@pytest.fixture
def books(project, tmp_path):
    corpora.build_corpus(project, "mini", [write_corpus(tmp_path / "corpus")])
    ids = {}
    for number, (text, names, year) in enumerate(zip(IN_CORPUS + NOT_IN_CORPUS, NAMES, YEARS)):
        ids[number] = add_cloze_book(project, f"Book {number}", text, names, year=year)
    return ids


def test_grams_are_counted_in_the_corpus_and_averaged_per_book(project, books):
    report = frequency.run_frequency(project, "mini", per_book=2, gram=4, seed=3)
    assert report.failed == 0 and report.total == 10  # two of each book's passages
    grams = frequency.grams_frame(project, "mini")
    index = corpora.open_index(project, "mini")
    for row in grams.itertuples():
        text = passages.passages_frame(project, [row.item_id])["text"].iloc[0]
        start, expected = frequency.pick_gram(text, 4, random.Random(f"3:{row.item_id}"))
        assert row.gram == expected and len(row.gram.split()) == 4
        assert row.count == index.count(index.encode(row.gram).ids.tolist())
    books_frame = frequency.book_frequency(project, "mini")
    assert set(books_frame["passages"]) == {2}
    means = grams.groupby("book_id")["count"].mean()
    for row in books_frame.itertuples():
        assert row.mean_count == pytest.approx(means[row.book_id])
    assert books_frame.set_index("book")["group"].to_dict() == {
        "Book 0": "before 1928", "Book 1": "before 1928", "Book 2": "1928 and later", "Book 3": "before 1928",
        "Book 4": "1928 and later"}


def test_the_sample_is_seeded(project, books):
    first = frequency.sample_passages(project, 1, 7, None)
    assert frequency.sample_passages(project, 1, 7, None) == first
    assert len(first) == 5


def test_correlation_with_cloze_accuracy_overall_and_per_group(project, books):
    frequency.run_frequency(project, "mini", per_book=10, gram=3)
    # accuracy: books in the corpus get their names right, the others do not (one right answer of three)
    answers = {}
    for number, (_, ids) in books.items():
        for passage_id in ids:
            answers[passage_id] = "<name>x</name>"
        if number < 3:
            for passage_id, name in zip(ids, NAMES[number]):
                answers[passage_id] = f"<name>{name}</name>"
    answers[books[4][1][0]] = "<name>Ivy</name>"
    add_cloze_answers(project, "gpt-x", answers)
    table = frequency.book_frequency(project, "mini", model="gpt-x")
    assert table.set_index("book")["accuracy"].to_dict() == pytest.approx(
        {"Book 0": 1.0, "Book 1": 1.0, "Book 2": 1.0, "Book 3": 0.0, "Book 4": 1 / 3})
    rho = frequency.correlations(project, "mini", model="gpt-x").set_index("group")
    expected = spearmanr(table["mean_count"], table["accuracy"])
    assert rho.loc["all", "rho"] == pytest.approx(expected.statistic)
    assert rho.loc["all", "p_value"] == pytest.approx(expected.pvalue)
    assert rho.loc["all", "books"] == 5
    assert rho.loc["all", "ci_low"] <= rho.loc["all", "rho"] <= rho.loc["all", "ci_high"]
    before = table[table["group"] == "before 1928"]
    assert rho.loc["before 1928", "rho"] == pytest.approx(spearmanr(before["mean_count"], before["accuracy"]).statistic)
    assert rho.loc["1928 and later", "books"] == 2 and np.isnan(rho.loc["1928 and later", "rho"])  # too few books


def test_a_tag_can_split_the_books(project, books):
    from workbench.corpus.library import set_tags

    frequency.run_frequency(project, "mini", per_book=1)
    for number, (book_id, _) in books.items():
        set_tags(project, book_id, {"shelf": "A" if number % 2 else "B"})
    table = frequency.book_frequency(project, "mini", split="shelf")
    assert sorted(table["group"]) == ["A", "A", "B", "B", "B"]
    with pytest.raises(UserError, match="No book has the tag 'genre'"):
        frequency.book_frequency(project, "mini", split="genre")


def test_without_cloze_results_the_accuracy_is_blank_and_a_named_model_is_an_error(project, books):
    frequency.run_frequency(project, "mini", per_book=1)
    assert frequency.book_frequency(project, "mini")["accuracy"].isna().all()
    with pytest.raises(UserError, match="no model called 'nobody'"):
        frequency.book_frequency(project, "mini", model="nobody")


def test_counts_made_with_other_settings_are_never_mixed_in(project, books):
    """A count with 2-word n-grams after one with 4-word n-grams showed a mixture, and going back to the first
    settings never showed their results again."""
    frequency.run_frequency(project, "mini", per_book=2, gram=4, seed=3)
    four = frequency.grams_frame(project, "mini", {"per_book": 2, "gram": 4, "seed": 3})
    first_book, second_book = books[0][0], books[1][0]
    frequency.run_frequency(project, "mini", per_book=1, gram=2, seed=3, book_ids=[first_book])
    newest = frequency.book_frequency(project, "mini")  # by default: the newest count's settings, whole
    assert newest.attrs["settings"] == {"per_book": 1, "gram": 2, "seed": 3}
    assert newest["book_id"].tolist() == [first_book] and newest["passages"].tolist() == [1]
    again = frequency.grams_frame(project, "mini", {"per_book": 2, "gram": 4, "seed": 3})
    assert again.sort_values("item_id").reset_index(drop=True).equals(four.sort_values("item_id").reset_index(drop=True))
    assert {len(g.split()) for g in again["gram"]} == {4} and len(again) == 10
    only = frequency.book_frequency(project, "mini", settings={"per_book": 2, "gram": 4, "seed": 3},
                                    book_ids=[second_book])
    assert only["book_id"].tolist() == [second_book] and only["passages"].tolist() == [2]


def test_a_corpus_built_again_under_the_same_name_starts_without_the_old_counts(project, books, tmp_path):
    frequency.run_frequency(project, "mini", per_book=2, gram=4, seed=3)
    assert frequency.book_frequency(project, "mini")["mean_count"].max() > 0
    corpora.remove_corpus(project, "mini", delete_files=True)
    other = tmp_path / "other"
    other.mkdir()
    (other / "unrelated.txt").write_text("Nothing in these lines comes from any of the books at all.\n" * 20)
    corpora.build_corpus(project, "mini", [other])
    assert frequency.book_frequency(project, "mini").empty  # the counts were made in the corpus removed
    frequency.run_frequency(project, "mini", per_book=2, gram=4, seed=3)
    assert frequency.book_frequency(project, "mini")["mean_count"].max() == 0
