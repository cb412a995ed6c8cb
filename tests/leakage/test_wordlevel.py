"""Word-level tokens: the same tokens as the regular expression they stand for, numbered consistently."""

import re
import unicodedata

import numpy as np
import pytest

from workbench.probes.leakage.tokenizing import TWO_UNIT_MAX, UNIT_MAX, to_units, width_for
from workbench.probes.leakage.wordlevel import Vocabulary, count_words, pieces

QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
                        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"'})
SAMPLES = [
    "",
    "   \n\t ",
    "It was the best of times, it was the worst of times.",
    "\u201cDon\u2019t,\u201d said Mrs. O\u2019Hara\u2014quietly\u2026 (page 42_b) \u2018ok\u2019",
    "Caf\u00e9 na\u00efve \u00fcber stra\u00dfe \u0394\u03b5\u03bb\u03c6\u03bf\u03af \u4e2d\u6587\u5b57 emoji \U0001F600 ok \U0001D400x",
    "cafe\u0301 (decomposed) and caf\u00e9 (composed) are one word after NFC",
    "tabs\tand\nnew\r\nlines   and\u00a0non-breaking\u2003spaces",
]


def reference_tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFC", text).translate(QUOTES)
    return re.findall(r"\w+|[^\w\s]", text)


@pytest.mark.parametrize("text", SAMPLES)
def test_tokens_are_those_of_the_regular_expression(text):
    vocabulary = Vocabulary()
    assert vocabulary.tokens(text) == reference_tokens(text)
    ids = vocabulary.encode(text, grow=True)
    assert vocabulary.decode(ids) == reference_tokens(text)


def test_the_same_word_gets_the_same_id_across_texts_and_unknown_words_get_minus_one():
    vocabulary = Vocabulary()
    first = vocabulary.encode("the cat sat on the mat", grow=True)
    assert first[0] == first[4]
    again = vocabulary.encode("the mat, the cat")
    assert vocabulary.decode(again) == ["the", "mat", "\N{REPLACEMENT CHARACTER}", "the", "cat"]
    assert again[2] == -1
    assert len(vocabulary) == 5  # ',' was not added without grow


def test_offsets_point_at_the_tokens_as_written_and_curly_quotes_count_as_straight_ones():
    vocabulary = Vocabulary()
    spans = vocabulary.encode_spans("\u201cWell,\u201d she said", grow=True)
    text, ids, starts, ends = spans.text, spans.ids, spans.starts, spans.ends
    assert [text[s:e] for s, e in zip(starts, ends)] == ["\u201c", "Well", ",", "\u201d", "she", "said"]
    assert vocabulary.decode(ids) == ['"', "Well", ",", '"', "she", "said"]
    assert ids[0] == ids[3]


def test_vocabulary_survives_saving_and_loading(tmp_path):
    vocabulary = Vocabulary()
    ids = vocabulary.encode(" ".join(SAMPLES), grow=True)
    vocabulary.save(tmp_path / "v.txt")
    loaded = Vocabulary.load(tmp_path / "v.txt")
    assert loaded.words == vocabulary.words
    assert np.array_equal(loaded.encode(" ".join(SAMPLES)), ids)


def test_long_texts_are_cut_between_words_only():
    text = "alpha beta\ngamma " * 50
    cut = list(pieces(text, size=37))
    assert "".join(cut) == text
    assert all(p[-1].isspace() for p in cut[:-1])
    vocabulary = Vocabulary()
    assert vocabulary.decode(vocabulary.encode(text, grow=True)) == text.split()


@pytest.mark.parametrize("text", SAMPLES)
def test_word_count_is_that_of_str_split(text):
    assert count_words(text) == len(text.split())
    assert Vocabulary().encode_spans(text).words == len(text.split())


def test_two_unit_tokens_never_match_from_their_second_half():
    assert width_for(UNIT_MAX) == 1 and width_for(UNIT_MAX + 1) == 2
    ids = np.array([0, 1, 32767, 70000, TWO_UNIT_MAX])
    units = to_units(ids, 2)
    high, low = units[0::2], units[1::2]
    assert high.max() < low.min()  # the halves come from disjoint ranges
    assert units.max() < 65535  # 65535 separates documents
    decoded = high.astype(np.int64) * 32767 + (low.astype(np.int64) - 32767)
    assert np.array_equal(decoded, ids)
    assert to_units(np.array([-1]), 1)[0] == UNIT_MAX


def test_threads_preparing_texts_at_once_from_a_cold_start_agree():
    """The build tokenizes documents in several threads; the shared tables are built once, whole."""
    from concurrent.futures import ThreadPoolExecutor

    from workbench.probes.leakage import wordlevel

    texts = [" ".join(SAMPLES) * (n + 1) for n in range(16)]
    expected = [Vocabulary().tokens(t) for t in texts]
    for _ in range(5):
        wordlevel._tables.clear()
        with ThreadPoolExecutor(max_workers=8) as pool:
            prepared = list(pool.map(wordlevel.prepare, texts))
        vocabulary = Vocabulary()
        for _text, done, tokens in zip(texts, prepared, expected):
            spans = vocabulary.assign(done, grow=True)
            assert vocabulary.decode(spans.ids) == tokens
