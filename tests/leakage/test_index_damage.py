"""A local index that is not what its index.json says is refused before the engine sees it, and the engine is
never misled by the folder's name. Opening and querying happen in a fresh process where a damaged index could
take the whole program down (a segmentation fault must fail the test, not end the test session)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.leakage import CORPUS, brute_suffix_lengths, write_corpus
from workbench.errors import UserError
from workbench.probes.leakage import corpora, overlap
from workbench.probes.leakage.index_build import META_FILE, DamagedIndex
from workbench.project import Project

ROOT = Path(__file__).resolve().parents[2]
QUERY = "At dawn the ferry left the harbour at dawn, and the gulls followed a late passenger."

_QUERIES = """
import json, sys
from workbench.errors import UserError
from workbench.project import Project
from workbench.probes.leakage import corpora
project = Project.open(sys.argv[1])
try:
    index = corpora.open_index(project, sys.argv[2])
    docs = [index.encode(t).ids.tolist() for t in json.loads(sys.argv[3])]
    ids = index.encode(sys.argv[4]).ids.tolist()
    print(json.dumps({"lengths": index.suffix_lengths(ids).tolist(), "docs": docs, "ids": ids,
                      "count": index.count(ids[2:6]), "total": index.total_tokens}))
except UserError as exc:
    print(json.dumps({"refused": str(exc)}))
"""


def answers_in_fresh_process(project_path: Path, corpus: str) -> dict:
    """The corpus's answers for QUERY (or the message refusing it), from a new Python process."""
    done = subprocess.run([sys.executable, "-c", _QUERIES, str(project_path), corpus, json.dumps(CORPUS), QUERY],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, f"the process ended with {done.returncode}: {done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def assert_right(answers: dict) -> None:
    assert "refused" not in answers, answers
    assert answers["lengths"] == brute_suffix_lengths(answers["docs"], answers["ids"])
    assert max(answers["lengths"]) >= 6  # "the ferry left the harbour at dawn"
    gram = answers["ids"][2:6]
    assert answers["count"] == sum(1 for d in answers["docs"] for i in range(len(d) - 3) if d[i : i + 4] == gram)


@pytest.mark.parametrize("folder", ["table", "xtablex", "every_table", "Timetables", "tokenized", "offset notes",
                                    "metadata"])
def test_an_index_answers_whatever_the_words_in_its_folders_path(tmp_path, folder):
    """infini-gram's engine tells its files apart by words anywhere in their path: a project in a folder called
    "Timetables" made it take every file for a suffix array and crash the program."""
    where = tmp_path / folder
    where.mkdir()
    project = Project.create(where / "study.palimpsest")
    corpora.build_corpus(project, "mini", [write_corpus(tmp_path / "texts")])
    project.close()
    assert_right(answers_in_fresh_process(where / "study.palimpsest", "mini"))


def _truncate(path: Path, by: int = 2) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:-by])


def _scramble_pointers(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[: len(data) // 2] = b"\xff" * (len(data) // 2)
    path.write_bytes(bytes(data))


def _edit_meta(folder: Path, **changes) -> None:
    data = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    data.update(changes)
    (folder / META_FILE).write_text(json.dumps(data), encoding="utf-8")


DAMAGE = {
    "table truncated": (lambda f: _truncate(f / "table.0"), "table.0 is"),
    "token file truncated": (lambda f: _truncate(f / "tokenized.0"), "tokenized.0 is"),
    "offsets truncated": (lambda f: _truncate(f / "offset.0", 8), "offset.0 is"),
    "vocabulary truncated": (lambda f: (f / "vocabulary.txt").write_text("the\n", encoding="utf-8"), "vocabulary.txt"),
    "suffix array scrambled": (lambda f: _scramble_pointers(f / "table.0"), "point outside"),
    "index.json garbage": (lambda f: (f / META_FILE).write_bytes(b"\x00\xffnot json at all"), "cannot be read"),
    "index.json a list": (lambda f: (f / META_FILE).write_text("[1, 2]", encoding="utf-8"), "not a JSON object"),
    "index.json wrong types": (lambda f: _edit_meta(f, tokens="many"), "'tokens' is not a whole number"),
    "index.json edited": (lambda f: _edit_meta(f, tokens=3), "checksum does not match"),
    "index.json missing": (lambda f: (f / META_FILE).unlink(), "index.json is missing"),
    "a shard missing": (lambda f: (f / "table.0").unlink(), "table.0 is missing"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_index_is_refused_saying_how_to_rebuild_it_and_nothing_is_stored(mini_corpus, damage):
    """A truncated suffix array answered 'no overlap' (0 where 4 is right), a truncated token file crashed the
    program, a garbled index.json gave a traceback: each is now refused when the index is opened."""
    harm, detail = DAMAGE[damage]
    folder = corpora.get_corpus(mini_corpus, "mini").folder(mini_corpus)
    harm(folder)
    answers = answers_in_fresh_process(mini_corpus.path, "mini")
    assert "refused" in answers, answers
    message = answers["refused"]
    assert "is damaged" in message and detail in message and "will not query it" in message
    assert "palimpsest corpus remove" in message and "--delete-files" in message and '--name "mini"' in message
    assert "doc1.txt" in message  # the files it was built from
    with pytest.raises(DamagedIndex):
        corpora.open_index(mini_corpus, "mini")
    (mini_corpus.path.parent / "q.txt").write_text(QUERY + "\n", encoding="utf-8")
    with pytest.raises(UserError, match="is damaged"):
        overlap.run_overlap(mini_corpus, "mini", str(mini_corpus.path.parent / "q.txt"))
    assert mini_corpus.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0


def test_an_index_built_before_the_manifest_is_checked_by_its_counts(mini_corpus):
    """index.json as earlier versions wrote it (no manifest, no checksum): opened when its files fit its counts,
    refused when they do not."""
    folder = corpora.get_corpus(mini_corpus, "mini").folder(mini_corpus)
    data = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    for key in ("manifest", "checksum", "shard_documents", "cuts"):
        data.pop(key)
    (folder / META_FILE).write_text(json.dumps(data), encoding="utf-8")
    index = corpora.open_index(mini_corpus, "mini")
    assert index.count(index.encode("The ferry").ids.tolist()) == 2
    index.close()
    _truncate(folder / "table.0")
    with pytest.raises(DamagedIndex, match="table.0 is"):
        corpora.open_index(mini_corpus, "mini")


def test_an_intact_index_is_opened_every_time(mini_corpus):
    for _ in range(3):
        index = corpora.open_index(mini_corpus, "mini")
        ids = index.encode(QUERY).ids
        assert int(np.max(index.suffix_lengths(ids))) >= 6
        index.close()
