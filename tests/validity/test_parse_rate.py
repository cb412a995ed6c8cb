"""The analyses on answers phrased as models phrase them: the missing share, Spearman's rho, the parse rate
per group and the list of answers without a value are what the answers hold, whatever the phrasing."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import fisher_exact, spearmanr
from statsmodels.stats.proportion import proportion_confint

from tests.fixtures.cloze_texts import gpt4books_rows
from tests.validity.conftest import write
from workbench.cli import main
from workbench.export.registry import export_table, tables
from workbench.probes.cloze.gpt4books import import_gpt4books
from workbench.probes.validity.narrative_time import narrative_items, narrative_table
from workbench.probes.validity.parse_rate import unparsed_answers
from workbench.probes.validity.passages import import_passages
from workbench.probes.validity.predictions import import_predictions
from workbench.probes.validity.year import year_books, year_span_spread, year_table

N = 30
RIGHT = {i: (i * 7) % 11 for i in range(1, N + 1)}  # name-cloze answers right out of 10: accuracy 0 to 1
TRUE_YEAR = {i: 1800 + 7 * i for i in range(1, N + 1)}
#: the year the model means for book i: the less it knows the book, the further off
MEANT = {i: TRUE_YEAR[i] + (-1) ** i * (round(40 * (1 - RIGHT[i] / 10)) + i % 5) for i in range(1, N + 1)}
#: how the model writes its answer for book i (i % 6): a third of them say where the book is 'from'
YEAR_FORMS = ["It dates from {y}.", "{y}", "Probably from around {y}.", "I cannot say.", "c. {y}", "**{y}**"]
DECLINED = {i for i in range(1, N + 1) if i % 6 == 3}
MINUTES = {i: float(5 * 3 ** (i % 7)) for i in range(1, N + 1)}
UNDERWOOD = "1: A scene.\n2: It seems to take an hour or so.\n3: That is {m:g} minutes.\n4: {m:g} minutes.\n5: Low."
#: narrative-time answers for book i (i % 5), all meaning MEANT_MINUTES[i]
TIME_FORMS = ["{h:g}\u00bd hours", UNDERWOOD, "{m:g} minutes", "Answer: **{m:g} min**", "I can't tell."]


def meant_minutes(i: int) -> float:
    return MINUTES[i] * (1 + (10 - RIGHT[i]) / 4) if i % 5 != 0 else 90.0 + 60 * i


def time_answer(i: int) -> str:
    m = meant_minutes(i)
    form = TIME_FORMS[i % 5]
    if i % 5 == 0:
        return form.format(h=1 + i)  # (1 + i) and a half hours: 90 + 60 i minutes
    return form.format(m=m)


@pytest.fixture
def phrased(project, tmp_path):
    """30 books known from imported name-cloze results ('alpha'), a passage each with its year and minutes,
    and alpha's year and narrative-time answers written in the forms above."""
    folder = tmp_path / "alpha"
    folder.mkdir()
    paths = [write(folder / f"b{i:02d}.tsv", gpt4books_rows(i, RIGHT[i])) for i in range(1, N + 1)]
    import_gpt4books(project, paths, "alpha")
    lines = ["book\tyear\tminutes\tpassage"] + [f"b{i:02d}\t{TRUE_YEAR[i]}\t{MINUTES[i]}\tPassage of book {i}."
                                                for i in range(1, N + 1)]
    import_passages(project, write(tmp_path / "passages.tsv", "\n".join(lines) + "\n"))
    years = pd.DataFrame({"book": [f"b{i:02d}" for i in range(1, N + 1)],
                          "answer": [YEAR_FORMS[i % 6].format(y=MEANT[i]) for i in range(1, N + 1)]})
    years.to_csv(tmp_path / "years.csv", index=False)
    import_predictions(project, "year", tmp_path / "years.csv", "alpha")
    times = pd.DataFrame({"book": [f"b{i:02d}" for i in range(1, N + 1)],
                          "answer": [time_answer(i) for i in range(1, N + 1)]})
    times.to_csv(tmp_path / "times.csv", index=False)
    import_predictions(project, "narrative-time", tmp_path / "times.csv", "alpha")
    ids = {i: project.db.execute("SELECT id FROM books WHERE external_id = ?", [f"b{i:02d}"]).fetchone()[0]
           for i in range(1, N + 1)}
    return project, ids


def test_answers_saying_where_a_book_is_from_are_years_not_missing(phrased):
    """Fails on the parser that read 'from 1996.' as an open range: 15 of 30 books missing, not 5."""
    project, ids = phrased
    table = year_table(project, "alpha", "alpha", resamples=50, permutations=99).set_index("group")
    every = table.loc["all"]
    assert (every["books"], every["missing"]) == (N, len(DECLINED))
    assert every["missing_share"] == pytest.approx(len(DECLINED) / N)
    dated = [i for i in range(1, N + 1) if i not in DECLINED]
    expected = spearmanr([RIGHT[i] / 10 for i in dated], [abs(MEANT[i] - TRUE_YEAR[i]) for i in dated])
    assert every["spearman_rho"] == pytest.approx(expected.statistic)
    assert every["spearman_p"] == pytest.approx(expected.pvalue)
    assert every["mae"] == pytest.approx(np.mean([abs(MEANT[i] - TRUE_YEAR[i]) for i in dated]))
    books = year_books(project, "alpha", "alpha").set_index("book_id")
    assert books.loc[ids[6], "answer"] == f"It dates from {MEANT[6]}." and books.loc[ids[6], "predicted"] == MEANT[6]


def test_the_parse_rate_per_group_and_its_difference(phrased):
    project, _ = phrased
    books = year_books(project, "alpha", "alpha", groups="quintile")
    table = year_table(project, "alpha", "alpha", groups="quintile", resamples=50, permutations=99,
                       books=books).set_index("group")
    for group in ("top", "bottom", "all"):
        part = books if group == "all" else books[books["group"] == group]
        answers, parsed = len(part), int((~part["missing"]).sum())
        row = table.loc[group]
        assert (row["answers"], row["parsed"], row["declined"]) == (answers, parsed, answers - parsed)
        assert row["parse_rate"] == pytest.approx(parsed / answers)
        low, high = proportion_confint(parsed, answers, alpha=0.05, method="wilson")
        assert row["parse_ci_low"] == pytest.approx(0.0 if parsed == 0 else low)
        assert row["parse_ci_high"] == pytest.approx(1.0 if parsed == answers else high)
        assert row["approximate"] == 0 and row["spans"] == "decade"
    top, bottom = table.loc["top"], table.loc["bottom"]
    difference = table.loc["difference"]
    assert difference["parse_rate"] == pytest.approx(top["parse_rate"] - bottom["parse_rate"])
    expected = fisher_exact([[top["parsed"], top["answers"] - top["parsed"]],
                             [bottom["parsed"], bottom["answers"] - bottom["parsed"]]]).pvalue
    assert difference["parse_p_value"] == pytest.approx(expected)
    assert "parse rate: Fisher's exact test" in difference["note"]


def test_the_span_rule_is_an_option_and_recorded(phrased, tmp_path):
    project, ids = phrased
    answers = pd.DataFrame({"book": ["b01", "b02", "b03"],
                            "answer": ["the 1820s", "the early nineteenth century", "between 1815 and 1825"]})
    answers.to_csv(tmp_path / "spans.csv", index=False)
    import_predictions(project, "year", tmp_path / "spans.csv", "gamma")
    by_rule = {}
    for spans in ("missing", "decade", "century"):
        books = year_books(project, "gamma", "alpha", spans=spans).set_index("book_id")
        table = year_table(project, "gamma", "alpha", spans=spans, resamples=20, permutations=19).set_index("group")
        assert (table["spans"] == spans).all()
        by_rule[spans] = (books.loc[[ids[1], ids[2], ids[3]], "predicted"].tolist(), table.loc["all", "approximate"])
    nan = math.nan
    assert by_rule["missing"][0] == pytest.approx([nan, nan, nan], nan_ok=True) and by_rule["missing"][1] == 0
    assert by_rule["decade"][0] == pytest.approx([1825, nan, 1820], nan_ok=True) and by_rule["decade"][1] == 2
    assert by_rule["century"][0] == pytest.approx([1825, 1800 + 100 / 6, 1820]) and by_rule["century"][1] == 3
    books = year_books(project, "gamma", "alpha").set_index("book_id")
    assert books.loc[ids[1], "flag"] == "decade" and books.loc[ids[3], "flag"] == "range"
    assert "wider than 20 years" in books.loc[ids[2], "reason"]
    spread = year_span_spread(project, "gamma", "alpha").set_index("spans")
    assert list(spread.index) == ["missing", "decade", "century"]
    assert list(spread["missing_share"]) == pytest.approx([3 / 3, 1 / 3, 0 / 3])
    assert list(spread["approximate"]) == [0, 2, 3]
    errors = {1: abs(1825 - TRUE_YEAR[1]), 2: abs(1800 + 100 / 6 - TRUE_YEAR[2]), 3: abs(1820 - TRUE_YEAR[3])}
    assert spread.loc["century", "mae"] == pytest.approx(np.mean(list(errors.values())))
    assert spread.loc["century", "spearman_rho"] == pytest.approx(
        spearmanr([RIGHT[i] / 10 for i in (1, 2, 3)], [errors[i] for i in (1, 2, 3)]).statistic)
    assert math.isnan(spread.loc["missing", "spearman_rho"])


def test_every_unparsed_answer_is_listed_with_its_book_and_reason(phrased):
    project, ids = phrased
    listed = unparsed_answers(project, "year", "alpha", "alpha")
    assert sorted(listed["book_id"]) == sorted(ids[i] for i in DECLINED)
    assert set(listed["raw"]) == {"I cannot say."} and set(listed["reason"]) == {"declined to answer"}
    assert listed["passage"].str.startswith("Passage of book").all()
    groups = year_books(project, "alpha", "alpha").set_index("book_id")["group"]
    assert [groups[b] for b in listed["book_id"]] == list(listed["group"])
    order = {"top": 0, "bottom": 1, "middle": 2, "": 3}
    assert list(listed["group"].map(order)) == sorted(listed["group"].map(order))


def test_narrative_times_written_as_models_write_them_are_read(phrased):
    """Fails on the old parser: '2½ hours' had no unit, and Underwood's step 2 ('an hour') was read
    instead of the minutes of step 4."""
    project, _ = phrased
    items = narrative_items(project, "alpha", "alpha", "imported")
    read = [i for i in range(1, N + 1) if i % 5 != 4]
    assert len(items) == N and int(items["predicted_minutes"].notna().sum()) == len(read)
    table = narrative_table(project, "alpha", "alpha", "imported", resamples=50).set_index("group")
    every = table.loc["all"]
    assert (every["items"], every["missing"]) == (len(read), N - len(read))
    expected = spearmanr([meant_minutes(i) for i in read], [MINUTES[i] for i in read]).statistic
    assert every["spearman_rho"] == pytest.approx(expected)
    assert (every["answers"], every["parsed"], every["declined"]) == (N, len(read), N - len(read))
    assert every["parse_rate"] == pytest.approx(len(read) / N)
    listed = unparsed_answers(project, "narrative-time", "alpha", "alpha", reference="imported")
    assert len(listed) == N - len(read) and set(listed["raw"]) == {"I can't tell."}
    assert listed["reference_minutes"].notna().all()


def test_the_cli_reports_the_parse_rate_and_lists_the_unparsed_answers(phrased, capsys):
    project, _ = phrased
    path = project.path
    project.close()
    code = main(["validity", "year", str(path), "--model", "alpha", "--grouped-by", "alpha", "--resamples", "20",
                 "--permutations", "19"])
    out = capsys.readouterr().out
    assert code == 0
    assert f"Answers read: all {N - len(DECLINED)}" not in out  # a share, not a count, comes first
    assert f"all {(N - len(DECLINED)) / N:.0%} ({N - len(DECLINED)} of {N}, 95% CI" in out
    assert f"{len(DECLINED)} declined by the model" in out and "--unparsed" in out
    assert "Spans of years: 'decade'" in out and "Under the other rules for spans: 'missing': missing" in out
    code = main(["validity", "year", str(path), "--model", "alpha", "--grouped-by", "alpha", "--compare-spans", "--format",
                 "csv"])
    spread = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert code == 0 and list(spread["spans"]) == ["missing", "decade", "century"]
    code = main(["validity", "year", str(path), "--model", "alpha", "--grouped-by", "alpha", "--unparsed", "--format", "csv"])
    listed = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert code == 0 and len(listed) == len(DECLINED) and {"book", "passage_id", "raw", "reason", "passage"} <= set(
        listed.columns)
    code = main(["validity", "narrative-time", str(path), "--model", "alpha", "--grouped-by", "alpha", "--reference",
                 "imported", "--unparsed"])
    out = capsys.readouterr().out
    assert code == 0 and "I can't tell." in out and f"{N // 5} answer(s) without a value." in out
    code = main(["validity", "year", str(path), "--model", "alpha", "--grouped-by", "alpha", "--spans", "century",
                 "--format", "csv", "--resamples", "20", "--permutations", "19"])
    captured = capsys.readouterr()
    assert code == 0 and set(pd.read_csv(io.StringIO(captured.out))["spans"]) == {"century"}
    assert "Answers read:" in captured.err  # the words go to stderr when stdout is a CSV


def test_the_unparsed_table_is_in_the_export_registry(phrased, tmp_path):
    project, _ = phrased
    assert {"validity-unparsed", "validity-year-spans"} <= set(tables())
    spread = pd.read_csv(export_table(project, "validity-year-spans", tmp_path / "spans.csv", model="alpha"))
    assert list(spread["missing_share"]) == pytest.approx([len(DECLINED) / N] * 3)
    for task, options in (("year", {}), ("narrative-time", {"reference": "imported"})):
        frame = pd.read_csv(export_table(project, "validity-unparsed", tmp_path / f"{task}.csv", task=task,
                                         model="alpha", **options))
        assert len(frame) == (len(DECLINED) if task == "year" else N // 5)
        assert {"group", "book", "passage_id", "raw", "reason"} <= set(frame.columns)
