"""The REP tables as a scholar reads them: plain column titles, percentages, intervals as one cell.

Each function takes a frame from ``workbench.probes.rep`` and returns one row per input row, in the same
order, with readable titles and written-out values (text), ready for ``fill_table``. The CSV exports keep
the frames as computed; these views are only what the window shows.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ui import wording

OUTCOMES = {
    "labelled": "labelled",
    "unparsed": "judge gave no label",
    "unjudged": "not judged yet",
    "judge-failed": "judge call failed",
    "failed": "completion failed",
}
TESTS = {"chi-square": "Chi-square", "kruskal-wallis": "Kruskal-Wallis"}
TREND_METHODS = {"binomial": "binomial regression", "ols": "least squares"}


def _missing(value: Any) -> bool:
    return wording.missing(value)


def percent(value: Any, digits: int = 0) -> str:
    """0.234 -> '23%'."""
    return "" if _missing(value) else f"{float(value) * 100:.{digits}f}%"


def interval(low: Any, high: Any, digits: int = 0) -> str:
    """A 95% interval of shares as '4% – 62%'."""
    if _missing(low) or _missing(high):
        return ""
    return f"{float(low) * 100:.{digits}f}% – {float(high) * 100:.{digits}f}%"


def p_value(value: Any) -> str:
    if _missing(value):
        return ""
    return "< 0.001" if float(value) < 0.001 else f"{float(value):.3f}"


def decimal(value: Any, digits: int = 2) -> str:
    return "" if _missing(value) else f"{float(value):.{digits}f}"


def whole(value: Any) -> str:
    return "" if _missing(value) else f"{int(value):,}"


def text(value: Any) -> str:
    return "" if _missing(value) else str(value)


def flag(value: Any, word: str = "yes") -> str:
    """A true/false column written only where it is true (so the exceptions stand out)."""
    return word if not _missing(value) and bool(value) else ""


def _roles(frame: pd.DataFrame, names: dict[tuple[str, str], str]) -> list[str]:
    return [names.get((d, r)) or wording.role_key(r) for d, r in zip(frame["demographic"], frame["role"])]


def _demographics(frame: pd.DataFrame) -> list[str]:
    return [wording.role_key(d) for d in frame["demographic"]]


def _decades(frame: pd.DataFrame) -> list[str]:
    return [", ".join(x for x in (text(d), text(s)) if x) for d, s in
            zip(frame.get("decade", [""] * len(frame)), frame.get("stage", [""] * len(frame)))]


def shares_view(shares: pd.DataFrame, names: dict[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """``stats.with_shares``: one row per model, role and category."""
    names = names or {}
    if shares.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "Model": shares["model"].map(text),
        "Role": _roles(shares, names),
        "Category": shares["category"].map(text),
        "Share": shares["share"].map(percent),
        "95% CI (Wilson)": [interval(lo, hi) for lo, hi in zip(shares["ci_low"], shares["ci_high"])],
        "Count": [f"{whole(c)} of {whole(n)}" for c, n in zip(shares["count"], shares["n"])],
        "Decade, stage": _decades(shares),
        "Demographic": _demographics(shares),
        # unparsed answers are in the count's "of N"; failed completions (no text at all) are not
        "No label (in N)": [whole(n) if n else "" for n in shares["unparsed"].fillna(0)],
        "Failed (not in N)": [whole(n) if n else "" for n in shares["failed"].fillna(0)],
        "Small sample": shares["small_sample"].map(flag),
    })


def decade_tests_view(tests: pd.DataFrame, names: dict[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """``stats.decade_tests``: per role a chi-square over all categories, then a test per category."""
    names = names or {}
    if tests.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "Role": _roles(tests, names),
        "Category": [text(c) or "all categories" for c in tests["category"]],
        "Test": [TESTS.get(t, text(t)) for t in tests["test"]],
        # p first among the numbers: beside a chart the table is narrower than its columns, and the
        # column cut off at the edge must not be the one the scholar reads
        "p": tests["p_value"].map(p_value),
        "Significant": tests["significant"].map(lambda v: flag(v, "yes (p < 0.05)")),
        "Statistic": tests["statistic"].map(decimal),
        "df": tests["dof"].map(whole),
        "Decades": tests["decades"].map(text),
        "Completions": tests["n"].map(whole),
        "Demographic": _demographics(tests),
        "Note": tests["note"].map(text),
    })


def trends_view(trends: pd.DataFrame, names: dict[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """``stats.trends`` (its first frame): a quadratic fit of each category's share across decades."""
    names = names or {}
    if trends.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "Role": _roles(trends, names),
        "Category": trends["category"].map(text),
        # the numbers first (see decade_tests_view); the fit and demographic are the same on most rows
        "Quadratic term": trends["b2"].map(lambda v: decimal(v, 3)),
        "p (quadratic)": trends["p_b2"].map(p_value),
        "Linear term": trends["b1"].map(lambda v: decimal(v, 3)),
        "p (linear)": trends["p_b1"].map(p_value),
        "Decades": trends["decades"].map(whole),
        "R²": trends["r_squared"].map(decimal),
        "Fit": [TREND_METHODS.get(m, text(m)) for m in trends["method"]],
        "Demographic": _demographics(trends),
        "Time in": trends["x"].map(text),
        "Note": trends["note"].map(text),
    })


def spread_view(spread: pd.DataFrame) -> pd.DataFrame:
    """``stats.spread``: how unevenly a model spreads each demographic's categories over the roles."""
    if spread.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "Model": spread["model"].map(text),
        "Decade, stage": _decades(spread),
        "Demographic": _demographics(spread),
        "Spread (percentage points)": spread["spread_pp"].map(lambda v: decimal(v, 1)),
        "Roles": spread["roles"].map(whole),
        "Fewest completions per role": spread["min_n"].map(whole),
        "Small sample": spread["small_sample"].map(flag),
        "How it is measured": spread["measure"].map(text),
    })


def responses_view(rows: pd.DataFrame, names: dict[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """The completions behind a clicked bar, point or cell."""
    names = names or {}
    if rows.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "Model": rows["model"].map(text),
        "Decade": rows["decade"].map(text),
        "Role": [names.get((d, r)) or (n if isinstance(n, str) and n else wording.role_key(r))
                 for n, d, r in zip(rows.get("role_name", [None] * len(rows)), rows["demographic"], rows["role"])],
        "Sample": rows["sample"].map(whole),
        "Outcome": [OUTCOMES.get(o, text(o)) for o in rows["outcome"]],
        "Category": rows["category"].map(text),
        "Decided by": rows["evidence"].map(text),
        "Completion": [" ".join(text(r).split()) for r in rows["raw"]],
    })


def runs_view(runs: pd.DataFrame, about: list[str] | None = None) -> pd.DataFrame:
    """``jobs.runs_frame`` rows of REP runs."""
    if runs.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "Run": runs["id"].map(whole),
        "Kind": runs["kind"].map(wording.run_kind),
        "Model": runs["model"].map(text),
        "About": about if about is not None else [""] * len(runs),
        "Status": runs["status"].map(wording.status),
        "Done": [f"{int(ok) + int(failed):,} of {int(total):,}" for ok, failed, total in
                 zip(runs["ok"], runs["failed"], runs["total"])],
        "Failed": runs["failed"].map(whole),
        "Started": runs["created_at"].map(wording.when),
        "Finished": runs["finished_at"].map(wording.when),
        "Note": runs["note"].map(text),
    })


AGREEMENT_STATISTICS = {"accuracy": "Accuracy", "cohen_kappa": "Cohen's kappa", "kappa": "Cohen's kappa"}


def judge_agreement_view(frame: pd.DataFrame) -> pd.DataFrame:
    """``validation.judge_agreement``: the judge against each person and their consensus."""
    if frame.empty:
        return pd.DataFrame()
    accuracy = [str(s).lower().startswith("accuracy") for s in frame["statistic"]]
    return pd.DataFrame({
        "Task": frame["task"].map(text),
        "Judge": [wording.classifier(j) if str(j).startswith("judge:") else text(j) for j in frame["judge"]],
        "Against": frame["against"].map(lambda a: "people's consensus" if a == "consensus" else text(a)),
        "Statistic": [AGREEMENT_STATISTICS.get(str(s), text(s)) for s in frame["statistic"]],
        "Value": [percent(v) if is_share else decimal(v) for v, is_share in zip(frame["value"], accuracy)],
        "95% CI": [interval(lo, hi) if is_share else
                   ("" if _missing(lo) or _missing(hi) else f"{float(lo):.2f} – {float(hi):.2f}")
                   for lo, hi, is_share in zip(frame["ci_low"], frame["ci_high"], accuracy)],
        "Items": frame["items"].map(whole),
        "Note": frame["note"].map(text),
    })
