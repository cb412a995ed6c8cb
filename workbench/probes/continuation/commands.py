"""``palimpsest continuation ...``: the verbatim continuation probe from the command line."""

from __future__ import annotations

import argparse

from workbench.cli.common import (
    BOOK_HELP,
    MODEL_HELP,
    RETRY_HELP,
    SEED_HELP,
    add_format_argument,
    add_project_argument,
    add_yes_argument,
    opened,
    print_frame,
    run_work,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    top = subparsers.add_parser(
        "continuation", help="verbatim continuation probe: does a model go on with a book's own words?",
        description="Give a model the first tokens of passages of a book and see whether it writes the book's next "
                    "tokens word for word (greedy decoding), against books it cannot have seen.")
    commands = top.add_subparsers(dest="continuation_command", metavar="STEP")

    p = commands.add_parser("run", help="ask a model to continue passages of the books")
    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help=MODEL_HELP)
    p.add_argument("--book", type=int, action="append", metavar="ID", help=BOOK_HELP + " (repeatable; default all)")
    p.add_argument("--per-book", type=int, default=50, metavar="N", help="passages per book (default 50)")
    p.add_argument("--prefix-tokens", type=int, default=50, metavar="K",
                   help="tokens of the book the model is given (default 50; words for an API model)")
    p.add_argument("--continue-tokens", type=int, default=50, metavar="N",
                   help="tokens the model writes, compared with the book's next ones (default 50)")
    p.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    p.add_argument("--retry-failed", action="store_true", help=RETRY_HELP)
    add_yes_argument(p)
    p.set_defaults(handler=cmd_run)

    p = commands.add_parser("scores", help="per book: the share of passages the model continues word for word")
    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help=MODEL_HELP)
    p.add_argument("--book", type=int, metavar="ID", help=BOOK_HELP + " (default: every book; the baseline and the "
                   "Holm adjustment stay those over every book)")
    _setting_arguments(p)
    p.add_argument("--passages", action="store_true",
                   help="one row per passage (offsets and lengths of the matches) instead of one per book")
    p.add_argument("--include-text", action="store_true",
                   help="with --passages: add the book's text (prefix, true continuation) and the model's answer; "
                        "left out by default, since the book may be under copyright")
    add_format_argument(p)
    p.set_defaults(handler=cmd_scores)


def _setting_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--match-tokens", type=int, metavar="M",
                   help="extractable when at least the first M tokens agree (default: all of the continuation)")
    p.add_argument("--prefix-tokens", type=int, metavar="K", help="read the runs with this prefix length "
                   "(default: as the model's newest run)")
    p.add_argument("--continue-tokens", type=int, metavar="N", help="read the runs with this continuation length "
                   "(default: as the model's newest run)")
    p.add_argument("--cutoff-year", type=int, metavar="YEAR",
                   help="the last year of the model's training data: books published later form the baseline "
                        "(default: the model's tag cutoff=YEAR, if any; books tagged member=no always do)")


def cmd_run(args: argparse.Namespace) -> int:
    from workbench.probes.continuation.plan import continuation_work

    with opened(args.project) as project:
        work = continuation_work(project, args.model, book_ids=args.book, per_book=args.per_book,
                                 prefix_tokens=args.prefix_tokens, continue_tokens=args.continue_tokens,
                                 seed=args.seed, retry_failed=args.retry_failed)
        return run_work(work, args, progress=f"Asking {args.model}")


def cmd_scores(args: argparse.Namespace) -> int:
    from workbench.errors import UserError
    from workbench.probes.continuation import results
    from workbench.probes.continuation.views import ContinuationChoices, continuation_table

    if args.include_text and not args.passages:
        raise UserError("--include-text goes with --passages (the per-book table holds no text).")
    setting = {"prefix_tokens": args.prefix_tokens, "continue_tokens": args.continue_tokens}
    with opened(args.project) as project:
        if args.passages:
            frame = results.passage_frame(project, args.model, match_tokens=args.match_tokens,
                                          include_text=args.include_text, **setting)
            if args.book is not None:
                frame = frame[frame["book_id"] == args.book].reset_index(drop=True)
        else:
            frame = continuation_table(project, ContinuationChoices(
                model=args.model, book_id=args.book, match_tokens=args.match_tokens, cutoff_year=args.cutoff_year,
                **setting))
    empty = (f"No continuation runs of {args.model} yet: start one with 'palimpsest continuation run'."
             if args.book is None else
             f"No passage of book {args.book} in the continuation runs of {args.model} read here: run it with "
             f"'palimpsest continuation run --book {args.book}', or leave out --book.")
    print_frame(frame, args.format, empty=empty)
    return 0
