"""Exports: CSV tables, publication figures (matplotlib), methods text, the exposure report."""

from workbench.parts import PageSpec, Part

PART = Part(
    "exports",
    commands=("workbench.export.commands",),
    exports=("workbench.export.report_exports",),
    methods=("workbench.export.report_exports",),
    pages=(PageSpec("report", "Report", "ui.report.page:ReportPage"),),
)
