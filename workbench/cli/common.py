"""Helpers shared by the subcommands: opening the project, printing tables, a progress bar, asking before
paid API calls, and reporting how a run ended."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import pandas as pd

from workbench.errors import UserError
from workbench.progress import Progress, TaskState, describe_duration
from workbench.project import Project

if TYPE_CHECKING:
    from workbench.jobs import JobReport
    from workbench.work import Estimate, Work, WorkOutcome


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

# help texts several commands share (one wording for one option everywhere)
MODEL_HELP = "the model's label (palimpsest model list PROJECT lists them)"
BOOK_HELP = "the book's number (palimpsest books PROJECT lists them)"
SEED_HELP = "seed of the random choices: the same seed gives the same result"
RETRY_HELP = "ask again only for the items that failed before"
FLAGGED_HELP = "leave out books with fewer passages than were asked for (flagged at extraction)"
CORPUS_HELP = "the reference corpus's name (palimpsest corpus list PROJECT lists them)"
VARIANT_HELP = "the book as written (original) or with its character names replaced (substituted)"


def add_project_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", type=Path, help="the project file (.palimpsest)")


#: the project the running command opened: a per-book table printed as CSV or JSON gets its books' keys from it
_command_project: Path | None = None


@contextlib.contextmanager
def opened(path: Path) -> Iterator[Project]:
    global _command_project
    _command_project = Path(path)
    project = Project.open(path)
    try:
        yield project
    finally:
        project.close()


def print_frame(frame: pd.DataFrame, fmt: str = "table", out=None, *, empty: str = "(nothing yet)") -> None:
    """A frame as a table, CSV or JSON; an empty table says ``empty`` (why it is empty and what to do, where the
    command knows). A CSV or JSON of books carries each book's keys beside its title (``book_id``,
    ``book_source``, ``book_external_id``), so that rows join back to the library and to published tables."""
    out = out or sys.stdout
    if fmt != "table" and "book_id" in frame.columns and _command_project is not None:
        frame = _with_book_keys(frame, _command_project)
    if fmt == "csv":
        frame.to_csv(out, index=False, lineterminator="\n")
    elif fmt == "json":
        out.write(frame.to_json(orient="records", force_ascii=False) + "\n")
    else:
        if frame.empty:
            out.write(empty + "\n")
        else:
            frame = _whole_numbers_as_integers(frame)
            frame = frame.astype(object).where(frame.notna(), "")  # blanks, not <NA>, for missing values
            frame = frame.map(_small_number_readable)
            with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
                # to_string ignores the display.max_colwidth option (pandas 3): a scene's text filled the screen
                out.write(frame.to_string(index=False, max_colwidth=MAX_COLUMN_WIDTH) + "\n")


def _with_book_keys(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The book keys, read from the command's project file (opened read-only: the command may have closed it)."""
    import sqlite3
    from types import SimpleNamespace

    from workbench.corpus.book_keys import with_book_keys

    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    try:
        return with_book_keys(SimpleNamespace(db=conn), frame)
    finally:
        conn.close()


MAX_COLUMN_WIDTH = 60  # characters of a cell in a printed table (--format csv or json gives everything)


def _whole_numbers_as_integers(frame: pd.DataFrame) -> pd.DataFrame:
    """Float columns that hold only whole numbers (years, word counts made float by a missing value) printed
    as 1852, not 1852.0."""
    frame = frame.copy()
    for position, dtype in enumerate(frame.dtypes):
        values = frame.iloc[:, position].dropna()
        if pd.api.types.is_float_dtype(dtype) and len(values) and bool(((values % 1) == 0).all()) \
                and float(values.abs().max()) < 2 ** 53:
            frame.isetitem(position, frame.iloc[:, position].astype("Int64"))
    return frame


def _small_number_readable(value):
    """A float too small for the table's six decimals (a p-value of 3e-12 showed as 0.0) in scientific notation."""
    if isinstance(value, float) and value != 0 and abs(value) < 1e-4:
        return f"{value:.3g}"
    return value


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


# ---------------------------------------------------------------------------------------------- asking
YES_HELP = "do not ask before calling a paid API (needed where no one can answer: a script, a batch job)"


def add_yes_argument(parser: argparse.ArgumentParser, help: str = YES_HELP) -> None:
    parser.add_argument("--yes", action="store_true", help=help)


def confirm(question: str, stream=None) -> bool:
    """Ask ``question`` on the terminal; False (no) when there is no terminal to answer on."""
    if not sys.stdin.isatty():
        return False
    stream = stream or sys.stderr
    stream.write(f"{question} [y/N] ")
    stream.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def confirm_work(work: "Work", *, yes: bool, stream=None) -> None:
    """Before a planned work: refuse what cannot start (a key not set), then, where it calls a paid API, show
    what it will cost and ask (one question for all its paid models; without a terminal to answer on, nothing
    starts unless ``yes`` was given)."""
    work.check()
    if work.paid:
        _ask_before_paying(work.estimate(paid_only=True), work.cost_note(), yes=yes, stream=stream)


def _ask_before_paying(estimate: "Estimate", note: str, *, yes: bool, stream=None) -> None:
    """The command line's cost question: the estimate in the words the app shows, then yes or no."""
    from workbench.models.prices import FREE_HINT

    stream = stream or sys.stderr
    text = estimate.describe()
    if yes:
        stream.write(text + "\n")
        stream.flush()
        return
    if not sys.stdin.isatty():
        hints = " ".join(FREE_HINT.format(label=spec.label) for spec, _ in estimate.per_model)
        raise UserError(f"{text} Nothing was sent: there is no terminal here to ask whether to go ahead. "
                        "Add --yes to run it without the question. " + hints)
    stream.write(f"{text}\n{note}\n")
    if not confirm("Go ahead?", stream):
        raise UserError("Nothing was sent, at your request.")


def run_work(work: "Work", args: argparse.Namespace, *, progress: str | None = None, out=None) -> int:
    """The one command-line path of planned model work: refuse what cannot start, ask before paying (unless
    ``--yes``; refused without a terminal), run with a progress bar, say how each run ended, and return the
    exit status (0 only when every run finished with nothing failed)."""
    confirm_work(work, yes=bool(getattr(args, "yes", False)))
    outcome = work.run(progress_state(progress or work.title))
    return report_outcome(work, outcome, args.project, out=out)


def report_outcome(work: "Work", outcome: "WorkOutcome", project_path: Path, out=None) -> int:
    """How a work's runs ended (``report_run`` for each), what kept a model from running; the exit status."""
    out = out or sys.stdout
    status = 0
    for label, report in zip(outcome.labels, outcome.reports):
        what = work.heading if len(work.labels) <= 1 else f"{work.heading} ({label})"
        status = max(status, report_run(report, project_path, what, out=out))
    for label, reason in outcome.problems.items():
        out.write(f"{label}: {reason}\n")
        status = 1
    return status


# ---------------------------------------------------------------------------------------------- reporting
def report_run(report: "JobReport", project_path: Path, what: str, out=None) -> int:
    """Print how a run ended and return the exit status: 0 only when it finished with nothing failed. With
    failures, say how to ask again for just those."""
    out = out or sys.stdout
    failed = max(report.failed_total, report.failed)
    cached = f", {report.cached} from the cache" if report.cached else ""
    out.write(f"{what}: run {report.run_id}, {report.answered} of {report.total} answered"
              + (f", {failed} failed" if failed else "") + f" ({report.processed} asked now{cached}).\n")
    for text in dict.fromkeys((report.message, report.note)):  # a failed run's message is its note
        if text:
            out.write(text + "\n")
    if report.failed_total:
        out.write(f"Ask again for just the failed ones with: palimpsest continue {project_path} {report.run_id} "
                  "--retry-failed\n")
    return 0 if report.status == "done" and not report.failed_total else 1
