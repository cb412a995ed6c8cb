"""Local n-gram indexes: built from files beside the project, answering exactly what counting by hand gives."""

import gzip
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.leakage import CORPUS, brute_suffix_lengths
from workbench.errors import CancelledError, UserError
from workbench.probes.leakage import corpora
from workbench.probes.leakage.index_build import META_FILE, build_index
from workbench.probes.leakage.local_index import LocalIndex, suffix_from_forward
from workbench.probes.leakage.tokenizing import WordTokenizer
from workbench.probes.leakage.wordlevel import Vocabulary
from workbench.progress import TaskState


def corpus_ids(index: LocalIndex) -> list[list[int]]:
    return [index.encode(text).ids.tolist() for text in CORPUS]


def test_the_study_example_of_per_position_lengths(project, tmp_path):
    """The leakage study's footnote: 'l l o y d' against 'h e l l o w o r l d' gives <1, 2, 3, 0, 1>."""
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / "hello.txt").write_text("h e l l o w o r l d\n", encoding="utf-8")
    corpora.build_corpus(project, "hello", [tmp_path / "ref"])
    index = corpora.open_index(project, "hello")
    assert index.suffix_lengths(index.encode("l l o y d").ids).tolist() == [1, 2, 3, 0, 1]
    assert suffix_from_forward(np.array([3, 2, 1, 0, 1])).tolist() == [1, 2, 3, 0, 1]


def test_a_built_corpus_is_recorded_with_its_size_files_and_tokenizer(mini_corpus, corpus_dir):
    corpus = corpora.get_corpus(mini_corpus, "mini")
    folder = corpus.folder(mini_corpus)
    assert folder.parent.name == "study.indexes" and folder.parent.parent == mini_corpus.path.parent
    assert corpus.path == "study.indexes/mini"  # relative: project and indexes move together
    assert corpus.kind == "local" and corpus.tokenizer == "word"
    assert corpus.documents == 4
    assert corpus.words == sum(len(t.split()) for t in CORPUS)
    vocabulary = Vocabulary()
    assert corpus.tokens == sum(len(vocabulary.encode(t, grow=True)) for t in CORPUS)
    assert sorted(f["path"] for f in corpus.files) == sorted(str(p.resolve()) for p in corpus_dir.iterdir())
    assert corpus.size_bytes == sum(p.stat().st_size for p in folder.iterdir() if p.name != META_FILE)
    frame = corpora.corpora_frame(mini_corpus)
    assert frame.loc[0, "name"] == "mini" and frame.loc[0, "tokens"] == corpus.tokens


def test_counts_and_match_lengths_equal_counting_by_hand(mini_corpus):
    index = corpora.open_index(mini_corpus, "mini")
    docs = corpus_ids(index)
    query = "At dawn the ferry left the harbour at dawn, and the gulls followed a late passenger."
    ids = index.encode(query).ids.tolist()
    assert index.suffix_lengths(ids).tolist() == brute_suffix_lengths(docs, ids)
    for n in (1, 2, 3, 6):
        for start in range(0, len(ids) - n):
            gram = ids[start : start + n]
            expected = sum(1 for d in docs for i in range(len(d) - n + 1) if d[i : i + n] == gram)
            assert index.count(gram) == expected
    # a run across the end of one document and the start of the next does not count
    assert index.count(docs[0][-2:] + docs[1][:2]) == 0


def test_two_units_per_token_when_the_vocabulary_is_large(project, tmp_path):
    """70,000 distinct words need two 16-bit units per token; matches still start at whole tokens only."""
    words = [f"w{i}" for i in range(70_000)]
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "a.txt").write_text(" ".join(words) + "\n", encoding="utf-8")
    (tmp_path / "big" / "b.txt").write_text("w5 w6 w7 w69999 w3\n", encoding="utf-8")
    corpus = corpora.build_corpus(project, "big", [tmp_path / "big"])
    index = corpora.open_index(project, "big")
    assert index.width == 2
    assert index.count(index.encode("w5 w6 w7").ids.tolist()) == 2
    assert index.count(index.encode("w69999").ids.tolist()) == 2
    assert index.count(index.encode("w69999 w3").ids.tolist()) == 1
    ids = index.encode("w68000 w68001 w5 w6 w7 w69999 w3 unknown").ids
    assert index.suffix_lengths(ids).tolist() == [1, 2, 1, 2, 3, 4, 5, 0]
    assert corpus.tokens == 70_005


def test_jsonl_files_are_one_document_per_line_and_unreadable_files_are_skipped(project, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    with gzip.open(folder / "part.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"text": "one two three", "id": 1}) + "\n\n")
        handle.write(json.dumps({"text": "three two one"}) + "\n")
    (folder / "broken.jsonl").write_text('{"no text here": 1}\n', encoding="utf-8")
    (folder / "notes.txt").write_bytes(bytes(range(256)) * 40)  # not text
    (folder / "image.png").write_bytes(b"\x89PNG")  # not a corpus file at all: not read
    corpus = corpora.build_corpus(project, "mixed", [folder])
    assert corpus.documents == 2
    skipped = {f["path"].rsplit("/", 1)[-1]: f["skipped"] for f in corpus.files if f["skipped"]}
    assert set(skipped) == {"broken.jsonl", "notes.txt"}
    assert "'text'" in skipped["broken.jsonl"]
    index = corpora.open_index(project, "mixed")
    assert index.count(index.encode("two three").ids.tolist()) == 1


def test_nothing_readable_is_a_plain_error_and_leaves_no_folder(project, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "blank.txt").write_text("   \n", encoding="utf-8")
    with pytest.raises(UserError, match="None of the files"):
        corpora.build_corpus(project, "empty", [tmp_path / "empty"])
    assert not (corpora.indexes_folder(project) / "empty").exists()
    assert not (corpora.indexes_folder(project) / "empty.building").exists()
    assert corpora.list_corpora(project) == []
    with pytest.raises(UserError, match="no file or folder"):
        corpora.build_corpus(project, "missing", [tmp_path / "nowhere"])


def test_cancel_stops_the_build_and_leaves_nothing_behind(project, tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(30):
        (folder / f"{n:02d}.txt").write_text(CORPUS[n % 4] + "\n", encoding="utf-8")
    state = TaskState(on_progress=lambda p: state.cancel() if p.done > 3 else None, min_interval=0)
    target = corpora.indexes_folder(project) / "many"
    with pytest.raises(CancelledError):
        build_index([folder], target, WordTokenizer(), state)
    assert not target.exists()
    assert not target.with_name("many.building").exists()


def test_a_corpus_name_is_used_once_and_removing_can_delete_the_index(mini_corpus, corpus_dir):
    with pytest.raises(UserError, match="already a corpus"):
        corpora.build_corpus(mini_corpus, "mini", [corpus_dir])
    folder = corpora.get_corpus(mini_corpus, "mini").folder(mini_corpus)
    corpora.remove_corpus(mini_corpus, "mini", delete_files=True)
    assert not folder.exists()
    with pytest.raises(UserError, match="no reference corpus called 'mini'"):
        corpora.open_index(mini_corpus, "mini")


def test_a_missing_index_folder_says_what_to_do(mini_corpus):
    import shutil

    shutil.rmtree(corpora.get_corpus(mini_corpus, "mini").folder(mini_corpus))
    with pytest.raises(UserError, match="missing or incomplete"):
        corpora.open_index(mini_corpus, "mini")


def test_queries_answer_from_several_threads_at_once(mini_corpus):
    index = corpora.open_index(mini_corpus, "mini")
    ids = index.encode(CORPUS[3]).ids.tolist()
    expected = index.suffix_lengths(ids).tolist()
    results = []
    threads = [threading.Thread(target=lambda: results.append(index.suffix_lengths(ids).tolist())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


def test_an_index_in_a_folder_named_like_the_engines_files_is_read_right(tmp_path, corpus_dir):
    """The engine tells its files apart by words such as 'table' anywhere in their path: a project in a folder
    called 'Timetables' made it take every file for a suffix table and crash. Run in another process, since
    on failure the process dies."""
    folder = tmp_path / "Timetables and offsets"
    folder.mkdir()
    script = textwrap.dedent(f"""
        from pathlib import Path
        from workbench.project import Project
        from workbench.probes.leakage import corpora, overlap
        project = Project.create(Path({str(folder)!r}) / "study.palimpsest")
        corpora.build_corpus(project, "metadata table", [Path({str(corpus_dir)!r})])
        query = Path({str(folder)!r}) / "q.txt"
        query.write_text("The ferry left the harbour at dawn, they said.\\n", encoding="utf-8")
        overlap.run_overlap(project, "metadata table", str(query))
        row = overlap.overlap_frame(project, "metadata table").iloc[0]
        print(row["longest_text"], "|", row["frequency"])
        project.close()
    """)
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("The ferry left the harbour at dawn, they said | 1")
