"""``palimpsest validity ...``: the downstream-validity probe (year of publication, narrative time)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.common import (
    add_format_argument,
    add_project_argument,
    confirm,
    opened,
    print_frame,
    progress_state,
    run_work,
)
from workbench.errors import UserError
from workbench.probes.validity.parsers import DEFAULT_SPANS, SPAN_RULES

TASK_CHOICES = ("year", "narrative-time")
GROUP_CHOICES = ("decile", "quintile")



def register(subparsers: argparse._SubParsersAction) -> None:
    validity = subparsers.add_parser(
        "validity", help="downstream validity: year of publication and narrative time against memorization",
        description="Do a model's answers about books get better the more of a book it has memorized? Ask for the "
                    "year of first publication and the narrative time of a passage, and compare the books it "
                    "knows best and least by name-cloze accuracy.")
    commands = validity.add_subparsers(dest="validity_command", metavar="STEP")

    p = commands.add_parser("passages", help="sample passages of whole sentences from the books, or import them")
    add_project_argument(p)
    p.add_argument("--from", dest="source", type=Path, metavar="FILE",
                   help="import passages from a TSV/CSV file (columns book, passage; optional year, minutes, id)")
    p.add_argument("--words", type=int, default=250, metavar="N", help="words per passage (default 250)")
    p.add_argument("--per-book", type=int, default=1, metavar="N", help="passages per book (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    p.add_argument("--book", type=int, action="append", metavar="ID", help="only this book (repeatable)")
    p.add_argument("--book-set", dest="book_set", metavar="NAME", help="only the books of this book set")
    p.add_argument("--replace", action="store_true",
                   help="sample again books that have passages (deletes their answers)")
    p.add_argument("--yes", action="store_true", help="do not ask before deleting answers with --replace")
    p.add_argument("--list", action="store_true", help="list the stored passages instead")
    add_format_argument(p)
    p.set_defaults(handler=cmd_passages)

    p = commands.add_parser("run", help="ask a model the year or the narrative time of every passage")
    add_project_argument(p)
    p.add_argument("--question", dest="task", required=True, choices=TASK_CHOICES,
                   help="what the model is asked: the year of first publication or the narrative time of a passage")
    p.add_argument("--model", required=True, metavar="LABEL", help="a model of the project (palimpsest model list PROJECT lists them)")
    p.add_argument("--template", metavar="NAME", help="prompt template (default: the task's shipped one)")
    p.add_argument("--book", type=int, action="append", metavar="ID", help="only this book's passages (repeatable)")
    p.add_argument("--max-tokens", type=int, metavar="N", help="longest answer in tokens")
    p.add_argument("--retry-failed", action="store_true", help="only ask again where the call failed")
    p.add_argument("--yes", action="store_true", help="do not ask before calling a paid API")
    p.set_defaults(handler=cmd_run)

    p = commands.add_parser("import", help="import answers made elsewhere (columns book, answer; optional passage_id)")
    add_project_argument(p)
    p.add_argument("--question", dest="task", required=True, choices=TASK_CHOICES,
                   help="what the model is asked: the year of first publication or the narrative time of a passage")
    p.add_argument("--model-label", required=True, metavar="LABEL", help="the label the answers go under")
    p.add_argument("file", type=Path, metavar="FILE", help="the file to read")
    p.set_defaults(handler=cmd_import)

    p = commands.add_parser("year", help="year of publication: missing answers and error, top against bottom books")
    _analysis_arguments(p)
    p.add_argument("--years", default="1000-2100", metavar="FROM-TO",
                   help="plausible years; other four-digit numbers in an answer are passed over (default 1000-2100)")
    p.add_argument("--spans", choices=tuple(SPAN_RULES), default=DEFAULT_SPANS,
                   help="what an answer naming a span of years gives: 'decade' (default): a range or decade up to 20 "
                        "years wide counts as its midpoint, a century is missing; 'century': centuries count as their "
                        "midpoint too; 'missing': only a single year counts")
    p.add_argument("--compare-spans", action="store_true",
                   help="the missing share, MAE and Spearman's rho under each rule for spans, side by side")
    p.add_argument("--permutations", type=int, default=9999, metavar="N",
                   help="permutations of the test (default 9999)")
    p.set_defaults(handler=cmd_year)

    p = commands.add_parser("narrative-time", help="narrative time: Spearman's rho with the reference, by group")
    _analysis_arguments(p)
    p.add_argument("--reference", required=True, metavar="TASK|imported",
                   help="an annotation task's name, or 'imported' for the minutes given with the passages")
    p.set_defaults(handler=cmd_narrative_time)

    p = commands.add_parser("annotate", help="make a blinded narrative-time annotation task of the passages")
    add_project_argument(p)
    p.add_argument("--task", dest="name", required=True, metavar="NAME", help="the name of the annotation task to make")
    p.add_argument("--book", type=int, action="append", metavar="ID", help="only this book's passages (repeatable)")
    p.add_argument("--not-blinded", action="store_true", help="let annotators see the book (not recommended)")
    p.set_defaults(handler=cmd_annotate)

    validity.set_defaults(handler=lambda args: validity.print_help() or 2)


def _analysis_arguments(p: argparse.ArgumentParser) -> None:
    from workbench.corpus.book_sets import ALL_TIED, DEFAULT_DRAWS, TIE_RULES

    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help="the model whose answers are analysed")
    p.add_argument("--grouped-by", dest="by", required=True, metavar="LABEL",
                   help="the model whose name-cloze accuracy groups the books")
    p.add_argument("--groups", choices=GROUP_CHOICES, default="decile", help="top/bottom decile or quintile")
    p.add_argument("--books", dest="per_book", action="store_true",
                   help="one row per book (per passage for narrative time) instead of the group table")
    p.add_argument("--book", dest="book_id", type=int, metavar="ID",
                   help="with --books or --unparsed: only this book's rows (the groups are still cut over every book)")
    p.add_argument("--unparsed", action="store_true",
                   help="list every answer the analysis counts that gave no value (book, passage, raw answer, why)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (and permutations, and tie draws)")
    p.add_argument("--resamples", type=int, default=2000, metavar="N", help="bootstrap resamples (default 2000)")
    p.add_argument("--ties", choices=list(TIE_RULES), default=ALL_TIED,
                   help="books tied at a cut: 'all' go in (a group may be larger than its share), or 'draw' at random "
                        "over --draws seeded draws (the median draw is shown, with the spread over the draws)")
    p.add_argument("--draws", type=int, default=DEFAULT_DRAWS, metavar="N",
                   help=f"draws of the ties with --ties draw (default {DEFAULT_DRAWS})")
    add_format_argument(p)


def _year_range(text: str) -> tuple[int, int]:
    low, sep, high = text.partition("-")
    try:
        values = int(low), int(high)
    except ValueError:
        raise UserError(f"Write the plausible years as FROM-TO, e.g. 1500-2030 (got '{text}').") from None
    if not sep or values[0] >= values[1]:
        raise UserError(f"Write the plausible years as FROM-TO with FROM before TO (got '{text}').")
    return values


def _book_ids(project, args) -> list[int] | None:
    from workbench.corpus.book_sets import book_set_members

    ids = set(args.book or [])
    if args.book_set:
        members = book_set_members(project, args.book_set)
        ids = ids & members if ids else members
    elif not ids:
        return None
    if not ids:
        raise UserError("No book matches the books and set you chose.")
    return sorted(ids)


def cmd_passages(args: argparse.Namespace) -> int:
    from workbench.probes.validity.passages import (
        import_passages,
        passage_usage,
        passages_frame,
        sample_passages,
        sampled_ids,
    )

    with opened(args.project) as project:
        if args.list:
            frame = passages_frame(project, args.book)
            print_frame(frame.drop(columns=["passage"]) if args.format == "table" else frame, args.format)
            return 0
        if args.source:
            frame = import_passages(project, args.source)
            print_frame(frame, args.format)
            print(f"Imported {len(frame)} passage(s): {int(frame['new'].sum())} new, "
                  f"{int((~frame['new']).sum())} updated.")
            return 0
        book_ids = _book_ids(project, args)
        if args.replace and not args.yes:
            chosen = book_ids if book_ids is not None else [r[0] for r in project.db.execute("SELECT id FROM books")]
            answers = passage_usage(project, sampled_ids(project, chosen))
            if answers:
                question = f"Sampling again deletes the old passages and the {answers} answers runs gave for them. Continue?"
                if not confirm(question):
                    raise UserError(f"Nothing was changed: sampling again would delete {answers} answers. "
                                    "Add --yes to confirm.")
        frame = sample_passages(project, book_ids, words=args.words, per_book=args.per_book, seed=args.seed,
                                replace=args.replace, state=progress_state("Sampling"))
    print_frame(frame, args.format)
    print(f"{int(frame['passages'].sum())} passage(s) in {int((frame['passages'] > 0).sum())} book(s).")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from workbench.probes.validity.plan import validity_work

    with opened(args.project) as project:
        work = validity_work(project, args.task, args.model, book_ids=args.book, template=args.template,
                             max_tokens=args.max_tokens, retry_failed=args.retry_failed)
        return run_work(work, args, progress=f"Asking {args.model}")


def cmd_import(args: argparse.Namespace) -> int:
    from workbench.probes.validity.predictions import import_predictions

    with opened(args.project) as project:
        frame = import_predictions(project, args.task, args.file, args.model_label, state=progress_state("Importing"))
    print_frame(frame)
    return 0


UNPARSED_SHOWN = ["group", "book", "passage_id", "raw", "reason"]


def _print_unparsed(frame, fmt: str) -> int:
    print_frame(frame[UNPARSED_SHOWN] if fmt == "table" else frame, fmt)
    if fmt == "table":
        print(f"{len(frame)} answer(s) without a value." + (" --format csv gives the passages and every column."
                                                           if len(frame) else ""))
    return 0


def _print_analysis(table, fmt: str, more: str = "") -> int:
    """The group table, then (on stdout for a table, else on stderr) the parse rate in words, and ``more``."""
    from workbench.probes.validity.parse_rate import parse_summary

    print_frame(table, fmt)
    every = table.set_index("group").loc["all"]
    unread = int(every["answers"] - every["parsed"]) if every["answers"] else 0
    line = parse_summary(table) + (f" List the {unread} answer(s) without a value with --unparsed." if unread else "")
    line += f" {more}" if more else ""
    print(line, file=sys.stdout if fmt == "table" else sys.stderr)
    return 0


def validity_choices(args: argparse.Namespace, task: str):
    """The ``ValidityChoices`` of the page, from the command's options."""
    from workbench.probes.validity.views import YEAR, ValidityChoices

    year = task == YEAR
    return ValidityChoices(task=task, model=args.model, by=args.by, groups=args.groups, ties=args.ties,
                           reference=None if year else args.reference, seed=args.seed, book_id=args.book_id,
                           resamples=args.resamples, draws=args.draws,
                           **({"spans": args.spans, "years": _year_range(args.years),
                               "year_permutations": args.permutations} if year else {}))


def cmd_year(args: argparse.Namespace) -> int:
    from workbench.probes.validity.parse_rate import spread_summary
    from workbench.probes.validity.views import YEAR_BOOK_COLUMNS, validity_report, validity_unparsed
    from workbench.probes.validity.year import year_span_spread

    choices = validity_choices(args, "year")
    with opened(args.project) as project:
        if args.unparsed:
            return _print_unparsed(validity_unparsed(project, choices), args.format)
        if args.compare_spans:
            frame = year_span_spread(project, args.model, args.by, groups=args.groups, year_range=choices.years)
        else:
            report = validity_report(project, choices)
            if args.per_book:  # the page's rows, their main columns
                frame = report["rows"][YEAR_BOOK_COLUMNS]
            else:
                return _print_analysis(report["table"], args.format,
                                       spread_summary(report["spread"], args.spans) + " (--compare-spans)")
    print_frame(frame, args.format)
    return 0


def cmd_narrative_time(args: argparse.Namespace) -> int:
    from workbench.probes.validity.views import validity_report, validity_unparsed

    choices = validity_choices(args, "narrative-time")
    with opened(args.project) as project:
        if args.unparsed:
            return _print_unparsed(validity_unparsed(project, choices), args.format)
        report = validity_report(project, choices)
        if not args.per_book:
            return _print_analysis(report["table"], args.format)
        frame = report["rows"]
    print_frame(frame, args.format)
    return 0


def cmd_annotate(args: argparse.Namespace) -> int:
    from workbench.probes.validity.references import annotation_task_from_passages

    with opened(args.project) as project:
        count = annotation_task_from_passages(project, args.name, book_ids=args.book, blinded=not args.not_blinded)
    print(f"Made the narrative-time task '{args.name}' with {count} passage(s). Annotators can start on the Annotate "
          f"page; then compare with --reference '{args.name}'.")
    return 0
