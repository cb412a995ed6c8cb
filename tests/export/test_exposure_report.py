"""The exposure report on a small real project: name-cloze results imported as published, an overlap and an
n-gram count against a reference corpus built here, a toy continuation source registered by the test; the CSV's
columns and verdicts, the command, and the HTML page opened in a real headless browser."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from workbench.cli import main
from workbench.export import evidence
from workbench.export.evidence import EVIDENCE_COLUMNS, EvidenceSource
from workbench.export.report import exposure_table, report_html, write_report
from workbench.export.verdict import NONE_VERDICT, NOT_MEASURED, STRONG_VERDICT


def test_name_cloze_evidence_per_book(study):
    from workbench.probes.cloze.baselines import frequent_name_baseline
    from workbench.probes.cloze.evidence import cloze_evidence

    project, ids = study
    frame = cloze_evidence(project, "gpt").set_index("book_id")
    assert set(frame.index) == {ids["Orchard"], ids["Zebras"], ids["Kettles"]}  # 'Unread' is not measured
    baseline = frequent_name_baseline(project).dropna(subset=["book_id"]).set_index("book_id")
    for name, (correct, n) in {"Orchard": (9, 10), "Zebras": (1, 10), "Kettles": (0, 10)}.items():
        row = frame.loc[ids[name]]
        low, high = proportion_confint(correct, n, method="wilson")
        assert (row["n"], row["correct"], row["value"]) == (n, correct, correct / n)
        assert row["ci_low"] == pytest.approx(0.0 if correct == 0 else low)
        assert row["ci_high"] == pytest.approx(high)
        assert row["baseline_accuracy"] == pytest.approx(baseline.loc[ids[name], "accuracy"])
    assert frame.loc[ids["Orchard"], "signal"] == "strong"  # 9/10, Wilson [60%, 98%], above the baseline
    assert frame.loc[ids["Zebras"], "signal"] == "some"  # 1/10 above a baseline of 0: the interval reaches it
    assert frame.loc[ids["Kettles"], "signal"] == "none"
    assert [frame.loc[ids[b], "decile"] for b in ("Orchard", "Zebras", "Kettles")] == [9, 5, 2]
    assert "decile 9 of 10" in frame.loc[ids["Orchard"], "basis"]


def test_overlap_and_frequency_read_the_probe_frames(study):
    from workbench.probes.leakage.evidence import frequency_evidence, overlap_evidence
    from workbench.probes.leakage.frequency import grams_frame
    from workbench.probes.leakage.overlap import overlap_frame

    project, ids = study
    found = overlap_evidence(project, "gpt").set_index("book_id")
    passages = overlap_frame(project, "mini")
    for book in ("Orchard", "Zebras"):
        assert found.loc[ids[book], "value"] == passages[passages["book_id"] == ids[book]]["longest"].max()
        assert found.loc[ids[book], "corpus"] == "mini"
    assert found.loc[ids["Orchard"], "value"] >= 20 and found.loc[ids["Orchard"], "signal"] == "strong"
    assert found.loc[ids["Zebras"], "signal"] == "none"
    counted = frequency_evidence(project, "gpt").set_index("book_id")
    grams = grams_frame(project, "mini")
    for book in ("Orchard", "Zebras"):
        mine = grams[grams["book_id"] == ids[book]]["count"]
        assert counted.loc[ids[book], "found"] == int((mine > 0).sum())
        assert counted.loc[ids[book], "mean_count"] == pytest.approx(mine.mean())
        assert counted.loc[ids[book], "n"] == len(mine)


@pytest.fixture
def with_continuation(study, monkeypatch):
    """A toy continuation source, registered as another probe would register its own."""
    project, ids = study

    def books(project, model):
        return pd.DataFrame({"book_id": [ids["Zebras"], ids["Kettles"]], "value": [0.6, 0.0], "ci_low": [0.4, 0.0],
                             "ci_high": [0.8, 0.2], "n": [20, 20], "signal": ["strong", "none"],
                             "basis": ["12 of 20 continuations match", "0 of 20"], "matched_tokens": [50, 0]})

    evidence.evidence_sources()  # the probes' own sources first: the toy one then stands in for the real one
    monkeypatch.setitem(evidence._SOURCES, "continuation", EvidenceSource(
        "continuation", "Verbatim continuation", "extractable share", books, order=20, rule="toy rule"))
    return project, ids


def test_the_table_sets_every_source_side_by_side_with_a_verdict(with_continuation):
    project, ids = with_continuation
    table = exposure_table(project, "gpt").set_index("book")
    keys = [s["key"] for s in table.attrs["sources"]]
    assert keys[:2] == ["cloze", "continuation"] and {"overlap", "frequency", "decop", "membership"} <= set(keys)
    for key in keys:
        for column in EVIDENCE_COLUMNS[1:]:
            assert f"{key}_{column}" in table.columns
    assert "continuation_matched_tokens" in table.columns and "cloze_decile" in table.columns
    assert table.loc["Zebras", "continuation_value"] == 0.6
    verdicts = table["verdict"].to_dict()
    assert verdicts == {"Orchard": STRONG_VERDICT, "Zebras": STRONG_VERDICT, "Kettles": NONE_VERDICT,
                        "Unread": NOT_MEASURED}
    assert table.loc["Orchard", "verdict_rests_on"].startswith("cloze strong; overlap strong (corpus)")
    # Zebras: continuation strong, overlap none: flagged; Kettles: continuation and cloze both none
    assert bool(table.loc["Zebras", "measures_disagree"]) and not table.loc["Kettles", "measures_disagree"]
    assert table.loc["Kettles", "verdict_rests_on"] == "cloze none; continuation none"
    assert table.loc["Unread", "cloze_signal"] == "not measured" and table.loc["Kettles", "decop_signal"] == "not measured"


def test_a_source_that_breaks_the_contract_is_refused(study, monkeypatch):
    project, _ = study
    monkeypatch.setitem(evidence._SOURCES, "broken", EvidenceSource(
        "broken", "Broken", "x", lambda p, m: pd.DataFrame({"book_id": [1], "value": [1.0]})))
    with pytest.raises(ValueError, match="lacks"):
        exposure_table(project, "gpt")


def test_the_report_command_writes_csv_and_html(with_continuation, tmp_path, capsys):
    project, ids = with_continuation
    path = str(project.path)
    project.close()
    assert main(["report", path, "--model", "gpt", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 4
    assert list(rows[0])[:4] == ["book", "book_id", "book_source", "book_external_id"]
    assert {"verdict", "measures_disagree", "verdict_rests_on", "cloze_value", "cloze_ci_low", "cloze_signal",
            "continuation_value", "overlap_value", "overlap_corpus"} <= set(rows[0])
    assert {r["book"]: r["verdict"] for r in rows}["Kettles"] == NONE_VERDICT
    out = tmp_path / "report.csv"
    assert main(["report", path, "--model", "gpt", "--out", str(out)]) == 0
    assert list(csv.DictReader(out.open()))[0]["book_source"]
    assert main(["table", path, "exposure-report", "--out", str(tmp_path / "t.csv"), "--option", "model=gpt"]) == 0
    assert main(["report", path, "--model", "nobody", "--format", "csv"]) == 1
    assert "no model called 'nobody'" in capsys.readouterr().err


def _browser() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def test_the_html_report_is_self_contained_and_shows_in_a_browser(with_continuation, tmp_path):
    project, ids = with_continuation
    out = write_report(project, "gpt", tmp_path / "report.html")
    text = out.read_text(encoding="utf-8")
    assert not re.search(r"""(?:src|href)\s*=\s*(?!["']?(?:data:|#))""", text)  # nothing loaded from elsewhere
    assert not re.search(r"https?://", text) and "@import" not in text and "url(" not in text
    assert text.count('src="data:image/png;base64,') == 2  # the signal matrix and the intervals
    for phrase in ("strong evidence of exposure", "measures disagree", "not measured", "toy rule",
                   "the frequent-name baseline", "Orchard", "Verbatim continuation"):
        assert phrase in text
    assert report_html(project, "gpt").count("<tr>") == 5  # a header and four books
    browser = _browser()
    if browser is None:
        pytest.skip("Chromium is not installed here (.ci/run installs it): the page was not opened in a browser.")
    shot = tmp_path / "report.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--screenshot={shot}", "--window-size=1400,1800", out.as_uri()],
                   check=True, capture_output=True, timeout=120)
    from PIL import Image

    image = np.asarray(Image.open(shot).convert("RGB"))
    assert image.shape[:2] == (1800, 1400)
    ink = (image.min(axis=2) < 200).mean()  # share of pixels that are not white or near it
    assert ink > 0.03, f"the screenshot is nearly blank ({ink:.1%} ink)"
    reds = ((image[..., 0] > 120) & (image[..., 1] < 60) & (image[..., 2] < 60)).sum()
    assert reds > 200  # the strong signals and verdicts are drawn in their red


def test_the_methods_text_states_the_verdict_rule(study):
    from workbench.export.methods import methods_text

    project, _ = study
    text = methods_text(project)
    assert "### Exposure report" in text and "'strong evidence of exposure': at least one measure" in text
    assert "workbench.export.verdict.verdict" in text
