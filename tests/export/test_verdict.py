"""The exposure report's verdict rule, on every table of signals of three sources (two about the model, one
about a reference corpus), and the sources' own signal rules on small tables."""

from __future__ import annotations

import itertools

import pytest

from workbench.export.evidence import CORPUS, MODEL, NONE, SOME, STRONG
from workbench.export.verdict import NONE_VERDICT, NOT_MEASURED, SOME_VERDICT, STRONG_VERDICT, verdict

ABOUT = {"cloze": MODEL, "decop": MODEL, "overlap": CORPUS}
CHOICES = (STRONG, SOME, NONE, None)


def expected(signals: dict[str, str | None]) -> tuple[str, bool]:
    """The rule written out case by case (an independent statement of the module text)."""
    model = [signals["cloze"], signals["decop"]]
    corpus = signals["overlap"]
    everything = [*model, corpus]
    if all(s is None for s in everything):
        return NOT_MEASURED, False
    disagree = STRONG in everything and NONE in everything
    if STRONG in model:
        return STRONG_VERDICT, disagree
    if corpus == STRONG or SOME in everything:
        return SOME_VERDICT, disagree
    return NONE_VERDICT, disagree


@pytest.mark.parametrize("cloze,decop,overlap", list(itertools.product(CHOICES, repeat=3)))
def test_every_table_of_three_signals(cloze, decop, overlap):
    signals = {"cloze": cloze, "decop": decop, "overlap": overlap}
    got = verdict(signals, ABOUT)
    assert (got.verdict, got.disagree) == expected(signals)
    cited = {part.split()[0] for part in got.rests_on.split("; ")} if got.verdict != NOT_MEASURED else set()
    if got.verdict == STRONG_VERDICT:  # it cites the model's strong measures, and nothing about a corpus as strong
        assert {k for k in ("cloze", "decop") if signals[k] == STRONG} <= cited
    if got.verdict == SOME_VERDICT:
        assert {k for k, s in signals.items() if s in (STRONG, SOME)} <= cited
    if got.disagree:  # both sides of a disagreement are named
        assert {k for k, s in signals.items() if s in (STRONG, NONE)} <= cited


def test_a_corpus_alone_is_never_strong_evidence_about_the_model():
    got = verdict({"cloze": None, "overlap": STRONG}, ABOUT)
    assert got.verdict == SOME_VERDICT and got.rests_on == "overlap strong (corpus)"
    assert verdict({"cloze": NONE, "overlap": STRONG}, ABOUT).disagree
    # without ``about``, every source is taken as about the model
    assert verdict({"overlap": STRONG}).verdict == STRONG_VERDICT


def test_unknown_signals_are_refused():
    with pytest.raises(ValueError):
        verdict({"cloze": "maybe"})


def test_the_sources_rules_on_small_tables():
    from workbench.probes.cloze.evidence import deciles, signal
    from workbench.probes.leakage.evidence import (
        decop_signal,
        frequency_signal,
        membership_signal,
        overlap_signal,
    )

    # name cloze: strong needs the interval above the baseline and at least 10%
    assert signal(0.30, 0.45, 0.02) == STRONG
    assert signal(0.05, 0.12, 0.02) == SOME  # above the baseline, interval under the floor
    assert signal(0.01, 0.12, 0.02) == SOME  # the interval reaches the baseline
    assert signal(0.15, 0.30, 0.20) == SOME
    assert signal(0.0, 0.02, 0.02) == NONE and signal(0.0, 0.0, 0.0) == NONE
    assert signal(0.05, 0.12, 0.02, floor=0.05) == STRONG
    import pandas as pd

    assert list(deciles(pd.Series([0.9, 0.1, 0.5, 0.5]))) == [9, 2, 5, 5]
    assert list(deciles(pd.Series([float(i) for i in range(20)]))) == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8,
                                                                      9, 9, 10, 10]
    # overlap: only long flagged matches count
    assert [overlap_signal(n) for n in (0, 5, 11, 12, 19, 20, 60)] == [NONE, NONE, NONE, SOME, SOME, STRONG, STRONG]
    assert frequency_signal(0, 0.0) == NONE and frequency_signal(1, 0.02) == SOME and frequency_signal(9, 0.6) == STRONG
    # membership: weak alone, strong only when strongly separated
    assert [membership_signal(x) for x in (0.3, 0.5, 0.51, 0.79, 0.8)] == [NONE, NONE, SOME, SOME, STRONG]
    # DE-COP: above chance, then against the clean books
    assert decop_signal(0.2, 0.5, None) == NONE
    assert decop_signal(0.01, 0.5, None) == SOME  # above chance, no clean books
    assert decop_signal(0.01, 0.5, 0.4) == STRONG
    assert decop_signal(0.01, 0.35, 0.4) == SOME
