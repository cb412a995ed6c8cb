"""The ``palimpsest corpus|leakage|membership|surprisal|decop`` commands and the leakage charts as real files."""

import csv
import io

import pytest

from tests.fixtures.leakage import CORPUS, add_cloze_answers, add_cloze_book
from workbench.cli import main
from workbench.corpus.library import set_tags
from workbench.export.registry import charts, export_chart, tables

OVERLAP_COLUMNS = ["book", "passage_id", "tokens", "longest", "longest_text", "frequency", "covered_share",
                   "log_prob", "chance_p"]


def _csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture
def books(project):
    """Three books with name-cloze passages (two from the corpus), their years, tags and cloze answers."""
    made = [
        add_cloze_book(project, "Harbour", CORPUS[0].replace("Nobody", "Nobody but Ada"), ["Ada"], year=1890),
        add_cloze_book(project, "Orchard", CORPUS[1].replace("Then the rain", "Then Bea saw the rain"), ["Bea"],
                       year=1930),
        add_cloze_book(project, "Elsewhere", "Cai painted seven purple volcanoes for nobody in particular.", ["Cai"],
                       year=1910),
    ]
    add_cloze_answers(project, "gpt-x", {made[0][1][0]: "<name>Ada</name>", made[1][1][0]: "<name>Bea</name>",
                                         made[2][1][0]: "<name>Zed</name>"})
    for (book_id, _), member in zip(made, ["yes", "yes", "no"]):
        set_tags(project, book_id, {"member": member})
    return made


def test_corpus_commands(project, corpus_dir, infini_server, capsys):
    fake, url = infini_server
    path = str(project.path)
    assert main(["corpus", "index", path, "--name", "mini", str(corpus_dir)]) == 0
    assert "Indexed 4 documents" in capsys.readouterr().out
    assert main(["corpus", "remote", path, "--name", "web", "--url", url, "--index", fake.index]) == 0
    assert f"Added 'web': {fake.index}" in capsys.readouterr().out
    assert main(["corpus", "list", path, "--format", "csv"]) == 0
    rows = _csv(capsys.readouterr().out)
    assert [(r["name"], r["kind"], r["tokenizer"]) for r in rows] == [("mini", "local", "word"), ("web", "remote", "remote")]
    assert main(["corpus", "index", path, "--name", "mini", str(corpus_dir)]) == 1
    assert "already a corpus called 'mini'" in capsys.readouterr().err
    assert main(["corpus", "remove", path, "web"]) == 0


def test_overlap_and_frequency_commands(mini_corpus, books, capsys):
    path = str(mini_corpus.path)
    capsys.readouterr()
    assert main(["leakage", "overlap", path, "--corpus", "mini", "--format", "csv"]) == 0
    rows = _csv(capsys.readouterr().out)
    assert list(rows[0])[:12] == ["book", "book_id", "book_source", "book_external_id", *OVERLAP_COLUMNS[1:]]
    by_book = {r["book"]: r for r in rows}
    assert int(by_book["Harbour"]["longest"]) > 10 and int(by_book["Elsewhere"]["longest"]) <= 2

    assert main(["leakage", "frequency", path, "--corpus", "mini", "--per-book", "1", "--gram", "3", "--format", "csv"]) == 0
    rows = _csv(capsys.readouterr().out)
    # a per-book CSV carries where each book came from beside its id, whichever command prints it
    assert list(rows[0])[:8] == ["book", "book_id", "book_source", "book_external_id", "year", "group", "passages",
                                 "mean_count"]
    assert {r["book"]: r["group"] for r in rows} == {"Harbour": "before 1928", "Orchard": "1928 and later",
                                                    "Elsewhere": "before 1928"}
    assert main(["leakage", "frequency", path, "--corpus", "mini", "--per-book", "1", "--gram", "3", "--correlations",
                 "--format", "csv"]) == 0
    rows = _csv(capsys.readouterr().out)
    assert [r["group"] for r in rows][0] == "all" and rows[0]["books"] == "3" and rows[0]["model"] == "gpt-x"


def test_membership_and_surprisal_commands(scoring_models, books, tmp_path, capsys):
    path = str(scoring_models.path)
    assert main(["membership", "run", path, "--model", "tiny", "--reference-model", "tiny-ref"]) == 0
    capsys.readouterr()
    assert main(["membership", "scores", path, "--model", "tiny", "--reference-model", "tiny-ref", "--format", "csv"]) == 0
    rows = _csv(capsys.readouterr().out)
    assert len(rows) == 3 and all(r["ref_ratio"] for r in rows)
    assert list(rows[0])[:11] == ["book", "book_id", "book_source", "book_external_id", "passage_id", "tokens", "perplexity",
                                 "zlib_ratio", "min_k", "min_k_pp", "ref_ratio"]
    assert main(["membership", "scores", path, "--model", "tiny", "--books", "--format", "csv"]) == 0
    rows = _csv(capsys.readouterr().out)
    assert {r["book"]: r["member"] for r in rows} == {"Harbour": "yes", "Orchard": "yes", "Elsewhere": "no"}
    assert main(["membership", "scores", path, "--model", "tiny", "--auc", "--format", "csv"]) == 0
    rows = _csv(capsys.readouterr().out)
    scores = ["perplexity", "zlib_ratio", "min_k", "min_k_pp", "ref_ratio", "ref_diff"]
    assert [(r["unit"], r["score"]) for r in rows] == [("book", s) for s in scores] + [("passage", s) for s in scores]
    assert rows[0]["members"] == "2" and rows[0]["non_members"] == "1"
    assert (rows[6]["members"], rows[6]["non_members"], rows[6]["member_books"]) == ("2", "1", "2")
    set_tags(scoring_models, books[2][0], {"member": "yes"})  # no non-member left: a plain note, not NaN cells
    assert main(["membership", "scores", path, "--model", "tiny", "--auc", "--format", "csv"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "No ROC AUC: all 3 tagged books tiny read are members" in captured.err
    assert "member=no" in captured.err

    text = tmp_path / "stimulus.txt"
    text.write_text("The gulls followed the ferry.", encoding="utf-8")
    assert main(["surprisal", path, "--model", "tiny", str(text), "--format", "csv"]) == 0
    rows = _csv(capsys.readouterr().out)
    assert list(rows[0])[:4] == ["word", "position", "surprisal", "tokens"]
    assert [r["word"] for r in rows] == ["The", "gulls", "followed", "the", "ferry."]
    assert all(float(r["surprisal"]) > 0 for r in rows)
    assert main(["decop", "accuracy", path, "--format", "csv"]) == 0


def test_leakage_charts_are_written_with_their_csv(scoring_models, corpus_dir, books, tmp_path):
    from workbench.probes.leakage import corpora, frequency, membership, overlap

    project = scoring_models
    corpora.build_corpus(project, "mini", [corpus_dir])
    overlap.run_overlap(project, "mini", "cloze")
    frequency.run_frequency(project, "mini", per_book=1, gram=3)
    membership.run_membership(project, "tiny", "cloze")
    assert {"leakage-overlap", "leakage-overlap-frequency", "leakage-frequency", "membership-scores",
            "membership-roc"} <= set(charts())
    assert {"leakage-overlap", "leakage-frequency", "membership-scores", "membership-auc", "decop-accuracy"} <= \
        set(tables())
    options = {"leakage-overlap": {}, "leakage-overlap-frequency": {}, "leakage-frequency": {"model": "gpt-x"},
               "membership-scores": {"model": "tiny"}, "membership-roc": {"model": "tiny"}}
    for name, chosen in options.items():
        for suffix in (".png", ".svg", ".pdf"):
            figure, table = export_chart(project, name, tmp_path / f"{name}{suffix}", **chosen)
            assert figure.stat().st_size > 1000 and table.suffix == ".csv"
    plotted = _csv((tmp_path / "leakage-overlap.csv").read_text(encoding="utf-8"))
    assert len(plotted) == 3 and {"tokens", "longest", "unlikely_by_chance"} <= set(plotted[0])
    scores = _csv((tmp_path / "membership-scores.csv").read_text(encoding="utf-8"))
    assert {r["member"] for r in scores} == {"yes", "no"} and {"auc", "auc_low", "auc_high"} <= set(scores[0])
    roc = _csv((tmp_path / "membership-roc.csv").read_text(encoding="utf-8"))
    assert {r["unit"] for r in roc} == {"book", "passage"} and {"fpr", "tpr", "auc"} <= set(roc[0])


def test_no_validity_passages_says_how_to_sample_them(project):
    from workbench.errors import UserError
    from workbench.probes.leakage import passages

    with pytest.raises(UserError, match="palimpsest validity passages"):
        passages.gather(project, "validity")
