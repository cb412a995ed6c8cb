"""A small real project for the exposure report's tests (``study``)."""

from __future__ import annotations

import pytest

from tests.fixtures.leakage import add_cloze_answers, add_cloze_book, write_corpus

# the first sentence of each is in the corpus (tests.fixtures.leakage.CORPUS), whole: a long verbatim overlap
IN_CORPUS = ("In the spring the orchard flowered all at once, and for a week the whole valley smelled of honey. "
             "Then the rain came, and the petals lay brown in the mud of the lane.")
OUTSIDE = ("Quartz zebras juggled near seven purple volcanoes while Hal painted umbrellas. "
           "Ivy sorted copper kettles under tangerine skies and whistled sonatas.")


@pytest.fixture
def study(project, tmp_path):
    """Four books: 'Orchard' (its text in the corpus; the model names 9 of 10), 'Zebras' (not in the corpus;
    1 of 10), 'Kettles' (only imported passages, 0 of 10) and 'Unread' (nothing measured)."""
    from workbench.probes.leakage import corpora, frequency, overlap

    corpora.build_corpus(project, "mini", [write_corpus(tmp_path / "corpus")])
    orchard, orchard_ids = add_cloze_book(project, "Orchard", IN_CORPUS, ["In"],
                                          imported=[(f"[MASK] walked by the orchard, day {k}.", "Ann") for k in range(9)])
    zebras, zebra_ids = add_cloze_book(project, "Zebras", OUTSIDE, ["Hal", "Ivy"],
                                       imported=[(f"[MASK] saw the zebras, day {k}.", "Bob") for k in range(8)])
    kettles, kettle_ids = add_cloze_book(project, "Kettles", "No names here at all.", [],
                                         imported=[(f"[MASK] polished a kettle, day {k}.", "Cy") for k in range(10)])
    unread, _ = add_cloze_book(project, "Unread", "Nothing.", [])
    answers = {pid: "In" if i == 0 else ("Ann" if i < 9 else "Nobody") for i, pid in enumerate(orchard_ids)}
    answers.update({pid: ("Hal" if i == 0 else "Zed") for i, pid in enumerate(zebra_ids)})
    answers.update({pid: "Zed" for pid in kettle_ids})
    add_cloze_answers(project, "gpt", answers)
    overlap.run_overlap(project, "mini", book_ids=[orchard, zebras])
    frequency.run_frequency(project, "mini", per_book=2, gram=4, seed=1, book_ids=[orchard, zebras])
    return project, {"Orchard": orchard, "Zebras": zebras, "Kettles": kettles, "Unread": unread}
