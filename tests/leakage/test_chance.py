"""The overlap's chance model is estimated on text that does not hold the match: the same corpus with the
match's own occurrences taken out of the counts, or a background corpus (local or remote)."""

import json
import math
import random

import pytest

from tests.fixtures.infini_gram_server import FakeInfiniGram, serve
from tests.fixtures.leakage import CORPUS, write_corpus
from workbench.errors import UserError
from workbench.probes.leakage import corpora, overlap
from workbench.probes.leakage.chance import chance_of_occurring, occurrences_inside, sequence_log_prob, without_span

# 72 white-space words (written for this test); the word-level tokenizer makes 87 tokens of them
PASSAGE = (
    "Marguerite folded the old map twice, pressed it flat against the windowpane, and traced with one cold "
    "finger the road her grandfather had walked in the winter of the flood. The river had taken the mill, "
    "the orchard, the chapel bells; only the stone bridge stood, crooked and stubborn, where the valley "
    "narrowed. She would go there tomorrow, she decided, before the ferrymen woke, carrying bread, a lantern, "
    "and the brass key."
)
OTHER_TEXTS = [
    "The bridge over the river was old and the road to the mill was long in the winter.",
    "Her grandfather kept a lantern by the door and a key on a nail, and he walked to the chapel every morning.",
    "They carried bread and cheese to the orchard, and the ferrymen sang on the water before dawn.",
]


def _corpus_with_copies(project, folder, name: str, base: list[str], passage: str, copies: int):
    write_corpus(folder)  # the four fixture documents
    for number, text in enumerate(base):
        (folder / f"base{number}.txt").write_text(text + "\n", encoding="utf-8")
    for number in range(copies):
        (folder / f"copy{number}.txt").write_text(passage + "\n", encoding="utf-8")
    return corpora.build_corpus(project, name, [folder])


def _passage_row(project, corpus: str, passage_file, background: str | None = None):
    overlap.run_overlap(project, corpus, str(passage_file))
    if background:
        ids = overlap._answers(project, corpus)["item_id"].astype(int).tolist()
        overlap.run_background(project, corpus, background, passage_ids=ids)
    frame = overlap.overlap_frame(project, corpus, background=background)
    assert len(frame) == 1
    return frame.iloc[0]


@pytest.fixture
def passage_file(tmp_path):
    path = tmp_path / "passage.txt"
    path.write_text(PASSAGE + "\n", encoding="utf-8")
    return path


def test_a_passage_found_51_times_is_no_more_likely_by_chance_than_one_found_once(project, tmp_path, passage_file):
    """The issue's example: the same long verbatim passage once and 51 times. Counted on the corpus that
    holds it, 51 copies made the passage look probable (chance 0.98 in the issue); its own occurrences
    taken out, both are flagged, and the chance of the one found 51 times is not higher."""
    assert len(PASSAGE.split()) == 72
    once = _corpus_with_copies(project, tmp_path / "once", "once", OTHER_TEXTS, PASSAGE, 1)
    often = _corpus_with_copies(project, tmp_path / "often", "often", OTHER_TEXTS, PASSAGE, 51)
    one = _passage_row(project, once.name, passage_file)
    many = _passage_row(project, often.name, passage_file)
    assert one["longest"] == many["longest"] == one["tokens"]  # the whole passage
    assert (one["frequency"], many["frequency"]) == (1, 51)
    assert one["unlikely_by_chance"] and many["unlikely_by_chance"]
    assert many["chance_p"] < 1e-20
    assert many["chance_p"] <= one["chance_p"]
    assert many["log_prob"] == pytest.approx(one["log_prob"], rel=1e-12)
    assert (one["chance_removed"], many["chance_removed"]) == (1, 51)


def _random_text(rng: random.Random, words: list[str], size: int) -> str:
    return " ".join(rng.choice(words) for _ in range(size))


@pytest.mark.parametrize("seed", range(6))
def test_adding_copies_of_a_passage_never_raises_its_chance(project, tmp_path, seed):
    """Property over random corpora: a passage matched whole keeps or lowers its chance as copies of it are
    added (and its background chance too: the copies never reach the background). Small vocabularies make
    the n-grams of the passage frequent elsewhere too, and some bases hold the passage inside a document."""
    rng = random.Random(seed)
    words = rng.sample(["the", "a", "mill", "river", "bridge", "of", "and", ",", ".", "stone", "road", "old"],
                       rng.randint(4, 9))
    base = [_random_text(rng, words, rng.randint(8, 60)) for _ in range(rng.randint(2, 6))]
    passage = _random_text(rng, words, rng.randint(6, 24))
    if seed % 2:  # the passage also inside a longer document of the base
        base.append(_random_text(rng, words, 5) + " " + passage + " " + _random_text(rng, words, 5))
    path = tmp_path / "passage.txt"
    path.write_text(passage + "\n", encoding="utf-8")
    background = tmp_path / "background"
    background.mkdir()
    (background / "b.txt").write_text(_random_text(rng, words, 80) + "\n", encoding="utf-8")
    corpora.build_corpus(project, "background", [background])
    rows = {}
    chosen = sorted(rng.sample(range(1, 9), 3)) + [51]
    if seed % 2:
        chosen = [0] + chosen  # matched whole without any copy
    for copies in chosen:
        name = f"k{copies}"
        _corpus_with_copies(project, tmp_path / name, name, base, passage, copies)
        rows[copies] = (_passage_row(project, name, path), _passage_row(project, name, path, "background"))
    for fewer, more in zip(chosen, chosen[1:]):
        (same_fewer, background_fewer), (same_more, background_more) = rows[fewer], rows[more]
        assert same_more["longest"] == same_more["tokens"] and same_more["frequency"] > same_fewer["frequency"]
        assert same_more["chance_p"] <= same_fewer["chance_p"] + 1e-15, (fewer, more)
        assert background_more["chance_p"] <= background_fewer["chance_p"] + 1e-15, (fewer, more)


def test_the_removal_equals_counting_only_occurrences_outside_the_span():
    """For spans whose occurrences cannot overlap (none begins with the tokens it ends with), c - f * m equals
    the count of the n-gram's occurrences that lie inside no occurrence of the span, by brute force."""
    rng = random.Random(3)
    checked = 0
    for _ in range(300):
        docs = [[rng.randrange(4) for _ in range(rng.randint(0, 40))] for _ in range(rng.randint(1, 4))]
        span = [rng.randrange(4) for _ in range(rng.randint(1, 7))]
        if any(span[:b] == span[-b:] for b in range(1, len(span))):
            continue  # its occurrences could overlap
        if rng.random() < 0.5:
            docs.append([1, 2] + span + span + [3])
        places = [(d, q) for d, doc in enumerate(docs) for q in range(len(doc) - len(span) + 1)
                  if doc[q : q + len(span)] == span]
        covered = {(d, q + j) for d, q in places for j in range(len(span))}

        def count(gram, outside_only, docs=docs, covered=covered, span=span, places=places):
            n = len(gram)
            if n == 0:
                return sum(len(doc) for doc in docs) - (len(covered) if outside_only else 0)
            return sum(1 for d, doc in enumerate(docs) for p in range(len(doc) - n + 1) if doc[p : p + n] == gram
                       and not (outside_only and all((d, p + j) in covered for j in range(n))
                                and any(q <= p and p + n <= q + len(span) for e, q in places if e == d)))

        ngram = [[[count(span[i - k + 1 : i + 1], False), count(span[i - k + 1 : i], False)]
                  for k in range(1, min(5, i + 1) + 1)] for i in range(len(span))]
        reduced = without_span(ngram, span, len(places))
        for i in range(len(span)):
            for k in range(1, min(5, i + 1) + 1):
                outside = count(span[i - k + 1 : i + 1], True)
                context = count(span[i - k + 1 : i], True)
                assert reduced[i][k - 1] == [min(outside, context), context]
        checked += 1
    assert checked > 100
    assert occurrences_inside([1, 1], [1, 1, 1]) == 2 and occurrences_inside([2], [1]) == 0


def test_a_background_corpus_gives_the_counts(project, tmp_path, passage_file):
    """With a background corpus, the n-gram counts of the match's text come from it (in its own tokens); n is
    still the size of the corpus searched, less the match's occurrences there."""
    target = _corpus_with_copies(project, tmp_path / "target", "target", OTHER_TEXTS, PASSAGE, 3)
    folder = tmp_path / "giga"
    folder.mkdir()
    for number, text in enumerate(OTHER_TEXTS + CORPUS):
        (folder / f"g{number}.txt").write_text(text + "\n", encoding="utf-8")
    corpora.build_corpus(project, "giga", [folder])
    row = _passage_row(project, "target", passage_file, "giga")
    assert row["chance_model"].startswith("5-gram on the background corpus 'giga'")
    assert row["chance_removed"] == 0  # the background does not hold the passage
    index = corpora.open_index(project, "giga")
    try:
        ids = index.encode(row["longest_text"]).ids
        counts = overlap.ngram_counts(index, ids, 5)
        expected = sequence_log_prob(counts, index.vocabulary_size)
    finally:
        index.close()
    assert row["log_prob"] == pytest.approx(expected, rel=1e-12)
    n = corpora.get_corpus(project, "target").words - 3 * 72
    assert row["chance_p"] == pytest.approx(chance_of_occurring(expected, n), rel=1e-9)
    same = overlap.overlap_frame(project, "target").iloc[0]
    assert same["log_prob"] != row["log_prob"]  # the default model is another one
    assert target.name == "target"


def test_a_remote_background_is_asked_and_its_counts_are_used_as_they_are(project, tmp_path, passage_file):
    """In a background corpus the match's occurrences are other uses of the same words (a common phrase is
    common there): its counts are kept as they are, even where it holds the passage (the error is cautious)."""
    _corpus_with_copies(project, tmp_path / "target", "target", OTHER_TEXTS, PASSAGE, 1)
    fake = FakeInfiniGram(OTHER_TEXTS + [PASSAGE, PASSAGE])  # a background that holds the passage twice
    server, url = serve(fake)
    try:
        corpora.add_remote(project, "web", url, fake.index)
        row = _passage_row(project, "target", passage_file, "web")
        ids = fake.tokenize(row["longest_text"])[0]
        assert fake.count(ids) == 2 and row["chance_removed"] == 0
        # by hand: the background's counts, on the llama vocabulary size
        total = 0.0
        for i in range(len(ids)):
            p = (fake.count(ids[i : i + 1]) + 1) / (fake.count([]) + 32000)
            for k in range(2, min(5, i + 1) + 1):
                h = fake.count(ids[i - k + 1 : i])
                p = (fake.count(ids[i - k + 1 : i + 1]) + p) / (h + 1.0)
            total += math.log(p)
    finally:
        server.shutdown()
        server.server_close()
    assert row["log_prob"] == pytest.approx(total, rel=1e-12)
    assert row["chance_model"].startswith("5-gram on the background corpus 'web' (its counts as they are)")


def test_the_background_must_be_another_corpus_and_asked_first(project, tmp_path, passage_file):
    _corpus_with_copies(project, tmp_path / "target", "target", OTHER_TEXTS, PASSAGE, 1)
    corpora.build_corpus(project, "other", [write_corpus(tmp_path / "other")])
    overlap.run_overlap(project, "target", str(passage_file))
    with pytest.raises(UserError, match="another corpus"):
        overlap.run_background(project, "target", "target", passage_ids=[1])
    row = overlap.overlap_frame(project, "target", background="other").iloc[0]
    assert row["chance_p"] != row["chance_p"] and not row["unlikely_by_chance"]
    assert row["chance_model"] == overlap.NOT_COUNTED.format("other")


def test_answers_stored_before_the_fix_are_not_given_a_circular_chance(project, tmp_path, passage_file):
    _corpus_with_copies(project, tmp_path / "target", "target", OTHER_TEXTS, PASSAGE, 1)
    first = overlap.run_overlap(project, "target", str(passage_file))
    raw = json.loads(project.db.execute("SELECT raw FROM responses").fetchone()[0])
    del raw["ids"], raw["span_words"]
    with project.db.transaction():  # as a run of the old layout stored it
        project.db.execute("UPDATE responses SET raw = ?, extra = NULL", [json.dumps(raw)])
        project.db.execute("UPDATE runs SET params = ? WHERE id = ?", [json.dumps({"max_order": 5}), first.run_id])
    row = overlap.overlap_frame(project, "target").iloc[0]
    assert row["chance_p"] != row["chance_p"] and row["chance_model"] == overlap.OLD_ANSWER
    again = overlap.run_overlap(project, "target", str(passage_file))
    assert again.run_id != first.run_id and again.processed == 1  # asked again in the new layout
    assert overlap.overlap_frame(project, "target").iloc[0]["unlikely_by_chance"]


def test_the_command_table_and_methods_name_the_chance_model(project, tmp_path, passage_file, capsys):
    import csv
    import io

    from workbench.cli import main
    from workbench.export.methods import methods_record, methods_text

    _corpus_with_copies(project, tmp_path / "target", "target", OTHER_TEXTS, PASSAGE, 2)
    corpora.build_corpus(project, "giga", [write_corpus(tmp_path / "giga")])
    path = str(project.path)
    assert main(["leakage", "overlap", path, "--corpus", "target", "--source", str(passage_file), "--format",
                 "csv"]) == 0
    out = capsys.readouterr()
    [row] = list(csv.DictReader(io.StringIO(out.out)))
    assert row["chance_model"].startswith("5-gram on the same corpus, the match's own occurrences removed")
    assert "Dirichlet smoothing (mu = 1), add-one unigrams" in row["chance_model"]
    assert row["chance_removed"] == "2"
    assert "Chance model: 5-gram on the same corpus" in out.err and "short overlaps lean towards" in out.err
    assert main(["leakage", "overlap", path, "--corpus", "target", "--background", "giga", "--source",
                 str(passage_file), "--format", "csv"]) == 0
    [row] = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert row["chance_model"].startswith("5-gram on the background corpus 'giga'")
    assert main(["leakage", "overlap", path, "--corpus", "target", "--background", "target"]) == 1
    assert "another corpus" in capsys.readouterr().err
    text = methods_text(project)
    procedure, rest = text.split("## Models")
    assert "c(g) - f m(g, s)" in procedure and "background corpus was named ('giga')" in procedure
    assert "- **Chance model:** 5-gram on the same corpus, the match's own occurrences removed" in rest
    assert "- **Background corpus (chance model):** 'giga', 4 documents" in rest
    assert "counts of the overlaps in a background corpus (chance model)" in rest
    record = methods_record(project)
    kinds = {r["kind"]: r for r in record["runs"]}
    assert kinds["leakage-chance"]["leakage"]["background"]["name"] == "giga"
