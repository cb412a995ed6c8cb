"""``palimpsest new``, ``info``, ``save-as`` and ``gui``."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.common import add_project_argument, opened
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
    p.add_argument("--overwrite", action="store_true", help="replace TARGET if it exists (never the project itself)")
    p.set_defaults(handler=cmd_save_as)

    p = subparsers.add_parser("gui", help="open the desktop app")
    p.add_argument("project", type=Path, nargs="?", help="a project to open")
    p.add_argument("--page", help="the page to show first (library, models, probes, charts, annotate, ...)")
    p.add_argument("--screenshot", type=Path, metavar="PNG", help="render the page to a PNG file and exit")
    p.add_argument("--size", default="1280x800", help="window size for --screenshot, e.g. 1280x800")
    p.set_defaults(handler=cmd_gui)


def cmd_new(args: argparse.Namespace) -> int:
    project = Project.create(args.project)
    print(f"Created {project.path}.")
    project.close()
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from workbench.runs import runs_per_model

    with opened(args.project) as project:
        db = project.db
        counts = {
            "books": db["books"].count,
            "models": db["models"].count,
            "runs": sum(runs_per_model(project).values()),
            "responses": db["responses"].count,
        }
        print(f"{project.path.name}: " + ", ".join(f"{n} {what}" for what, n in counts.items()))
    return 0


def cmd_save_as(args: argparse.Namespace) -> int:
    with opened(args.project) as project:
        written = project.save_copy(args.target, overwrite=args.overwrite)
    print(f"Saved a copy to {written}.")
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
