"""``palimpsest new``, ``info``, ``save-as``, ``gui``, ``chart`` and ``table``."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.common import add_format_argument, add_project_argument, opened, print_frame
from workbench.errors import UserError
from workbench.project import Project


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("new", help="create an empty project file")
    add_project_argument(p)
    p.set_defaults(handler=cmd_new)

    p = subparsers.add_parser("info", help="what a project holds")
    add_project_argument(p)
    p.set_defaults(handler=cmd_info)

    p = subparsers.add_parser("save-as", help="write a consistent copy of a project to a new file")
    add_project_argument(p)
    p.add_argument("target", type=Path, help="the new file")
    p.set_defaults(handler=cmd_save_as)

    p = subparsers.add_parser("gui", help="open the desktop app")
    p.add_argument("project", type=Path, nargs="?", help="a project to open")
    p.add_argument("--page", help="the page to show first (library, models, probes, charts, annotate, ...)")
    p.add_argument("--screenshot", type=Path, metavar="PNG", help="render the page to a PNG file and exit")
    p.add_argument("--size", default="1280x800", help="window size for --screenshot, e.g. 1280x800")
    p.set_defaults(handler=cmd_gui)

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


def cmd_new(args: argparse.Namespace) -> int:
    project = Project.create(args.project)
    print(f"Created {project.path}.")
    project.close()
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    with opened(args.project) as project:
        db = project.db
        counts = {
            "books": db["books"].count,
            "models": db["models"].count,
            "runs": db["runs"].count,
            "responses": db["responses"].count,
        }
        print(f"{project.path.name}: " + ", ".join(f"{n} {what}" for what, n in counts.items()))
    return 0


def cmd_save_as(args: argparse.Namespace) -> int:
    with opened(args.project) as project:
        written = project.save_copy(args.target)
    print(f"Saved a copy to {written}.")
    return 0


def parse_options(pairs: list[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"'{pair}' is not an option: write it as key=value.")
        options[key.strip()] = value.strip()
    return options


def cmd_chart(args: argparse.Namespace) -> int:
    from workbench.export.registry import export_chart

    with opened(args.project) as project:
        written = export_chart(project, args.name, args.out, **parse_options(args.option))
    print("Wrote " + " and ".join(str(p) for p in written) + ".")
    return 0


def cmd_charts(args: argparse.Namespace) -> int:
    import pandas as pd

    from workbench.export.registry import charts

    frame = pd.DataFrame(
        [{"name": c.name, "title": c.title, "description": c.description} for c in charts().values()],
        columns=["name", "title", "description"],
    )
    print_frame(frame, args.format)
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from workbench.export.registry import export_table

    with opened(args.project) as project:
        written = export_table(project, args.name, args.out, **parse_options(args.option))
    print(f"Wrote {written}.")
    return 0


def cmd_tables(args: argparse.Namespace) -> int:
    import pandas as pd

    from workbench.export.registry import tables

    frame = pd.DataFrame(
        [{"name": t.name, "title": t.title, "description": t.description} for t in tables().values()],
        columns=["name", "title", "description"],
    )
    print_frame(frame, args.format)
    return 0


def cmd_gui(args: argparse.Namespace) -> int:
    try:
        from ui.app import run_app
    except ImportError as exc:
        raise UserError(
            f"The desktop app is not installed ({exc.name} is missing). Install it with: pip install 'palimpsest-workbench[gui]'"
        ) from exc
    if args.project is not None and not args.project.exists():
        raise UserError(f"There is no project file at {args.project}. Create one with 'palimpsest new {args.project}'.")
    return run_app(project=args.project, page=args.page, screenshot=args.screenshot, size=args.size)
