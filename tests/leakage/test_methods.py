"""The leakage probe in the methods text: its corpus, its procedure and its statistics."""

from workbench.export.methods import methods_record, methods_text
from workbench.probes.leakage import frequency, overlap


def test_overlap_and_frequency_runs_are_described_with_their_corpus(mini_corpus, tmp_path):
    (tmp_path / "q.txt").write_text("The ferry left the harbour at dawn.\n\nNothing matches here at all.\n",
                                    encoding="utf-8")
    report = overlap.run_overlap(mini_corpus, "mini", str(tmp_path / "q.txt"))
    text = methods_text(mini_corpus)
    procedure, rest = text.split("## Models")
    assert "### Leakage and membership evidence" in procedure
    assert "interpolated 5-gram model" in procedure and "1 - (1 - p)^n" in procedure
    assert "Book frequency" not in procedure  # only what was run is described
    assert f"### Run {report.run_id}: overlap with a reference corpus" in rest
    assert "- **Passages:** 2." in rest
    assert "- **Reference corpus:** 'mini', 4 documents" in rest and "tokenizer `word`" in rest
    assert "Spearman's rho" in rest.split("## Statistics")[1]
    record = methods_record(mini_corpus)
    run = next(r for r in record["runs"] if r["id"] == report.run_id)
    assert run["leakage"]["corpus"]["name"] == "mini" and run["leakage"]["max_order"] == overlap.MAX_ORDER
    assert frequency.KIND not in {r["kind"] for r in record["runs"]}
