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


# ---- a hostile or broken server: a deadline, a size cap and checked fields ---------------------------------------
@pytest.mark.parametrize("where", ["trickle_body", "trickle_headers"])
def test_an_answer_trickling_in_is_cut_off_at_the_query_deadline(infini_server, where):
    """One byte every 0.05 s would take the answer 20 s (the headers alone 15 s); the query's deadline (1 s here,
    120 s by default) holds for the whole of it, headers included, not for each read."""
    fake, url = infini_server
    setattr(fake, where, 0.05)
    remote = RemoteIndex(url, fake.index, deadline=1.0, retry_pause=0.01)
    with pytest.raises(ServerUnavailable, match=r"did not finish answering within 1 seconds\. Try again later"):
        _ = remote.total_tokens
    remote.close()
    assert fake.trickled < 100  # it stopped listening, rather than reading the whole (100+ bytes) answer first


def test_an_answer_larger_than_the_cap_is_not_read(infini_server):
    fake, url = infini_server
    remote = RemoteIndex(url, fake.index, max_bytes=64 * 1024, retry_pause=0.01)
    fake.huge_body = 4 << 20  # no declared length: read in pieces, stopped at the cap
    with pytest.raises(ServerUnavailable, match="larger than 0.0625 MB.*not read"):
        _ = remote.total_tokens
    fake.huge_body = 0
    fake.declared_length = 3 << 30  # declares 3 GB: refused before reading
    with pytest.raises(ServerUnavailable, match="larger than"):
        remote.count([1, 2])
    remote.close()


@pytest.mark.parametrize("answer, complaint", [
    ([1, 2, 3], "a JSON list, not an object"),
    ({"count": None}, "'count' should be a whole number but is missing"),
    ({"count": "many"}, "'count' should be a whole number but is many"),
    ({"count": -3}, "'count' should be a whole number but is -3"),
    ({"count": True}, "'count' should be a whole number but is true"),
    ({"count": 2.5}, "'count' should be a whole number but is 2.5"),
    ({"count": 4, "token_ids": ["a"]}, "'token_ids' should be a list of whole numbers"),
    ({"count": 4, "tokens": "the"}, "'tokens' should be a list of texts"),
])
def test_an_answer_of_the_wrong_shape_is_a_plain_error_and_nothing_is_stored(project, infini_server, answer, complaint):
    fake, url = infini_server
    fake.raw_answer = lambda payload: answer
    with pytest.raises(ServerUnavailable, match="answered in a form Palimpsest cannot read") as caught:
        corpora.add_remote(project, "pile", url, fake.index)
    assert complaint in str(caught.value)
    assert corpora.list_corpora(project) == []


def test_answers_missing_what_the_query_asks_for_are_refused_not_read_as_zero(infini_server):
    """A missing 'suffix_len' used to read as 0 (no overlap) and a missing token list as an empty passage."""
    fake, url = infini_server
    remote = RemoteIndex(url, fake.index, retry_pause=0.01)
    ids = remote.encode(QUERY).ids
    fake.raw_answer = lambda payload: {"prompt_cnt": 3, "cont_cnt": 1}
    with pytest.raises(ServerUnavailable, match="'suffix_len' should be a whole number but is missing"):
        remote.suffix_lengths(ids[:3])
    fake.raw_answer = lambda payload: {"suffix_len": 99}  # longer than the text asked about
    with pytest.raises(ServerUnavailable, match="longer than the text asked about"):
        remote.suffix_lengths(ids[:3])
    fake.raw_answer = lambda payload: {"count": 5}
    with pytest.raises(ServerUnavailable, match="no tokens for a text"):
        remote.encode(QUERY)
    fake.raw_answer = lambda payload: b"\x00" * 100  # not JSON at all: asked again, then a plain message
    with pytest.raises(ServerUnavailable, match="did not answer \\(the server's answer was not JSON\\)"):
        remote.count([1])
    remote.close()


def test_a_servers_error_text_is_shortened_in_the_message(infini_server):
    fake, url = infini_server
    fake.raw_answer = lambda payload: {"error": "x" * 5000 + "\n\x1b[31m"}
    remote = RemoteIndex(url, fake.index)
    with pytest.raises(UserError, match="refused the query") as caught:
        remote.count([1])
    assert len(str(caught.value)) < 400 and "\x1b" not in str(caught.value)
    remote.close()


# ---- addresses with a user name, password or key ------------------------------------------------------------------
SECRET_ADDRESSES = ["http://scholar:hunter2-secret@{host}/", "http://{host}/?api_key=hunter2-secret",
                    "http://{host}/?token=hunter2-secret", "scholar:hunter2-secret@{host}"]


@pytest.mark.parametrize("address", SECRET_ADDRESSES)
def test_a_remote_address_with_a_secret_is_refused_without_repeating_it(project, infini_server, address):
    fake, url = infini_server
    host = url.split("//")[1].rstrip("/")
    with pytest.raises(UserError, match="holds a user name, password or key") as caught:
        corpora.add_remote(project, "pile", address.format(host=host), fake.index)
    assert "hunter2" not in str(caught.value)
    assert corpora.list_corpora(project) == []
    assert fake.requests == []  # nothing was sent with it either


def test_a_secret_stored_before_the_rule_is_never_shown_nor_used(project, infini_server, capsys):
    """A row recorded by an older version: the list, the table export, the methods text and messages show the
    address without the secret, and the corpus is not queried with it."""
    from workbench.cli import main
    from workbench.export.registry import export_table

    fake, url = infini_server
    secret_url = url.replace("http://", "http://scholar:hunter2-secret@") + "?key=hunter2-key"
    with project.db.transaction():
        project.db.execute("INSERT INTO reference_corpora (name, kind, url, remote_index, tokenizer, engine, created_at)"
                           " VALUES ('old', 'remote', ?, ?, 'remote', 'infini-gram API', '2024-01-01')",
                           [secret_url, fake.index])
    corpus = corpora.get_corpus(project, "old")
    assert "hunter2" not in corpus.where(project) and url.rstrip("/") in corpus.where(project)
    assert "hunter2" not in corpora.corpora_frame(project).to_csv()
    out = export_table(project, "reference-corpora", project.path.parent / "corpora.csv")
    assert "hunter2" not in out.read_text(encoding="utf-8")
    with pytest.raises(UserError, match="holds a user name, password or key") as caught:
        corpora.open_index(project, "old")
    assert "hunter2" not in str(caught.value) and fake.requests == []
    assert main(["corpus", "list", str(project.path), "--format", "csv"]) == 0
    assert "hunter2" not in capsys.readouterr().out
    remote = RemoteIndex(secret_url.replace(url.split("//")[1].rstrip("/"), "127.0.0.1:9"), fake.index,
                         retry_pause=0.0)
    with pytest.raises(ServerUnavailable) as caught:
        remote.count([1, 2])
    assert "hunter2" not in str(caught.value) and "127.0.0.1:9" in str(caught.value)
    remote.close()
