"""The Results tab on a Time-Capsules-shaped project (one model per decade, several demographics, a judge
that sometimes answers with no label): statistics computed off the GUI thread and kept until the counts
change, numbers that add up, click-through to the right completions, roles that can be told apart."""

import random
from collections import Counter

import pandas as pd
import pytest

from tests.fixtures.chart_view import box_marks, mark_where, tick_labels
from tests.fixtures.rep_data import external_model, store_judge_run, store_rep_run
from workbench.probes.rep import charts as rep_charts
from workbench.probes.rep import stats, views
from workbench.probes.rep.lexical import lexical_match
from workbench.probes.rep.role_names import role_names
from workbench.probes.rep.sets import get_set

WAIT_MS = 60_000
DECADES = ("1950s", "1970s", "1990s")
SAMPLES = 8
TEXTS = {
    "gender": [" a woman who", " a man who", " my neighbour", " Mrs. Hale", " a non-binary chemist"],
    "sexual_orientation": [" his boyfriend", " her girlfriend", " a woman named Ann", " a man named Al",
                           " someone", " an old friend"],
}
JUNK = ("I cannot tell from the text.", "woman or man")


@pytest.fixture
def capsules(project):
    """Three decade models on gender and sexual orientation; a judge with unparsed answers and failures."""
    rng = random.Random(5)
    sets = [get_set(project, name) for name in TEXTS]
    external_model(project, "judge-llm")
    for index, decade in enumerate(DECADES):
        external_model(project, f"tc-{decade}", decade=decade)
        for stored in sets:
            weights = [1 + (index + j) % 3 for j in range(len(TEXTS[stored.name]))]
            completions = {(role.key, s): (None if rng.random() < 0.03 else rng.choices(TEXTS[stored.name], weights)[0])
                           for role in stored.parsed.prompts for s in range(SAMPLES)}
            store_rep_run(project, f"tc-{decade}", stored, completions, samples=SAMPLES)
    for stored in sets:
        ids = [row[0] for row in project.db.execute(
            "SELECT x.id FROM responses x JOIN runs r ON r.id = x.run_id WHERE r.kind = 'rep' AND x.status = 'ok'"
            f" AND x.item_id IN ({','.join('?' * len(stored.prompt_ids))})", list(stored.prompt_ids.values()))]
        labels = list(stored.parsed.labels)
        answers = {rid: (rng.choice(JUNK) if rng.random() < 0.1 else None if rng.random() < 0.03
                         else rng.choice(labels)) for rid in ids}
        store_judge_run(project, "judge-llm", stored, answers)
    return project


@pytest.fixture
def messages(monkeypatch):
    """Here an error box fails the test at once (the page fixture of conftest asks for this)."""
    monkeypatch.setattr("ui.dialogs.show_error", lambda parent, message, details="": pytest.fail(message))
    return []


def settle(qtbot, page):
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=WAIT_MS)


def column(table, title):
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    return [table.item(r, headers.index(title)).text() for r in range(table.rowCount())]


def test_tests_and_trends_are_computed_on_a_worker_once_per_count(qtbot, page, capsules, monkeypatch):
    calls = Counter()
    for owner, name in ((stats, "decade_tests"), (stats, "trends"),
                        (rep_charts, "trends_from_counts"), (rep_charts, "decade_shares_from_counts")):
        original = getattr(owner, name)

        def spy(*args, _original=original, _name=name, **kwargs):
            calls[_name] += 1
            return _original(*args, **kwargs)
        monkeypatch.setattr(owner, name, spy)
    page.set_project(capsules)
    settle(qtbot, page)
    tab = page.results_tab

    tab.table_choice.setCurrentText("Quadratic trends")
    # not computed on the GUI thread: a worker is at it, and the table says so rather than showing old rows
    assert page.ops.busy and tab.table.rowCount() == 0 and not tab.table_status.isHidden()
    settle(qtbot, page)
    assert tab.table_status.isHidden()
    expected = stats.trends(tab.counts)[0]
    assert tab.table.rowCount() == len(expected)
    assert column(tab.table, "Quadratic term") == [views.decimal(v, 3) for v in expected["b2"]]
    assert calls["trends"] == 2  # the table's, and this test's
    calls.clear()

    # back and forth, other charts and roles: nothing is fitted again
    for choice in ("Shares with 95% intervals", "Tests across decades", "Quadratic trends", "Tests across decades"):
        tab.table_choice.setCurrentText(choice)
        settle(qtbot, page)
    role = tab.controls.widget("role")
    roles = role.count()
    for index in [*range(roles), 0, roles - 1]:
        role.setCurrentIndex(index)
        settle(qtbot, page)
    tab.choose_chart("rep-trends")
    settle(qtbot, page)
    tab.controls.widget("role").setCurrentIndex(0)
    settle(qtbot, page)
    tab.controls.widget("role").setCurrentIndex(roles - 1)
    settle(qtbot, page)
    tab.choose_chart("rep-decade-shares")
    settle(qtbot, page)
    # each table once; each role's bars once (the first came with the count); two roles' trend charts
    assert calls["decade_tests"] == 1 and calls["trends"] == 0
    assert calls["decade_shares_from_counts"] == roles - 1 and calls["trends_from_counts"] == 2

    # a recount (other labels) brings its own tables: the one on show is computed for the judge's counts
    tab.choose_classifier("judge:judge-llm")
    settle(qtbot, page)
    assert tab.computed_for == "judge:judge-llm"
    tests = stats.decade_tests(stats.rep_counts(capsules, "judge:judge-llm"))
    assert column(tab.table, "Completions") == [views.whole(n) for n in tests["n"]]


def test_exporting_a_table_not_yet_computed_computes_it_on_a_worker(qtbot, page, capsules, tmp_path):
    page.set_project(capsules)
    settle(qtbot, page)
    tab = page.results_tab
    tab.choices = tab.choices.replace(table="tests")  # chosen, never shown: nothing computed yet
    tab.export_table(str(tmp_path / "tests.csv"))
    assert page.ops.busy
    settle(qtbot, page)
    written = pd.read_csv(tmp_path / "tests.csv")
    expected = stats.decade_tests(tab.counts)
    assert list(written["n"]) == list(expected["n"]) and list(written["test"]) == list(expected["test"])
    assert "Wrote" in tab.summary.text()


def test_counts_add_up_and_unparsed_answers_are_never_dropped(qtbot, page, capsules):
    page.set_project(capsules)
    settle(qtbot, page)
    tab = page.results_tab

    # the word lists: every count checked against the raw completions in the database
    truth, failed = Counter(), Counter()
    sets = {s.name: s for s in (get_set(capsules, name) for name in TEXTS)}
    prompt_of = {pid: (s, p) for s in sets.values() for pid, p in s.prompt_by_id().items()}
    for item, status, raw, model in capsules.db.execute(
            "SELECT x.item_id, x.status, x.raw, m.label FROM responses x JOIN runs r ON r.id = x.run_id"
            " JOIN models m ON m.id = r.model_id WHERE r.kind = 'rep'"):
        stored, prompt = prompt_of[item]
        if status != "ok":
            failed[(model, stored.name, prompt.key)] += 1
            continue
        label = lexical_match(raw, stored.parsed.lexical).label
        truth[(model, stored.name, prompt.key, stored.parsed.category_for(label, prompt))] += 1
    counts = tab.counts
    assert [int(c) for c in counts["count"]] == [truth[(m, d, r, c)] for m, d, r, c in
                                                 zip(counts["model"], counts["demographic"], counts["role"],
                                                     counts["category"])]
    assert sum(truth.values()) == int(counts.drop_duplicates(["model", "demographic", "role"])["n"].sum())
    assert [int(f) for f in counts["failed"]] == [failed[(m, d, r)] for m, d, r in
                                                 zip(counts["model"], counts["demographic"], counts["role"])]
    assert column(tab.table, "Count") == [f"{c} of {n}" for c, n in zip(counts["count"], counts["n"])]

    # the judge: unparsed answers are in every denominator and shown as their own part of each bar
    tab.choose_classifier("judge:judge-llm")
    settle(qtbot, page)
    counts = tab.counts
    per_role = counts.groupby(["model", "demographic", "role"]).agg(
        labelled=("count", "sum"), n=("n", "first"), unparsed=("unparsed", "first"))
    assert per_role["unparsed"].sum() > 0
    assert (per_role["labelled"] + per_role["unparsed"] == per_role["n"]).all()
    role = tab.controls.widget("role")
    for index in range(role.count()):
        role.setCurrentIndex(index)
        settle(qtbot, page)
        frame = tab.plot.frame
        assert frame.groupby("year")["share"].sum().round(9).eq(1.0).all()
    frame = tab.plot.frame
    bars = [what for _, _, what in box_marks(tab.plot)]
    assert {b["category"] for b in bars} >= {"unparsed"} or frame.query("category == 'unparsed'").empty
    for what in bars:
        tab.plot.click_at(tab.plot.pos_of(mark_where(tab.plot, **what)))
        shown = frame[(frame["year"] == what["year"]) & (frame["category"] == what["category"])]["count"].iloc[0]
        assert tab.responses.rowCount() == shown
        outcomes = set(column(tab.responses, "Outcome"))
        assert outcomes == ({"judge gave no label"} if what["category"] == "unparsed" else {"labelled"})
        assert set(column(tab.responses, "Decade")) == {f"{what['year']}s"}


def test_roles_that_share_a_name_can_be_told_apart(qtbot, page, capsules):
    page.set_project(capsules)
    settle(qtbot, page)
    tab = page.results_tab
    role = tab.controls.widget("role")
    entries = [role.itemText(i) for i in range(role.count())]
    assert len(set(entries)) == len(entries) == 5 + 6
    assert "Sexual orientation: partner (of a man)" in entries
    assert "Sexual orientation: fiancé(e) (of a non-binary person)" in entries

    tab.choose_chart("rep-heatmap")
    demographic = tab.controls.widget("demographic")
    demographic.setCurrentIndex(demographic.findData("sexual_orientation"))
    settle(qtbot, page)
    ticks = [text for _, text in tick_labels(tab.plot.figure.axes[0])]
    assert len(set(ticks)) == len(ticks) == 6
    second = ticks[1]  # the second role: the partner of a woman
    assert second == "partner (of a woman)"
    cell = next(m for m in tab.plot.marks if m.text.startswith(f"{second}: "))
    tab.plot.click_at(tab.plot.pos_of(cell))
    assert set(column(tab.responses, "Role")) == {"partner (of a woman)"}
    roles = [r for r in column(tab.table, "Role") if r.startswith("partner")]
    assert set(roles) == {"partner (of a man)", "partner (of a woman)", "partner (of a non-binary person)"}


def test_role_names_fall_back_to_keys_when_subjects_do_not_tell_roles_apart():
    frame = pd.DataFrame({"demographic": ["d", "d", "d"], "role": ["a_one", "a_two", "b"],
                          "role_name": ["friend", "friend", "boss"], "subject": [None, None, None]})
    assert role_names(frame) == {("d", "a_one"): "friend (a one)", ("d", "a_two"): "friend (a two)",
                                       ("d", "b"): "boss"}


def test_the_shares_table_keeps_answers_without_a_label_apart_from_failed_completions():
    import pandas as pd

    shares = pd.DataFrame({"model": ["m"], "decade": ["1950s"], "stage": [""], "demographic": ["gender"],
                           "role": ["ceo"], "category": ["woman"], "count": [4], "n": [10], "share": [0.4],
                           "ci_low": [0.17], "ci_high": [0.69], "unparsed": [3], "failed": [2],
                           "small_sample": [True]})
    view = views.shares_view(shares)
    row = view.iloc[0]
    assert row["Count"] == "4 of 10"
    assert row["No label (in N)"] == "3" and row["Failed (not in N)"] == "2"
