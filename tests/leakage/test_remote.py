"""Remote indexes through the infini-gram web API, against a server of our own on 127.0.0.1."""

import pytest

from tests.fixtures.leakage import CORPUS
from workbench.errors import UserError
from workbench.jobs import get_run, resume_run
from workbench.probes.leakage import corpora, overlap
from workbench.probes.leakage.remote_index import RemoteIndex, ServerUnavailable

QUERY = "At first light the ferry left the harbour at dawn, and the gulls followed it far out."


def test_a_remote_corpus_is_recorded_with_its_size(project, infini_server):
    fake, url = infini_server
    corpus = corpora.add_remote(project, "pile", url, fake.index)
    assert corpus.kind == "remote" and corpus.tokens == sum(len(d) for d in fake.documents)
    assert corpus.where(project) == f"{url} ({fake.index})"
    assert fake.requests[-1] == {"index": fake.index, "query_type": "count", "query": ""}


def test_a_wrong_index_name_or_address_is_a_plain_error(project, infini_server):
    fake, url = infini_server
    with pytest.raises(UserError, match="refused the query.*Invalid index"):
        corpora.add_remote(project, "pile", url, "v4_nonexistent")
    with pytest.raises(UserError, match="not a web address"):
        corpora.add_remote(project, "pile", "api.infini-gram.io", fake.index)
    assert corpora.list_corpora(project) == []


def test_the_server_tokenizes_and_the_answers_match_a_local_index(mini_corpus, infini_server):
    fake, url = infini_server
    remote = RemoteIndex(url, fake.index)
    local = corpora.open_index(mini_corpus, "mini")
    encoded = remote.encode(QUERY)
    assert encoded.text == QUERY  # the server's tokens, with their spaces put back
    assert remote.suffix_lengths(encoded.ids).tolist() == local.suffix_lengths(local.encode(QUERY).ids).tolist()
    asked = len(fake.requests)
    remote_raw = overlap.query_passage(remote, QUERY)
    sent = [r for r in fake.requests[asked:] if r.get("query_type") == "infgram_prob"]
    assert len(sent) == encoded.ids.size  # one question per token
    local_raw = overlap.query_passage(local, QUERY)
    for key in ("tokens", "suffix_lengths", "longest", "start", "text", "frequency"):
        assert remote_raw[key] == local_raw[key]
    assert [[pair for pair in row] for row in remote_raw["ngram"]] == local_raw["ngram"]
    remote.close()


def test_a_busy_server_is_asked_again(infini_server):
    fake, url = infini_server
    remote = RemoteIndex(url, fake.index, retry_pause=0.01)
    fake.fail_next = 2
    assert remote.count(remote.encode("The ferry").ids.tolist()) == 2
    remote.close()


def test_an_unreachable_server_stops_the_run_and_it_continues_later(project, infini_server):
    fake, url = infini_server
    corpora.add_remote(project, "pile", url, fake.index)
    (project.path.parent / "q.txt").write_text("\n\n".join(CORPUS[:2]) + "\n", encoding="utf-8")
    fake.fail_next = 10_000
    remote = RemoteIndex(url, fake.index, retry_pause=0.01)
    with pytest.raises(UserError, match="did not answer.*saved"):
        overlap.run_overlap(project, "pile", str(project.path.parent / "q.txt"), index=remote)
    run_id = project.db.execute("SELECT id FROM runs").fetchone()[0]
    assert get_run(project, run_id)["status"] == "interrupted"
    assert project.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0  # nothing half-stored
    fake.fail_next = 0
    assert resume_run(project, run_id).done == 2
    frame = overlap.overlap_frame(project, "pile")
    assert frame["covered_share"].tolist() == [1.0, 1.0]
    remote.close()


def test_server_unavailable_is_a_user_error_with_advice():
    remote = RemoteIndex("http://127.0.0.1:9/", "v4_test", retry_pause=0.0)
    with pytest.raises(ServerUnavailable, match="Try again later"):
        remote.count([1, 2])
    remote.close()
