"""Helpers shared by the subcommands: opening the project, printing tables, a progress bar."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path
from typing import Iterator

import pandas as pd

from workbench.errors import UserError
from workbench.progress import Progress, TaskState, describe_duration
from workbench.project import Project


class CommandParser(argparse.ArgumentParser):
    """The parser of every command: options and positional arguments in any order, so that
    ``palimpsest import P --metadata m.csv a.txt`` reads the same as ``palimpsest import P a.txt --metadata
    m.csv``. (Plain argparse gives a list of paths that comes after the options nothing, then refuses the
    paths as "unrecognized".)

    argparse intermixes only a parser without commands of its own, and the commands' action parses each
    command with ``parse_known_args``: so that is where intermixing is switched on. A group of commands
    (``palimpsest cloze …``) parses as usual and hands the rest to its commands, which intermix.
    """

    _intermixing = False

    def intermixable(self) -> bool:
        positionals = self._get_positional_actions()
        if any(action.nargs in (argparse.PARSER, argparse.REMAINDER) for action in positionals):
            return False
        return not any(action in positionals for group in self._mutually_exclusive_groups
                       for action in group._group_actions)

    def parse_known_args(self, args=None, namespace=None):
        if self._intermixing or not self.intermixable():  # intermixed parsing calls this method itself
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def add_project_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", type=Path, help="the project file (.palimpsest)")


@contextlib.contextmanager
def opened(path: Path) -> Iterator[Project]:
    project = Project.open(path)
    try:
        yield project
    finally:
        project.close()


def print_frame(frame: pd.DataFrame, fmt: str = "table", out=None) -> None:
    out = out or sys.stdout
    if fmt == "csv":
        frame.to_csv(out, index=False, lineterminator="\n")
    elif fmt == "json":
        out.write(frame.to_json(orient="records", force_ascii=False) + "\n")
    else:
        if frame.empty:
            out.write("(nothing yet)\n")
        else:
            frame = frame.astype(object).where(frame.notna(), "")  # blanks, not <NA>, for missing values
            with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200,
                                   "display.max_colwidth", 60):
                out.write(frame.to_string(index=False) + "\n")


def confirm(question: str) -> bool:
    """Ask a yes/no question on the terminal; False (no) when nobody is there to answer."""
    if not sys.stdin.isatty():
        return False
    answer = input(f"{question} [y/N] ").strip().lower()
    return answer in ("y", "yes")


def parse_options(pairs: list[str]) -> dict[str, str]:
    """``["model=gpt4", "decade=1950s"]`` -> ``{"model": "gpt4", "decade": "1950s"}``."""
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"'{pair}' is not an option: write it as key=value.")
        options[key.strip()] = value.strip()
    return options


def add_format_argument(parser: argparse.ArgumentParser, default: str = "table") -> None:
    parser.add_argument("--format", choices=["table", "csv", "json"], default=default, help="output format")


def _format_eta(seconds: float | None) -> str:
    return "" if seconds is None else f", {describe_duration(seconds)} left"


def progress_state(label: str = "", stream=None, *, line_every: float = 10.0) -> TaskState:
    """A TaskState that shows progress on stderr: a redrawn one-line bar on a terminal; otherwise (a log
    file, a batch job on a GPU node) a plain line every ``line_every`` seconds and one at the end."""
    stream = stream or sys.stderr
    interactive = stream.isatty()
    started = time.monotonic()
    last_line = [float("-inf")]
    last_drawn: list = [None]

    def draw(p: Progress) -> None:
        failed = f", {p.failed} failed" if p.failed else ""
        finished = bool(p.total) and p.done >= p.total
        if finished and last_drawn[0] == (p.done, p.total, p.failed):
            return  # the end was already shown
        last_drawn[0] = (p.done, p.total, p.failed)
        if not interactive:
            now = time.monotonic()
            if finished or now - last_line[0] >= line_every:
                last_line[0] = now
                prefix = f"{label}: " if label else ""
                stream.write(f"{prefix}{p.done}/{p.total} done{failed}{_format_eta(None if finished else p.eta_seconds)}\n")
                stream.flush()
            return
        width = 30
        filled = int(width * p.fraction)
        bar = "#" * filled + "-" * (width - filled)
        stream.write(f"\r{label} [{bar}] {p.done}/{p.total}{failed}{_format_eta(p.eta_seconds)}   ")
        if finished:
            stream.write("\n")
        stream.flush()

    state = TaskState(on_progress=draw, min_interval=0.2)
    state.started = started  # type: ignore[attr-defined]
    return state
