"""Reading many stored overlaps at once: the numbers ``overlap.derive`` gives, for 57,000 answers in seconds.

A stored overlap answer is mostly numbers: the n-gram counts of every token of the longest match (``ngram``),
the match's token ids (``ids``) and the match length at every token (``suffix_lengths``). Parsed with
``json.loads`` and scored one answer at a time, 57,000 whole-passage matches take minutes, and millions of
small Python lists that the GUI thread's garbage collector then has to look at. Here, a chunk of answers at
a time:

- each answer's three long lists are cut out of its text (their keys can only stand where they are: inside
  a JSON string every quote is escaped) and the rest, a few numbers and the match's text, is parsed with
  ``json.loads``;
- the lists of the chunk are parsed together with NumPy (``_integers``) and their layout is checked against
  what ``query_passage`` writes: as many rows of counts as ids, token i holding min(order, i + 1) pairs. A
  chunk that does not match is read one answer at a time with ``derive`` instead, as is any answer that
  cannot be split;
- the chance model runs on arrays (``log_probs``): m(g, s), how often each n-gram of the match occurs inside
  it, from dense ranks of the n-grams order by order; then the removal and the interpolated probabilities
  as ``chance.without_span`` and ``chance.sequence_log_prob`` compute them, in the same floating-point
  operations (NumPy's logarithm and exponentials may differ from ``math``'s in the last bit).

``derive_many`` gives ``derive``'s columns; ``overlap_frame`` adds the passages' books.

Answers stored with their numbers already derived (``overlap.derived_extra``, in the response's ``extra``) are
not scored again: ``stored_columns`` reads those numbers, all of a read's ``extra`` texts parsed by one
``json.loads``, and says which answers have none derived under the settings asked for.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from workbench.probes.leakage.chance import BACKGROUND, CHANCE_LEVEL, PRIOR, ChanceModel, chance_of_occurring
from workbench.probes.leakage.wordlevel import count_words
from workbench.runs import parse_json_texts

SUFFIX, IDS, NGRAM = '"suffix_lengths": [', '"ids": [', '"ngram": ['
#: answers parsed and scored together: fewer steps for short answers, bounded memory for long ones
CHUNK, CHUNK_CHARS = 20_000, 16_000_000
COLUMNS = ["tokens", "longest", "longest_text", "frequency", "covered_share", "log_prob", "chance_p",
           "unlikely_by_chance", "chance_model", "chance_removed", "start"]
_BRACKETS = bytes.maketrans(b"[]", b"  ")


class Answer:
    """An answer split by ``split_answer``: its small fields parsed (``fields``), its long lists as text (None:
    absent)."""

    __slots__ = ("fields", "suffix", "ids", "ngram")

    def __init__(self, fields: dict[str, Any], suffix: str | None, ids: str | None, ngram: str | None):
        self.fields, self.suffix, self.ids, self.ngram = fields, suffix, ids, ngram

    def has_tokens(self) -> bool:
        return self.ids is not None and len(self.ids) > 2


#: an answer as ``query_passage`` lays it out, up to its n-gram counts and after them (matched whole: a field
#: moved, added or of another kind sends the answer to ``split_answer``)
_HEAD = re.compile(r'\{"tokens": (\d+), "suffix_lengths": (\[[\d, ]*\]), "longest": (\d+), "start": (\d+), '
                   r'"text": ("[^"\\]*(?:\\.[^"\\]*)*"), "frequency": (\d+), "ids": (\[[\d, ]*\]), "span_words": (\d+), ')
_TAIL = re.compile(r', "vocabulary": (\d+), "corpus_tokens": (\d+), "corpus_words": (\d+)\}')
#: what ``_row`` gives of an answer, in this order
FIELDS = ("tokens", "suffix", "longest", "start", "text", "frequency", "ids", "span_words", "ngram", "vocabulary",
          "corpus_words")
_NEEDED = ("tokens", "longest", "start", "text", "frequency")


def _row(raw: str) -> tuple | None:
    """``FIELDS`` of an answer: numbers as digits or numbers, the text decoded, the lists as JSON text (ids
    None when the answer has none: stored before the chance model needed them); None when it is read whole.
    Answers laid out as ``query_passage`` writes them are read by two regular expressions and a search for
    the end of the counts; others are split (``split_answer``)."""
    at = raw.find(NGRAM)
    head = _HEAD.fullmatch(raw, 0, at) if at > 0 else None
    if head is not None:
        begin = at + len(NGRAM) - 1
        end = begin + 2 if raw.startswith("]", begin + 1) else raw.find("]]]", begin) + 3
        tail = _TAIL.fullmatch(raw, end) if end > begin + 1 else None
        if tail is not None:
            tokens, suffix, longest, start, text, frequency, ids, span_words = head.groups()
            vocabulary, _, corpus_words = tail.groups()
            text = text[1:-1] if "\\" not in text else json.loads(text)
            return (tokens, suffix, longest, start, text, frequency, ids, span_words, raw[begin:end], vocabulary,
                    corpus_words)
    answer = split_answer(raw)
    if answer is None or any(key not in answer.fields for key in _NEEDED):
        return None
    fields = answer.fields
    if not all(type(fields[key]) is int for key in ("tokens", "longest", "start", "frequency")) or not all(
            type(fields.get(key)) in (int, float) for key in ("vocabulary", "corpus_words")):
        return None
    span_words = fields["span_words"] if "span_words" in fields else count_words(fields["text"])
    return (fields["tokens"], answer.suffix, fields["longest"], fields["start"], fields["text"], fields["frequency"],
            answer.ids, span_words, answer.ngram, fields["vocabulary"], fields["corpus_words"])


def split_answer(raw: str) -> Answer | None:
    """The answer's small fields parsed and its lists as text; None when it cannot be split so (then it is
    read whole)."""
    cuts: list[tuple[int, int] | None] = []
    for key, close in ((SUFFIX, "]"), (IDS, "]"), (NGRAM, "]]]")):
        at = raw.find(key)
        if at < 0:
            cuts.append(None)
            continue
        begin = at + len(key) - 1  # the list's "["
        if raw.startswith("]", begin + 1):
            cuts.append((begin, begin + 2))
            continue
        end = raw.find(close, begin)
        if end < 0:
            return None
        cuts.append((begin, end + len(close)))
    present = sorted(c for c in cuts if c is not None)
    if any(a[1] > b[0] for a, b in zip(present, present[1:])):
        return None
    kept, last = [], 0
    for begin, end in present:
        kept += [raw[last:begin], "[]"]
        last = end
    kept.append(raw[last:])
    try:
        fields = json.loads("".join(kept))
    except ValueError:
        return None
    if not isinstance(fields, dict):
        return None
    suffix, ids, ngram = (raw[c[0] : c[1]] if c is not None else None for c in cuts)
    return Answer(fields, suffix, ids, ngram)


def _integers(texts: Sequence[str]) -> np.ndarray | None:
    """Every whole number in ``texts`` (JSON lists of lists of whole numbers), in order; None if any is not one."""
    joined = ", ".join(texts).encode("ascii", "replace").translate(_BRACKETS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # text that is not all numbers stops the parse: the count below tells
        values = np.fromstring(joined, dtype=np.int64, sep=",")
    return values if values.size == joined.count(b",") + 1 else None


def _pairs(lengths: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """The pairs of counts a match of ``lengths`` tokens holds with counts up to ``orders``: sum of min(K, i + 1)."""
    short = np.minimum(lengths, orders)
    return short * (short + 1) // 2 + (lengths - short) * orders


def log_probs(ids: Sequence[str], ngrams: Sequence[str], frequencies: Sequence[int], vocabularies: Sequence[int],
              stored_orders: Sequence[int], *, remove: bool, order: int, prior: float = PRIOR) -> np.ndarray | None:
    """``chance.span_chance``'s log-probability of each of these matches (their tokens and counts as stored:
    JSON text, at least one token each), their ``frequencies`` occurrences taken out when ``remove``; None
    when the texts are not laid out as ``query_passage`` writes them with counts up to ``stored_orders``."""
    count = len(ids)
    lengths = np.fromiter((t.count(",") + 1 for t in ids), np.int64, count)
    rows = np.fromiter((t.count("]]") for t in ngrams), np.int64, count)
    stored = np.asarray(stored_orders, np.int64)
    if count == 0 or (rows != lengths).any() or (stored < 1).any():
        return None if count else np.zeros(0)
    tokens, counts = _integers(ids), _integers(ngrams)
    if tokens is None or counts is None or tokens.size != lengths.sum() or counts.size != 2 * _pairs(lengths, stored).sum():
        return None
    answer = np.repeat(np.arange(count), lengths)
    position = np.arange(tokens.size) - (np.cumsum(lengths) - lengths)[answer]
    held = np.minimum(stored[answer], position + 1)  # the pairs of counts each token holds
    cell = np.cumsum(held) - held  # where its order-1 pair starts
    full, context = counts[0::2], counts[1::2]
    used = np.minimum(held, max(1, int(order)))  # the orders the model reads (``sequence_log_prob``)
    top = int(used.max())
    f = np.maximum(0, np.asarray(frequencies, np.int64))[answer] if remove else None
    inside = _inside(tokens, answer, position, top) if remove else None
    # order 1: [c(w), N], less f * m(w, s) and f * L
    n1, c1 = context[cell], full[cell]
    if remove:
        n1 = np.maximum(0, n1 - f * lengths[answer])
        c1 = np.minimum(n1, np.maximum(0, c1 - f * inside[0]))
    else:
        n1 = np.maximum(0, n1)
        c1 = np.minimum(n1, np.maximum(0, c1))
    p = (c1 + 1.0) / (n1 + np.asarray(vocabularies, np.int64)[answer])
    for k in range(2, top + 1):
        at = np.flatnonzero(used >= k)
        where = cell[at] + (k - 1)
        h, c = context[where], full[where]
        if remove:  # c(h) less f * m(h, s), h the k - 1 tokens before; c(h w) less f * m(h w, s)
            h = np.maximum(0, h - f[at] * inside[k - 2][at - 1])
            c = np.minimum(h, np.maximum(0, c - f[at] * inside[k - 1][at]))
        else:
            h = np.maximum(0, h)
            c = np.minimum(h, np.maximum(0, c))
        p[at] = (c + prior * p[at]) / (h + prior)
    return np.bincount(answer, weights=np.log(p), minlength=count)  # summed token by token, in order


def _inside(tokens: np.ndarray, answer: np.ndarray, position: np.ndarray, orders: int) -> list[np.ndarray]:
    """m(g, s) for the n-gram of each order k = 1 .. ``orders`` ending at each token (1 where it does not fit):
    how often it occurs inside its own match. An n-gram occurs twice only if its first k - 1 tokens and its
    last token do, so order k ranks only those, from the ranks of order k - 1."""
    width = int(tokens.max()) + 1
    _, rank, times = np.unique(answer * width + tokens, return_inverse=True, return_counts=True)
    found = [times[rank]]
    repeated = found[0] >= 2
    for k in range(2, orders + 1):
        m = np.ones(tokens.size, np.int64)
        candidates = np.flatnonzero((position[1:] >= k - 1) & (found[-1][:-1] >= 2) & repeated[1:]) + 1
        if candidates.size:
            _, inverse, times = np.unique(rank[candidates - 1] * width + tokens[candidates], return_inverse=True,
                                          return_counts=True)
            m[candidates] = times[inverse]
            rank = np.zeros(tokens.size, np.int64)
            rank[candidates] = inverse
        found.append(m)
    return found


def derive_many(raws: Sequence[str], stored_orders: Sequence[int | None], *, model: ChanceModel,
                derive: Callable[..., dict[str, Any]], backgrounds: Sequence[str | None] | None = None,
                background_orders: Sequence[int | None] | None = None, prior: float = PRIOR,
                positions: bool = False, messages: tuple[str, str]) -> dict[str, list]:
    """``derive``'s numbers (``overlap.derive``) for each stored answer in ``raws``, as columns (with
    ``suffix_lengths`` too when ``positions``). ``stored_orders``: the highest order each answer's counts hold
    (its run's ``max_order``); with a background ``model``, ``backgrounds`` holds each passage's answer from
    the background corpus (None: not asked) and ``background_orders`` their orders. ``messages``: what the
    chance column says of an answer stored before the removal, and of one the background has not counted."""
    out: dict[str, list] = {name: [] for name in COLUMNS + (["suffix_lengths"] if positions else [])}
    for start, stop in _chunks(raws):
        chunk = _derive_chunk(raws[start:stop], stored_orders[start:stop], model, derive,
                              backgrounds[start:stop] if backgrounds is not None else None,
                              background_orders[start:stop] if background_orders is not None else None,
                              prior, positions, messages)
        for name, values in out.items():
            values.extend(chunk[name])
    return out


def _chunks(raws: Sequence[str]) -> list[tuple[int, int]]:
    """Runs of answers of at most ``CHUNK_CHARS`` characters (and ``CHUNK`` answers) together."""
    bounds, start, size = [], 0, 0
    for n, raw in enumerate(raws):
        size += len(raw)
        if size > CHUNK_CHARS or n - start >= CHUNK:
            bounds.append((start, n))
            start, size = n, len(raw)
    return [*bounds, (start, len(raws))] if start < len(raws) else bounds


_EMPTY = (0, None, 0, 0, "", 0, None, 0, None, 0, 0)  # stands in for an answer read whole


def _derive_chunk(raws, stored_orders, model, derive, backgrounds, background_orders, prior, positions, messages):
    old_answer, not_counted = messages
    background = model.kind == BACKGROUND
    size = len(raws)
    rows = [_row(raw) for raw in raws]
    whole = {n for n, row in enumerate(rows) if row is None}
    (tokens, suffix, longest, start, text, frequency, ids, span_words, ngram, vocabulary,
     corpus_words) = (list(column) for column in zip(*(row or _EMPTY for row in rows)))
    tokens, longest, start, frequency = (list(map(int, c)) for c in (tokens, longest, start, frequency))
    counted = [split_answer(b) if b is not None else None for b in backgrounds] if background else None
    described = [model.describe()] * size
    # the answers whose chance derive computes (span_chance on counts holding tokens), computed here in bulk
    asked: list[int] = []
    for n in range(size):
        if n in whole or not longest[n]:
            continue
        if background:
            other = counted[n]
            if backgrounds[n] is not None and other is None:
                whole.add(n)  # a background answer that cannot be split: both read whole
            elif other is None or other.fields.get("text") != text[n]:
                described[n] = not_counted.format(model.corpus)
            elif other.has_tokens():
                asked.append(n)
        elif ids[n] is None:
            described[n] = old_answer
        elif len(ids[n]) > 2:
            asked.append(n)
    log_prob = np.full(size, math.nan)
    removed = np.zeros(size, np.int64)
    if asked:
        if background:
            sets = [(counted[n].ids, counted[n].ngram, counted[n].fields.get("frequency"),
                     counted[n].fields.get("vocabulary"), background_orders[n]) for n in asked]
        else:
            sets = [(ids[n], ngram[n], frequency[n], int(vocabulary[n]) if type(vocabulary[n]) is str else vocabulary[n],
                     stored_orders[n]) for n in asked]
        values = None
        if all(type(o) is int and type(f) is int and type(v) is int and g is not None for _, g, f, v, o in sets):
            values = log_probs(*(list(column) for column in zip(*sets)), remove=not background, order=model.order,
                               prior=prior)
        if values is None:  # not laid out as query_passage writes: read whole
            whole.update(asked)
        else:
            log_prob[asked] = values
            if not background:
                removed[asked] = [frequency[n] for n in asked]
    # the searched corpus's size less the match's own occurrences (chance.searched_size), as arrays
    searched = np.maximum(0.0, np.asarray(list(map(float, corpus_words)))
                          - np.maximum(0, np.asarray(frequency, np.int64)) * np.asarray(list(map(float, span_words))))
    chance = np.asarray(list(map(chance_of_occurring, log_prob.tolist(), searched.tolist())))
    columns: dict[str, list] = {
        "tokens": tokens, "longest": longest, "longest_text": text, "frequency": frequency,
        "covered_share": [m / t if t else math.nan for m, t in zip(longest, tokens)],
        "log_prob": log_prob.tolist(), "chance_p": chance.tolist(), "unlikely_by_chance": (chance < CHANCE_LEVEL).tolist(),
        "chance_model": described, "chance_removed": removed.tolist(), "start": start,
    }
    if positions:
        columns["suffix_lengths"] = [" ".join(str(v) for v in json.loads(s)) if s else "" for s in suffix]
    for n in sorted(whole):
        data = json.loads(raws[n])
        row = derive(data, model=model, prior=prior,
                     background=json.loads(backgrounds[n]) if background and backgrounds[n] is not None else None)
        if positions:
            row["suffix_lengths"] = " ".join(str(v) for v in data["suffix_lengths"])
        for name, values in columns.items():
            values[n] = row[name]
    return columns


def stored_columns(extras: Sequence[str | None], *, version: int, kind: str, order: int, prior: float,
                   described: str, stored: Sequence[str]) -> tuple[dict[str, list], list[int]]:
    """``derive``'s columns from the numbers stored in each answer's ``extra`` (JSON text or None; its
    ``"derived"``: ``stored`` and the settings they were derived under), and the places of the answers whose
    numbers were not derived under these settings by this ``version`` (their values in the columns are
    placeholders, for the caller to replace)."""
    parsed = parse_json_texts(extras)  # in chunks: one call for 57,000 froze the window for half a second
    rows = [extra.get("derived") if type(extra) is dict else None for extra in parsed]
    del parsed
    needed = {*stored, "version", "model", "order", "prior"}
    settings = (version, kind, order, prior)
    missing = [n for n, row in enumerate(rows) if type(row) is not dict or not row.keys() >= needed
               or (row["version"], row["model"], row["order"], row["prior"]) != settings]
    if missing:
        blank = dict.fromkeys(stored)
        for n in missing:
            rows[n] = blank
    numbers = {name: [row[name] for row in rows] for name in stored}
    del rows
    for name in ("log_prob", "chance_p"):  # no chance estimate: stored as null
        numbers[name] = [math.nan if value is None else value for value in numbers[name]]
    tokens, longest, chance = numbers["tokens"], numbers["longest"], numbers["chance_p"]
    columns = {
        "tokens": tokens, "longest": longest, "longest_text": numbers["longest_text"],
        "frequency": numbers["frequency"],
        "covered_share": [m / t if t else math.nan for m, t in zip(longest, tokens)],
        "log_prob": numbers["log_prob"], "chance_p": chance,
        "unlikely_by_chance": [p < CHANCE_LEVEL for p in chance],
        "chance_model": [described] * len(tokens),
        "chance_removed": numbers["chance_removed"], "start": numbers["start"],
    }
    return columns, missing
