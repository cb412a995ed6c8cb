"""How likely a shared sequence is by chance: the n-gram model behind the overlap's "unlikely by chance" flag.

The flag asks: would a sequence this probable turn up at least once, by coincidence, in a corpus of this
size? The probability must come from text that does not contain the match, or the answer goes round in a
circle: estimated on the corpus that holds the match, every n-gram inside it is counted at least as often as
the match itself, so the more copies of a text a corpus holds, the more probable (and the less suspicious)
its own copies look. (The leakage study estimates its model on an independent corpus, Gigaword.) Two chance
models, both counted from an n-gram index:

- **the same corpus, the match's own occurrences removed** (the default). With the matched span
  s = s_1 .. s_L found f times, every count the model uses, c(g) for an n-gram g inside s, becomes
  c'(g) = c(g) - f * m(g, s), where m(g, s) is the number of places at which g occurs inside s: each
  occurrence of the span holds m(g, s) occurrences of g, and those are the occurrences of g that lie inside an
  occurrence of the span. The corpus size in tokens becomes N - f * L. This is exact when the span's
  occurrences do not overlap one another, which they cannot unless the span begins with the tokens it ends
  with; where they do overlap, a little more than they hold is removed. Counts never go below 0, and
  c'(h w) is kept at most c'(h) (a context h ending the span is removed while an h w running on past
  the span's end is not: without the cap the estimate could exceed 1);
- **a background corpus** the scholar names (a local index or a remote infini-gram index): the span's text,
  tokenized as the background is, is counted there, and the counts are used as they are. In a corpus chosen
  for being independent of the texts studied, the span's occurrences are other writers' uses of it (a
  common phrase is common there), which are evidence about chance and are kept. Should a background hold
  copies of the passage after all, the chance comes out higher: the error goes the cautious way. How often
  the span occurs in the background is kept with the answer.

The probability of the span is that of an interpolated n-gram model of order ``order`` (default 5, as
the study's KenLM model) with Dirichlet (additive-prior) smoothing:
P(w | h) = (c(h w) + mu * P(w | h')) / (c(h) + mu), h' = h without its first token, mu = 1, and add-one
unigrams P(w) = (c(w) + 1) / (N + V), V the vocabulary size the index reports (unchanged by the removal,
so that the span's own tokens stay in it). Unlike KenLM's modified Kneser-Ney it needs nothing but
counts, which both a local index and the public API give.

The chance of at least one occurrence is 1 - (1 - p)^n (the study's footnote 3), n the size of the corpus
searched in white-space words (remote corpora: in tokens), less the words of the span's own occurrences
there (f times the span's words), so that for both models the copies judged are never part of what could
have produced them by chance. Below ``CHANCE_LEVEL`` the overlap is unlikely to be a coincidence.

Adding further copies of a matched passage to the corpus therefore never raises its chance: they add
exactly what is removed again.

The removal cannot tell copies of a passage from other writers' uses of the same words: for a short
common phrase ("said I, it is") it removes the evidence that the phrase is common, and the phrase looks
less likely by chance than it is. On twelve Gutenberg books (0.9 million words), the short overlaps (5 to
8 tokens) of passages from books not in the corpus were flagged 9 times in 12 by the default, twice with an
independent background (LitBank's other books) and never by the circular estimate. ``CAVEAT`` says so
wherever the default is shown.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

MAX_ORDER = 5
PRIOR = 1.0
CHANCE_LEVEL = 0.05
SAME = "same"
BACKGROUND = "background"
CAVEAT = ("Taking out the match's occurrences also takes out other uses of a common phrase, so short overlaps "
          "lean towards 'unlikely by chance'; an independent background corpus avoids this.")


# ---------------------------------------------------------------------------------------------- the model
def sequence_log_prob(ngram: Sequence[Sequence[Sequence[int]]], vocabulary: int, *, order: int = MAX_ORDER,
                      prior: float = PRIOR) -> float:
    """Natural-log probability of a token run under the interpolated n-gram model (see the module text).

    ``ngram[i]`` holds, for token i and k = 1 .. min(order, i + 1), ``[c(h w), c(h)]`` with h the k - 1
    tokens before it (k = 1: ``[c(w), N]``)."""
    total = 0.0
    for row in ngram:
        (unigram, corpus_tokens), *higher = row
        p = (unigram + 1.0) / (corpus_tokens + vocabulary)
        for full, context in higher[: max(0, order - 1)]:
            p = (full + prior * p) / (context + prior)
        total += math.log(p)
    return total


def chance_of_occurring(log_prob: float, n: float) -> float:
    """1 - (1 - p)^n for p = exp(log_prob), computed without losing tiny values."""
    if not math.isfinite(log_prob):
        return math.nan
    if n <= 0:
        return 0.0
    p = math.exp(log_prob)
    if p >= 1.0:
        return 1.0
    return -math.expm1(n * math.log1p(-p))


# ---------------------------------------------------------------------------------------------- the removal
def occurrences_inside(gram: Sequence[int], span: Sequence[int]) -> int:
    """m(g, s): at how many places the token run ``gram`` occurs inside ``span`` (overlapping places count)."""
    gram, span = list(gram), list(span)
    size = len(gram)
    if size == 0 or size > len(span):
        return 0
    return sum(1 for i in range(len(span) - size + 1) if span[i : i + size] == gram)


def without_span(ngram: Sequence[Sequence[Sequence[int]]], span: Sequence[int],
                 frequency: int) -> list[list[list[int]]]:
    """The counts ``ngram`` (laid out as ``sequence_log_prob`` reads them, for the tokens of ``span``) with the
    span's ``frequency`` occurrences taken out: c(g) - f * m(g, s), and N - f * L; never below 0, and c(h w)
    never above c(h) (an h at the span's end, removed, may be followed by w just after the span, kept)."""
    span = [int(t) for t in span]
    if len(ngram) != len(span):
        raise ValueError("the counts and the span are of different lengths")
    f = max(0, int(frequency))
    # m(g, s) of every run of up to the longest order the counts hold, counted in one pass over the span
    # (asking ``occurrences_inside`` gram by gram is quadratic: minutes for 57,000 whole-passage overlaps)
    places = Counter(tuple(span[i : i + size]) for size in range(1, max((len(row) for row in ngram), default=0) + 1)
                     for i in range(len(span) - size + 1))

    def inside(gram: tuple[int, ...]) -> int:
        return places[gram]

    reduced = []
    for i, row in enumerate(ngram):
        out = []
        for k, (full, context) in enumerate(row, start=1):
            gram = tuple(span[i - k + 1 : i + 1])
            context = max(0, int(context) - f * (len(span) if k == 1 else inside(gram[:-1])))
            full = min(context, max(0, int(full) - f * inside(gram)))
            out.append([full, context])
        reduced.append(out)
    return reduced


# ---------------------------------------------------------------------------------------------- describing
@dataclass(frozen=True)
class ChanceModel:
    """Which counts the chance of an overlap comes from: the searched corpus less the match's own occurrences
    (``kind`` SAME), or a background corpus (``kind`` BACKGROUND, ``corpus`` its name)."""

    kind: str = SAME
    corpus: str = ""
    order: int = MAX_ORDER
    prior: float = PRIOR

    @property
    def smoothing(self) -> str:
        return f"interpolated with Dirichlet smoothing (mu = {self.prior:g}), add-one unigrams"

    def describe(self) -> str:
        """One line naming the model, for tables and figures."""
        if self.kind == BACKGROUND:
            where = f"background corpus '{self.corpus}' (its counts as they are)"
        else:
            where = "same corpus, the match's own occurrences removed"
        return f"{self.order}-gram on the {where}; {self.smoothing}"


def span_chance(counts: dict[str, Any], n: float, *, remove: bool, order: int = MAX_ORDER,
                prior: float = PRIOR) -> dict[str, Any]:
    """Log-probability and chance of a span from ``counts`` (the index's answer for it: ``ids``, ``frequency``,
    ``ngram``, ``vocabulary``), its own ``frequency`` occurrences taken out when ``remove``, and ``n`` the size
    of the corpus it could occur in by chance."""
    ids = counts.get("ids") or []
    if not ids:
        return {"log_prob": math.nan, "chance_p": math.nan, "removed": 0}
    removed = int(counts["frequency"]) if remove else 0
    ngram = without_span(counts["ngram"], ids, removed)
    log_prob = sequence_log_prob(ngram, counts["vocabulary"], order=order, prior=prior)
    return {"log_prob": log_prob, "chance_p": chance_of_occurring(log_prob, n), "removed": removed}


def searched_size(corpus_size: float, frequency: int, span_size: float) -> float:
    """The searched corpus's size less the span's own occurrences (never below 0)."""
    return max(0.0, float(corpus_size) - max(0, int(frequency)) * float(span_size))
