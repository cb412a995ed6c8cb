"""``palimpsest methods``: the methods text of a project's runs (Markdown, or its JSON record)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.common import add_project_argument, opened


def register(subparsers: argparse._SubParsersAction) -> None:
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
