"""Building a local index: memory and time bounded whatever the files' sizes (documents tokenized a piece at a
time, the token file cut into shards sorted one by one, never merged), a true report of what was indexed, and
a killed build that leaves nothing in the way."""

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.leakage import CORPUS, brute_suffix_lengths
from workbench.errors import UserError
from workbench.probes.leakage import corpora
from workbench.probes.leakage.index_build import BUILDING, OWNER_FILE, IndexInfo, _claim, build_index
from workbench.probes.leakage.local_index import LocalIndex
from workbench.probes.leakage.tokenizing import ModelTokenizer, WordTokenizer, ids_in_pieces
from workbench.progress import TaskState
from workbench.project import Project

ROOT = Path(__file__).resolve().parents[2]
LONG = " ".join(CORPUS * 3)  # one document of ~1,800 characters, repeating itself


def brute_count(docs: list[list[int]], gram: list[int]) -> int:
    n = len(gram)
    return sum(1 for d in docs for i in range(len(d) - n + 1) if d[i : i + n] == gram)


def check_against_brute_force(index: LocalIndex, docs: list[list[int]], queries: list[str]) -> None:
    for query in queries:
        ids = index.encode(query).ids.tolist()
        assert index.suffix_lengths(ids).tolist() == brute_suffix_lengths(docs, ids)
        for n in (1, 3, 7):
            for start in range(0, len(ids) - n, 3):
                assert index.count(ids[start : start + n]) == brute_count(docs, ids[start : start + n])


def test_a_long_document_tokenized_in_pieces_is_the_same_document(project, tmp_path):
    """Cut every 60 characters (at white space) to be tokenized: the index holds one document with exactly its
    tokens, and a match running across every cut is found whole."""
    (tmp_path / "long").mkdir()
    (tmp_path / "long" / "all.txt").write_text(LONG, encoding="utf-8")
    folder = corpora.indexes_folder(project) / "long"
    tokenizer = WordTokenizer()
    info = build_index([tmp_path / "long"], folder, tokenizer, piece_chars=60)
    index = LocalIndex(folder, tokenizer, info)
    whole = index.encode(LONG).ids.tolist()
    assert info.documents == 1 and info.tokens == len(whole) and info.words == len(LONG.split())
    assert info.cuts == 0 and info.shards == 1
    # a passage of 40 words is longer than any piece: its every token matches, all the way back to its start
    passage = " ".join(LONG.split()[100:140])
    assert index.suffix_lengths(index.encode(passage).ids).tolist()[-1] == len(index.encode(passage).ids)
    check_against_brute_force(index, [whole], [passage, CORPUS[3], "the gulls followed it far out over the mud"])


def test_documents_are_spread_over_shards_and_answers_add_up(project, tmp_path):
    """Shards of 200 bytes: the documents fill several, each sorted on its own; counts and longest matches are
    those of the whole corpus."""
    folder_in = tmp_path / "many"
    folder_in.mkdir()
    texts = [CORPUS[n % 4] + f" Copy {n}." for n in range(12)]
    for n, text in enumerate(texts):
        (folder_in / f"{n:02d}.txt").write_text(text, encoding="utf-8")
    folder = corpora.indexes_folder(project) / "many"
    tokenizer = WordTokenizer()
    info = build_index([folder_in], folder, tokenizer, shard_bytes=200)
    assert info.shards > 3 and info.cuts == 0 and sum(info.shard_documents) == 12
    assert sorted(p.name for p in folder.glob("table.*")) == sorted(f"table.{n}" for n in range(info.shards))
    index = LocalIndex.open(project, folder)
    docs = [index.encode(t).ids.tolist() for t in texts]
    assert index.total_tokens == sum(len(d) for d in docs)
    check_against_brute_force(index, docs, [CORPUS[0], CORPUS[3], "the ferry left the harbour at dawn. Copy 7."])


def test_a_document_larger_than_a_shard_is_cut_there_and_the_cut_is_said(project, tmp_path):
    """The stated rule: a document larger than a shard is cut into shard-sized parts; a match cannot run across
    a cut (answers are those of the parts), and the build says so."""
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "all.txt").write_text(LONG, encoding="utf-8")
    corpus = corpora.build_corpus(project, "big", [tmp_path / "big"])
    corpora.remove_corpus(project, "big", delete_files=True)
    tokenizer = WordTokenizer()
    folder = corpora.indexes_folder(project) / "big"
    info = build_index([tmp_path / "big"], folder, tokenizer, shard_bytes=400)
    most = (400 // 2 - 1) // info.width  # tokens of a document part that fill a shard
    index = LocalIndex.open(project, folder)
    whole = index.encode(LONG).ids.tolist()
    parts = [whole[i : i + most] for i in range(0, len(whole), most)]
    assert info.documents == 1 and info.cuts == len(parts) - 1 > 0 and info.tokens == corpus.tokens
    check_against_brute_force(index, parts, [" ".join(LONG.split()[150:260])])
    corpora._record_local(project, "big", folder, info)
    notes = corpora.build_notes(project, corpora.get_corpus(project, "big"))
    assert any(f"a match cannot run across the {info.cuts} places where they were cut" in n for n in notes)
    from workbench.export.methods import methods_text
    from workbench.probes.leakage import overlap

    (tmp_path / "q.txt").write_text(CORPUS[0] + "\n", encoding="utf-8")
    overlap.run_overlap(project, "big", str(tmp_path / "q.txt"))
    assert f"a match cannot run across the {info.cuts} places where they were cut" in methods_text(project)


def _metaspace_tokenizer(folder: Path) -> Path:
    """A SentencePiece-style tokenizer (the word after a space carries the mark ▁, the text's start gets one
    too) trained here: the kind a cut at white space would change."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="first")
    tok.train_from_iterator(CORPUS * 5, trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>"]))
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>").save_pretrained(folder)
    return folder


@pytest.mark.parametrize("kind", ["byte-level BPE", "SentencePiece"])
def test_a_models_tokens_of_a_long_text_in_pieces_are_those_of_the_whole_text(tiny_causal_dir, tmp_path, kind):
    folder = tiny_causal_dir if kind == "byte-level BPE" else _metaspace_tokenizer(tmp_path / "sp")
    tokenizer = ModelTokenizer("tiny", folder)
    text = "\n\n".join(c.replace(", ", ",  ").replace(". ", ".\t") for c in CORPUS) * 4
    whole = tokenizer.encode(text).ids.tolist()
    for size, seam in ((200, 20), (333, 50), (len(text) // 3, 40)):
        assert ids_in_pieces(tokenizer, text, size, seam).tolist() == whole
    # cutting at white space alone would not do for this kind: the second piece starts like a new text
    half = text.rfind(" ", 0, len(text) // 2) + 1
    naive = tokenizer.encode(text[:half]).ids.tolist() + tokenizer.encode(text[half:]).ids.tolist()
    if kind == "SentencePiece":
        assert naive != whole


def test_a_model_tokenized_corpus_in_pieces_answers_as_the_whole(project, tiny_causal_dir, tmp_path):
    from workbench.models.catalog import ModelSpec, add_model

    add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(tiny_causal_dir), params={"device": "cpu"}))
    (tmp_path / "long").mkdir()
    (tmp_path / "long" / "all.txt").write_text(LONG, encoding="utf-8")
    folder = corpora.indexes_folder(project) / "long"
    tokenizer = ModelTokenizer("tiny", tiny_causal_dir)
    tokenizer.spec = "model:tiny"
    info = build_index([tmp_path / "long"], folder, tokenizer, piece_chars=100)
    whole = tokenizer.encode(LONG).ids.tolist()
    assert info.tokens == len(whole) and info.words == len(LONG.split())
    index = LocalIndex.open(project, folder)
    check_against_brute_force(index, [whole], [" ".join(LONG.split()[40:90])])


# ---- what was indexed is what the report says ------------------------------------------------------------------
def test_a_jsonl_file_with_a_bad_line_reports_exactly_what_was_indexed(project, tmp_path):
    folder = tmp_path / "lines"
    folder.mkdir()
    lines = [json.dumps({"text": CORPUS[0]}), json.dumps({"text": CORPUS[1]}), "{not json",
             json.dumps({"text": CORPUS[2]}), json.dumps({"title": "no text"}), json.dumps({"text": CORPUS[3]})]
    (folder / "part.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    corpus = corpora.build_corpus(project, "lines", [folder])
    record = corpus.files[0]
    assert corpus.documents == record["documents"] == 4
    assert record["skipped"] == ("2 lines of part.jsonl (lines 3, 5) are not JSON objects with a 'text' field and were "
                                 "left out; 4 documents of it were indexed.")
    assert corpora.build_notes(project, corpus) == [f"Partly indexed {record['path']}: {record['skipped']}"]
    index = corpora.open_index(project, "lines")
    for text in CORPUS:  # every good line is in the index, the ones after the bad line too
        ids = index.encode(text).ids.tolist()
        assert index.count(ids) >= 1


def test_a_jsonl_gz_that_breaks_off_says_how_far_it_was_read(project, tmp_path):
    folder = tmp_path / "gz"
    folder.mkdir()
    packed = gzip.compress("".join(json.dumps({"text": f"{CORPUS[n % 4]} number {n}"}) + "\n"
                                   for n in range(400)).encode("utf-8"))
    (folder / "cut.jsonl.gz").write_bytes(packed[: len(packed) * 2 // 3])
    corpus = corpora.build_corpus(project, "gz", [folder])
    record = corpus.files[0]
    assert 0 < record["documents"] < 400 and corpus.documents == record["documents"]
    assert f"could not be read past line {record['documents']:,}" in record["skipped"]
    assert record["skipped"].endswith(f"; {record['documents']:,} documents of it were indexed.")


def test_a_very_long_or_odd_corpus_name_is_a_plain_error(project, corpus_dir):
    with pytest.raises(UserError, match="at most 100 characters long \\(this one has 10,000\\)"):
        corpora.build_corpus(project, "n" * 10_000, [corpus_dir])
    with pytest.raises(UserError, match="control characters"):
        corpora.build_corpus(project, "two\nlines", [corpus_dir])
    corpus = corpora.build_corpus(project, "ü" * 100, [corpus_dir])  # the longest name: its folder is shortened
    assert len(corpus.folder(project).name) <= 60 and corpora.open_index(project, "ü" * 100).total_tokens > 0
    assert not list(corpora.indexes_folder(project).glob("*" + BUILDING))


# ---- a killed build --------------------------------------------------------------------------------------------
_BUILDER = """
import sys
from workbench.project import Project
from workbench.probes.leakage import corpora
project = Project.open(sys.argv[1])
corpora.build_corpus(project, "big", [sys.argv[2]])
"""


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[1]) == pid and "rust_indexing" in stat[: stat.rindex(")")]:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the indexer dies with its parent on Linux")
def test_a_killed_build_leaves_no_indexer_running_and_nothing_in_the_way(project, tmp_path):
    """The builder is killed while the indexer sorts (the indexer stopped first, so it cannot finish on its own):
    the indexer goes with it, and the next build, of this corpus or another, finds nothing in its way."""
    source = tmp_path / "big"
    source.mkdir()
    rng = np.random.default_rng(0)
    words = np.array([f"w{n}" for n in range(5000)])
    (source / "words.txt").write_text(" ".join(rng.choice(words, 600_000)), encoding="utf-8")
    project.close()
    builder = subprocess.Popen([sys.executable, "-c", _BUILDER, str(project.path), str(source)], cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE)
    indexers: list[int] = []
    ends = time.monotonic() + 120
    while not indexers and builder.poll() is None and time.monotonic() < ends:
        indexers = _children(builder.pid)
        time.sleep(0.005)
    try:
        assert indexers, "the build ended before its indexer could be seen: " + builder.stderr.read().decode()[-1000:]
        for pid in indexers:
            os.kill(pid, signal.SIGSTOP)
        builder.kill()
        builder.wait()
        ends = time.monotonic() + 30
        while any(_alive(pid) for pid in indexers) and time.monotonic() < ends:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in indexers), "the indexer is still running without its builder"
    finally:
        for pid in indexers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        builder.stderr.close()
    reopened = Project.open(project.path)
    left = list(corpora.indexes_folder(reopened).glob("*" + BUILDING))
    assert [p.name for p in left] == ["big" + BUILDING]  # what a kill leaves: removed by the next build
    (tmp_path / "small").mkdir()
    (tmp_path / "small" / "a.txt").write_text(CORPUS[0], encoding="utf-8")
    corpora.build_corpus(reopened, "other", [tmp_path / "small"])
    assert not list(corpora.indexes_folder(reopened).glob("*" + BUILDING))
    corpora.build_corpus(reopened, "big", [tmp_path / "small"])
    reopened.close()


def test_a_build_under_way_is_never_removed_by_another(project, corpus_dir):
    """Two builds of one corpus (the window and the command line, say): the second is refused while the first
    holds its folder, instead of deleting the folder the first is writing into."""
    scratch = corpora.indexes_folder(project) / ("mini" + BUILDING)
    scratch.parent.mkdir(parents=True)
    owner = _claim(scratch)
    (scratch / "tokenized.0").write_bytes(b"being written")
    with pytest.raises(UserError, match="Another build of this corpus is under way"):
        corpora.build_corpus(project, "mini", [corpus_dir])
    corpora.build_corpus(project, "other", [corpus_dir])  # another corpus meanwhile: the folder is left alone
    assert (scratch / "tokenized.0").read_bytes() == b"being written"
    owner.close()  # as when its program is killed: the lock goes, the folder stays
    corpora.build_corpus(project, "mini", [corpus_dir])  # its builder gone: cleared and built
    assert not scratch.exists() and corpora.get_corpus(project, "mini").documents == 4


def test_a_cancelled_sort_leaves_no_indexer_and_no_folder(project, tmp_path):
    source = tmp_path / "many"
    source.mkdir()
    for n in range(6):
        (source / f"{n}.txt").write_text(" ".join(CORPUS) + f" {n}", encoding="utf-8")
    state = TaskState(on_progress=lambda p: state.cancel() if p.message.startswith("Sorting") else None,
                      min_interval=0)
    target = corpora.indexes_folder(project) / "many"
    with pytest.raises(Exception, match="Stopped at your request"):
        build_index([source], target, WordTokenizer(), state, shard_bytes=1000)
    assert not target.exists() and not list(target.parent.glob("*" + BUILDING))
    assert _children(os.getpid()) == []


def test_the_owner_file_is_not_part_of_the_index(mini_corpus):
    folder = corpora.get_corpus(mini_corpus, "mini").folder(mini_corpus)
    info = IndexInfo.read(folder)
    assert OWNER_FILE not in info.manifest and not (folder / OWNER_FILE).exists()
    assert set(info.manifest) == {p.name for p in folder.iterdir()} - {"index.json"}
