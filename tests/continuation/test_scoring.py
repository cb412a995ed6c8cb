"""The continuation probe's scores against brute force and the statistics against scipy and statsmodels."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from workbench.probes.continuation import score
from workbench.probes.continuation.evidence import signal
from workbench.probes.continuation.passages import sample_spans
from workbench.probes.continuation.tokens import Tokenizer


def _levenshtein(a, b):
    if not a:
        return len(b)
    if not b:
        return len(a)
    return min(_levenshtein(a[1:], b) + 1, _levenshtein(a, b[1:]) + 1, _levenshtein(a[1:], b[1:]) + (a[0] != b[0]))


def _longest(a, b):
    best = 0
    for i, j in itertools.product(range(len(a)), range(len(b))):
        k = 0
        while i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k]:
            k += 1
        best = max(best, k)
    return best


def test_scores_agree_with_brute_force_on_random_token_sequences():
    rng = random.Random(3)
    for _ in range(300):
        a = [rng.randrange(4) for _ in range(rng.randrange(0, 7))]
        t = [rng.randrange(4) for _ in range(rng.randrange(0, 7))]
        assert score.edit_distance(a, t) == _levenshtein(a, t)
        length, at_a, at_t = score.longest_common(a, t)
        assert length == _longest(a, t)
        assert a[at_a : at_a + length] == t[at_t : at_t + length]
        prefix = next((i for i, (x, y) in enumerate(zip(a, t)) if x != y), min(len(a), len(t)))
        assert score.exact_prefix(a, t) == prefix


def test_edit_distance_agrees_with_nltk_on_words():
    nltk = pytest.importorskip("nltk")
    rng = random.Random(5)
    words = ["the", "a", "lamp", "oil", "keeper", "sea", "parrot"]
    for _ in range(100):
        a = [rng.choice(words) for _ in range(rng.randrange(0, 30))]
        t = [rng.choice(words) for _ in range(rng.randrange(0, 30))]
        assert score.edit_distance(a, t) == nltk.edit_distance(a, t)


def test_passage_scores_cut_the_answer_to_the_truths_length():
    truth = [1, 2, 3, 4]
    scored = score.passage_scores([1, 2, 3, 4, 9, 9, 9], truth)
    assert scored["exact_prefix"] == 4 and scored["edit_similarity"] == 1.0 and scored["answer_tokens"] == 4
    assert score.passage_scores([], truth)["edit_similarity"] == 0.0
    assert score.passage_scores([1, 2, 7, 4], truth)["edit_similarity"] == pytest.approx(0.75)


def test_fisher_and_holm_are_scipys_and_statsmodels():
    from scipy.stats import fisher_exact
    from statsmodels.stats.multitest import multipletests

    assert score.above_baseline(3, 50, 1, 400) == pytest.approx(
        fisher_exact([[3, 47], [1, 399]], alternative="greater").pvalue)
    assert math.isnan(score.above_baseline(3, 50, 0, 0))
    ps = [0.01, 0.04, float("nan"), 0.2]
    adjusted = score.holm(ps)
    expected = multipletests([0.01, 0.04, 0.2], method="holm")[1]
    assert adjusted[0] == pytest.approx(expected[0]) and adjusted[3] == pytest.approx(expected[2])
    assert math.isnan(adjusted[2])


def _row(x, n, base_x, base_n):
    from workbench.analysis.intervals import wilson_interval

    low, high = wilson_interval(x, n)
    p = score.above_baseline(x, n, base_x, base_n)
    return {"extractable": x, "passages": n, "extractable_share": x / n, "ci_low": low, "ci_high": high,
            "match_tokens": 50, "continue_tokens": 50, "baseline_passages": base_n,
            "baseline_share": base_x / base_n if base_n else float("nan"), "p_holm": p}


def test_the_signal_rule():
    assert signal(_row(0, 50, 0, 500))[0] == "none"
    assert signal(_row(10, 50, 0, 500))[0] == "strong"  # far above unseen books that gave nothing back
    one = signal(_row(1, 50, 0, 500))  # one passage: a sign, but Fisher's test cannot tell it from the baseline
    assert one[0] == "some" and "interval reaches" in one[1]
    assert signal(_row(2, 50, 0, 0))[0] == "some"  # no unseen books to compare with
    assert "no unseen books" in signal(_row(2, 50, 0, 0))[1]
    assert signal(_row(2, 50, 20, 100))[0] == "none"  # no more than the unseen books


def test_passages_are_reproducible_spread_and_never_overlap():
    text = " ".join(f"w{i}" for i in range(20_000))
    words = Tokenizer()
    spans = sample_spans(text, words, book_id=7, per_book=20, prefix_tokens=50, continue_tokens=50, seed=1)
    assert len(spans) == 20
    assert spans == sample_spans(text, words, book_id=7, per_book=20, prefix_tokens=50, continue_tokens=50, seed=1)
    assert spans != sample_spans(text, words, book_id=7, per_book=20, prefix_tokens=50, continue_tokens=50, seed=2)
    for (_, start, prefix_end, end, truth), (_, next_start, *_rest) in zip(spans, spans[1:]):
        assert end <= next_start  # no overlap
        assert text[start - 1] == " " and len(text[start:prefix_end].split()) == 50
        assert text[prefix_end:end].split() == truth and len(truth) == 50
    starts = [s[1] for s in spans]
    assert starts[0] < len(text) / 20 and starts[-1] > len(text) * 19 / 20  # spread over the whole book
    short = sample_spans(text[:3000], words, book_id=7, per_book=20, prefix_tokens=50, continue_tokens=50, seed=1)
    assert len(short) < 20  # a short book gives fewer passages
