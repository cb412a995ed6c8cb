"""The ``palimpsest`` command. Each part adds its subcommands from its own module (``workbench.parts``).

User errors end the program with a non-zero exit and one plain sentence, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from workbench import parts
from workbench.cli.common import CommandParser
from workbench.errors import UserError
from workbench.version import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="palimpsest",
        description="Palimpsest: what does a language model remember about a book, and which biases did it learn?",
    )
    parser.add_argument("--version", action="version", version=f"palimpsest {__version__}")
    # Every command, and every command of a group (which inherits the class), takes options and
    # positional arguments in any order.
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    for module in parts.load("commands"):
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        result = args.handler(args)
    except UserError as exc:
        print(f"palimpsest: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("palimpsest: stopped. Everything finished so far is saved; run the command again to continue.", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the output went to a program that stopped reading (| head): nothing to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout at exit: into nothing, not a broken pipe
        return 1
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
