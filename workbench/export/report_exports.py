"""The exposure report in the export registry (table ``exposure-report``) and in the methods text (its verdict
rule, a section of its own that the probes' runs bring in)."""

from __future__ import annotations

from workbench.export.methods import MethodsSection, Statistic, register_methods
from workbench.export.registry import TableSpec, register_table
from workbench.export.report import report_frame
from workbench.export.verdict import RULE

#: the families whose runs give evidence (a family without runs in the project brings nothing)
EVIDENCE_FAMILIES = ("name-cloze", "leakage", "continuation")


def report_paragraph(runs: list[dict]) -> str:
    rules = " ".join(f"'{name}': {text}" for name, text in RULE)
    return ("The exposure report (palimpsest report) sets every measure of a book side by side for one model. Each "
            "source of evidence reads its own number as strong, some or none by a rule it states (in the report, "
            "beside each number). The verdict for a book combines them: " + rules)


def report_statistics() -> list[Statistic]:
    return [Statistic("Verdict of exposure", "for combining the sources' signals per book (a stated rule, no test)",
                      "workbench.export.verdict.verdict")]


register_table(TableSpec("exposure-report", "Exposure report: evidence and verdict per book", report_frame,
                         "for one model (model=LABEL): every source's number, interval, n and signal per book, the "
                         "verdict, whether the measures disagree and what the verdict rests on"))
register_methods(MethodsSection(key="exposure-report", title="Exposure report", kinds=(), procedure=report_paragraph,
                                statistics=report_statistics, order=900, follows=EVIDENCE_FAMILIES))
