"""``palimpsest reading ...``: NarrativeXL reading questions from the command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.common import (
    BOOK_HELP,
    MODEL_HELP,
    SEED_HELP,
    VARIANT_HELP,
    add_format_argument,
    add_project_argument,
    add_yes_argument,
    confirm_work,
    opened,
    print_frame,
    progress_state,
    report_outcome,
    report_run,
)

POOLED_HELP = "only this book's questions (default: every book the model answered, pooled, as the Reading page shows)"
#: ``palimpsest reading NAME``: (help, the function of ``results`` that makes the table)
RESULT_TABLES = {
    "slope": ("logistic regression of right answers on log retention demand", "forgetting_slope"),
    "accuracy": ("accuracy per kind of question, 'None of the above' apart", "accuracy_by_kind"),
    "reconstruction": ("ROUGE of corrected summaries against the false-summary baseline", "reconstruction_scores"),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    reading = subparsers.add_parser(
        "reading", help="reading questions: scenes, summaries, name substitution, questions, forgetting curves",
        description="How much of a long book does a model keep while reading it, and does it answer from the "
                    "text or from what it already knew? (after NarrativeXL)",
    )
    commands = reading.add_subparsers(dest="reading_command", metavar="STEP")

    p = commands.add_parser("scenes", help="cut a book into scenes of about N words (whole book, in order)")
    add_project_argument(p)
    p.add_argument("--book", type=int, required=True, metavar="ID", help=BOOK_HELP)
    p.add_argument("--words", type=int, default=800, metavar="N", help="about how many words a scene has (800)")
    add_format_argument(p)
    p.set_defaults(handler=cmd_scenes)

    p = commands.add_parser("summarize", help="a summary and a false summary of every scene, by a model")
    add_project_argument(p)
    p.add_argument("--book", type=int, required=True, metavar="ID", help=BOOK_HELP)
    p.add_argument("--model", required=True, metavar="LABEL", help="a model of the project (palimpsest model list PROJECT lists them)")
    p.add_argument("--hierarchical", action="store_true", help="also summaries of summaries, level by level")
    p.add_argument("--group", type=int, default=5, metavar="N", help="summaries joined per higher summary (5)")
    p.add_argument("--max-tokens", type=int, default=256, metavar="N", help="longest summary in tokens (256)")
    p.add_argument("--attempts", type=int, default=3, metavar="N",
                   help="tries per scene when an answer is unusable (3)")
    add_yes_argument(p)
    p.set_defaults(handler=cmd_summarize)

    p = commands.add_parser("import-summaries", help="summaries made elsewhere (CSV: scene, summary, false_summary)")
    add_project_argument(p)
    p.add_argument("--book", type=int, required=True, metavar="ID", help=BOOK_HELP)
    p.add_argument("file", type=Path, metavar="FILE.csv", help="the file to read")
    p.add_argument("--model-label", metavar="LABEL", help="the label the summaries go under (default: the file's name)")
    p.set_defaults(handler=cmd_import_summaries)

    p = commands.add_parser("substitute", help="replace the book's character names, consistently, with a seed")
    add_project_argument(p)
    p.add_argument("--book", type=int, required=True, metavar="ID", help=BOOK_HELP)
    p.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    add_format_argument(p)
    p.set_defaults(handler=cmd_substitute)

    p = commands.add_parser("questions", help="build read-along and reconstruction questions for a book")
    add_project_argument(p)
    p.add_argument("--book", type=int, required=True, metavar="ID", help=BOOK_HELP)
    p.add_argument("--every", type=int, default=5, metavar="K", help="a checkpoint after every K scenes (5)")
    p.add_argument("--options", type=int, default=6, metavar="N",
                   help="choices per question, 'None of the above' included (6)")
    p.add_argument("--variant", choices=["original", "substituted"], default="original", help=VARIANT_HELP)
    p.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    p.add_argument("--kinds", default="lookahead,false-summary,other-book", metavar="K1,K2",
                   help="kinds of wrong options: lookahead, false-summary, other-book (all three)")
    p.add_argument("--reconstruction", type=int, default=20, metavar="N",
                   help="scenes with reconstruction questions, each with and without its text, and as many parts "
                        "of each level of hierarchical summaries (20)")
    p.add_argument("--max-level", type=int, metavar="L",
                   help="with hierarchical summaries, the highest level with reconstruction questions "
                        "(default: every level; 0: the scenes only)")
    p.add_argument("--summaries", metavar="LABEL", help="whose summaries to use (default: the newest)")
    add_format_argument(p)
    p.set_defaults(handler=cmd_questions)

    p = commands.add_parser("run", help="ask a model the questions")
    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help=MODEL_HELP)
    p.add_argument("--variant", choices=["original", "substituted"], default="original", help=VARIANT_HELP)
    p.add_argument("--context-words", type=int, metavar="N",
                   help="show at most the last N words of the book before each question (a run whose prompts "
                        "cannot fit the model is refused before anything is sent, saying how many words fit)")
    p.add_argument("--book", type=int, action="append", metavar="ID", help="only this book (repeatable)")
    p.add_argument("--retry-failed", action="store_true", help="only ask again where the request failed")
    p.add_argument("--temperature", type=float, metavar="T",
                   help="sampling temperature of the multiple-choice answers (default 0: always the likeliest)")
    p.add_argument("--seed", type=int, metavar="N",
                   help="the answers' sampling seed (default 0); give -1 for none, so each request draws anew")
    p.add_argument("--max-tokens", type=int, metavar="N", help="longest multiple-choice answer in tokens (default 8)")
    add_yes_argument(p)
    p.set_defaults(handler=cmd_run)

    p = commands.add_parser("curve", help="the forgetting curve: accuracy by retention demand, with 95%% CIs")
    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help=MODEL_HELP)
    p.add_argument("--by-kind", action="store_true", help="one curve per kind of wrong options")
    p.add_argument("--bins", metavar="W1,W2,...", help="lower edges of the bins in words (default 0,1000,2500,...)")
    p.add_argument("--book", type=int, metavar="ID", help=POOLED_HELP)
    add_format_argument(p)
    p.set_defaults(handler=cmd_curve)

    for name, (helptext, _) in RESULT_TABLES.items():
        p = commands.add_parser(name, help=helptext)
        add_project_argument(p)
        p.add_argument("--model", required=True, metavar="LABEL", help=MODEL_HELP)
        if name == "slope":
            p.add_argument("--book", type=int, metavar="ID", help=POOLED_HELP)
        add_format_argument(p)
        p.set_defaults(handler=cmd_result_table)

    p = commands.add_parser("export", help="write a book's questions as JSON Lines")
    add_project_argument(p)
    p.add_argument("--book", type=int, required=True, metavar="ID", help=BOOK_HELP)
    p.add_argument("--out", type=Path, required=True, metavar="FILE.jsonl", help="the file to write")
    p.add_argument("--variant", choices=["original", "substituted"], help=VARIANT_HELP)
    p.add_argument("--text", type=Path, metavar="FILE.txt", help="also write the text the offsets refer to")
    p.set_defaults(handler=cmd_export)

    p = commands.add_parser("import", help="read questions from a JSON Lines file for books of the library")
    add_project_argument(p)
    p.add_argument("--book", type=int, metavar="ID",
                   help="every question is for this book (default: the book each line names, by title or Gutenberg "
                        "number)")
    p.add_argument("file", type=Path, metavar="FILE.jsonl", help="the file to read")
    p.add_argument("--variant", choices=["original", "substituted"], help="the text the questions are about")
    p.set_defaults(handler=cmd_import)

    reading.set_defaults(handler=lambda args: reading.print_help() or 2)


def cmd_scenes(args: argparse.Namespace) -> int:
    from workbench.probes.reading.scenes import make_scenes, scenes_frame

    with opened(args.project) as project:
        scene_set = make_scenes(project, args.book, args.words)
        frame = scenes_frame(project, scene_set)
    print_frame(frame, args.format)
    return 0


def cmd_summarize(args: argparse.Namespace) -> int:
    from workbench.probes.reading.plans import summaries_work

    with opened(args.project) as project:
        work = summaries_work(project, args.book, args.model, hierarchical=args.hierarchical, group=args.group,
                              max_tokens=args.max_tokens, max_attempts=args.attempts)
        confirm_work(work, yes=args.yes)
        outcome = work.run(progress_state(f"Summarizing with {args.model}"))
    if outcome.value is None:  # stopped before anything was made
        return report_outcome(work, outcome, args.project)
    print(outcome.value.describe())
    return max((report_run(report, args.project, what) for what, report in outcome.value.unfinished()), default=0)


def cmd_import_summaries(args: argparse.Namespace) -> int:
    from workbench.probes.reading.summaries import import_summaries

    with opened(args.project) as project:
        report = import_summaries(project, args.book, args.file, args.model_label or args.file.stem)
    print(report.describe())
    unusable = sum(lv.summaries_failed + lv.false_failed for lv in report.levels)
    if unusable:
        print(f"{unusable} summar{'y' if unusable == 1 else 'ies'} in {args.file.name} could not be used (blank, or a "
              "false summary that repeats its summary). Fill them in and import the file again.", file=sys.stderr)
        return 1
    return 0


def cmd_substitute(args: argparse.Namespace) -> int:
    from workbench.probes.reading.substitution import names_frame, substitute_book

    with opened(args.project) as project:
        substitution = substitute_book(project, args.book, args.seed, state=progress_state("Reading the book"))
        frame = names_frame(project, args.book)
    print_frame(frame, args.format)
    if args.format == "table":
        print(f"{len(frame)} name words replaced at {len(substitution.edits)} places in the book.")
    return 0


def cmd_questions(args: argparse.Namespace) -> int:
    from workbench.probes.reading.questions import QuestionSettings, build_questions, missing_kinds, question_counts

    settings = QuestionSettings(every=args.every, options=args.options, seed=args.seed,
                                kinds=tuple(k.strip() for k in args.kinds.split(",") if k.strip()),
                                reconstruction=args.reconstruction, max_level=args.max_level)
    with opened(args.project) as project:
        question_set = build_questions(project, args.book, settings, variant=args.variant,
                                       summaries_model=args.summaries)
        counts = question_counts(project, question_set.id)
    print_frame(counts, args.format)
    if args.format == "table":
        print(f"Question set {question_set.id} ({question_set.variant} text, summaries by {question_set.summaries}): "
              f"{int(counts['questions'].sum())} questions.")
        for note in missing_kinds(settings.kinds, counts["kind"], settings.options):
            print(note)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from workbench.probes.reading.plans import questions_work
    from workbench.probes.reading.run import context_note

    choice = {key: value for key, value in (("temperature", args.temperature), ("max_tokens", args.max_tokens),
                                            ("seed", args.seed)) if value is not None}
    if choice.get("seed") == -1:
        choice["seed"] = None
    with opened(args.project) as project:
        work = questions_work(project, args.model, variant=args.variant, book_ids=args.book,
                              context_words=args.context_words, choice_params=choice, retry_failed=args.retry_failed)
        spec = work.models[0]
        confirm_work(work, yes=args.yes)
        if args.context_words is None:
            note = context_note(spec, "--context-words")
            if note:
                print(note, file=sys.stderr)
        outcome = work.run(progress_state(f"Asking {args.model}"))
        status = report_outcome(work, outcome, args.project)
    failed = any(report.failed for report in outcome.reports)
    if args.context_words is None and failed:
        print("If the book did not fit the model, give --context-words N: the model then sees at most the "
              "last N words before each question.")
    if failed and spec.backend == "openai" and not spec.params.get("n_ctx"):
        print(f"If the prompts were too long for the model, give it its context in tokens (palimpsest model edit "
              f"{args.project} {spec.label} --param n_ctx=N): then every prompt is counted before anything is sent, "
              "and a run that cannot fit is refused, saying how many words of the book do.")
    return status


def cmd_curve(args: argparse.Namespace) -> int:
    from workbench.probes.reading.results import parse_bins
    from workbench.probes.reading.views import ReadingChoices, curve_table

    choices = ReadingChoices(model=args.model, book_id=args.book, bins=parse_bins(args.bins), by_kind=args.by_kind)
    with opened(args.project) as project:
        frame = curve_table(project, choices)  # the Reading page's table for the same choices
    print_frame(frame, args.format)
    return 0


def cmd_result_table(args: argparse.Namespace) -> int:
    from workbench.probes.reading import results
    from workbench.probes.reading.views import ReadingChoices, slope_table

    with opened(args.project) as project:
        if args.reading_command == "slope":  # as the Reading page says it, for the same choices
            frame = slope_table(project, ReadingChoices(model=args.model, book_id=args.book))
        else:
            frame = getattr(results, RESULT_TABLES[args.reading_command][1])(project, args.model)
    print_frame(frame, args.format)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from workbench.probes.reading.exchange import export_questions

    with opened(args.project) as project:
        count = export_questions(project, args.book, args.out, variant=args.variant, text_out=args.text)
    print(f"Wrote {count} questions to {args.out}" + (f" and the text to {args.text}." if args.text else "."))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from workbench.probes.reading.exchange import import_questions
    from workbench.probes.reading.questions import question_count

    with opened(args.project) as project:
        sets = import_questions(project, args.file, args.book, variant=args.variant)
        counts = [question_count(project, s.id) for s in sets]
    for question_set, count in zip(sets, counts):
        print(f"Question set {question_set.id}: {count} {question_set.variant} questions for book "
              f"{question_set.book_id}.")
    return 0
