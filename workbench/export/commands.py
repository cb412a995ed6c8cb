"""``palimpsest chart``, ``charts``, ``table``, ``tables`` (the export registry), ``methods`` (the methods
text of a project's runs, Markdown or its JSON record) and ``report`` (the exposure report of one model)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Iterable

from workbench.cli.common import (
    add_format_argument,
    add_project_argument,
    opened,
    parse_options,
    print_frame,
    progress_state,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("chart", help="save a publication figure (PDF, SVG or PNG) and the CSV of what it plots")
    add_project_argument(p)
    p.add_argument("name", help="chart name (palimpsest charts PROJECT lists them)")
    p.add_argument("--out", type=Path, required=True, help="FILE.pdf, FILE.svg or FILE.png")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="chart option, e.g. model=gpt4")
    p.set_defaults(handler=cmd_chart)

    p = subparsers.add_parser("charts", help="list the charts that can be exported")
    add_project_argument(p)
    add_format_argument(p)
    p.set_defaults(handler=cmd_charts)

    p = subparsers.add_parser("table", help="save one of the result tables as CSV (palimpsest tables lists them)")
    add_project_argument(p)
    p.add_argument("name", help="table name")
    p.add_argument("--out", type=Path, required=True, help="FILE.csv")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="table option, e.g. model=gpt4")
    p.set_defaults(handler=cmd_table)

    p = subparsers.add_parser("tables", help="list the result tables that can be exported")
    add_project_argument(p)
    add_format_argument(p)
    p.set_defaults(handler=cmd_tables)

    p = subparsers.add_parser(
        "methods",
        help="write what a paper's methods section needs: models, parameters, prompts, seeds, counts, statistics",
        description="Describe the runs of a project for a paper's methods section: models, generation parameters, "
                    "prompt templates in full, seeds, counts, dates and the statistics used. Markdown by default; "
                    "--json gives the same facts as a JSON record. API keys never appear.",
    )
    add_project_argument(p)
    p.add_argument("--run", type=int, action="append", metavar="ID",
                   help="describe this run (repeat for several; default: every run)")
    p.add_argument("--out", type=Path, metavar="FILE.md",
                   help="write to this file (Markdown, with the JSON record beside it) instead of printing")
    p.add_argument("--json", action="store_true", help="the JSON record instead of Markdown")
    p.set_defaults(handler=cmd_methods)

    p = subparsers.add_parser(
        "report",
        help="the exposure report: did a model see each book? every measure side by side, with a verdict per book",
        description="For one model, every book of the project with the evidence of each probe (name cloze, "
                    "continuation, overlap and n-gram frequency in reference corpora, DE-COP, membership scores), each "
                    "with its interval and its own signal, and a verdict per book by a stated rule. --out FILE.html "
                    "writes one self-contained page (figures inside), --out FILE.csv the table; without --out the table is printed "
                    "(--format csv: one row per book with a verdict column).",
    )
    add_project_argument(p)
    p.add_argument("--model", required=True, help="the model the report is about (its label)")
    p.add_argument("--book", type=int, metavar="ID", help="print only this book's row (palimpsest books PROJECT lists "
                                                          "the numbers); not with --out, which writes every book")
    p.add_argument("--out", type=Path, metavar="FILE",
                   help="write to FILE: FILE.html the self-contained report, FILE.csv its table")
    add_format_argument(p)
    p.set_defaults(handler=cmd_report)


def cmd_chart(args: argparse.Namespace) -> int:
    from workbench.export.registry import export_chart

    with opened(args.project) as project:
        written = export_chart(project, args.name, args.out, **parse_options(args.option))
    print("Wrote " + " and ".join(str(p) for p in written) + ".")
    return 0


def _print_listing(specs: Iterable[Any], fmt: str) -> None:
    """Registered charts or tables: name, title, description."""
    import pandas as pd

    columns = ["name", "title", "description"]
    print_frame(pd.DataFrame([{c: getattr(spec, c) for c in columns} for spec in specs], columns=columns), fmt)


def cmd_charts(args: argparse.Namespace) -> int:
    from workbench.export.registry import charts

    _print_listing(charts().values(), args.format)
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from workbench.export.registry import export_table

    with opened(args.project) as project:
        written = export_table(project, args.name, args.out, **parse_options(args.option))
    print(f"Wrote {written}.")
    return 0


def cmd_tables(args: argparse.Namespace) -> int:
    from workbench.export.registry import tables

    _print_listing(tables().values(), args.format)
    return 0


def cmd_methods(args: argparse.Namespace) -> int:
    from workbench.export.methods import methods_json, methods_text, write_methods

    with opened(args.project) as project:
        if args.out is None:
            text = methods_json(project, args.run) if args.json else methods_text(project, args.run)
            sys.stdout.write(text)
            return 0
        if args.json:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(methods_json(project, args.run), encoding="utf-8")
            print(f"Wrote {args.out}.")
            return 0
        paths = write_methods(project, args.out, args.run)
    print(f"Wrote {paths[0]} and, beside it, {paths[1].name}.")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from workbench.errors import UserError
    from workbench.export.report import exposure_table, verdict_counts, write_report
    from workbench.export.report_views import ReportChoices, report_table

    fmt = None if args.out is None else {".html": "html", ".htm": "html", ".csv": "csv"}.get(args.out.suffix.lower())
    if args.out is not None and fmt is None:
        suffix = args.out.suffix or "a file without an extension"
        raise UserError(f"The report is written as .html (the page) or .csv (its table), not {suffix}: "
                        "name the file report.html or report.csv.")
    if args.out is not None and args.book is not None:
        raise UserError("--book prints one book's row; the report written with --out holds every book. Leave out "
                        "one of them.")
    with opened(args.project) as project:
        if args.out is None:  # the Report page's table
            print_frame(report_table(project, ReportChoices(model=args.model, book_id=args.book)), args.format)
            return 0
        table = exposure_table(project, args.model, state=progress_state("Reading the evidence"))
        written = write_report(project, args.model, args.out, fmt=fmt, table=table)
    said = f"Wrote {written}. Verdicts: " + ", ".join(f"{n} {label}" for label, n in verdict_counts(table).items()
                                                     if n) + "."
    print(said)
    return 0
