"""``palimpsest rep ...``: REP bias probes: sets, runs, classification, validation, statistics, EEPs, fine-tuning data."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.common import (
    add_format_argument,
    add_project_argument,
    add_yes_argument,
    confirm_work,
    opened,
    print_frame,
    progress_state,
    report_run,
    run_work,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    rep = subparsers.add_parser("rep", help="REP bias probes: which demographic a model gives the person in a role")
    commands = rep.add_subparsers(dest="rep_command", metavar="ACTION")
    rep.set_defaults(handler=lambda args: rep.print_help() or 2)

    p = commands.add_parser("sets", help="list the REP sets: demographic, role, stem, categories")
    add_project_argument(p)
    add_format_argument(p)
    p.set_defaults(handler=cmd_sets)

    p = commands.add_parser("import-set", help="add a REP or EEP set file (TOML) as a new set or a new version")
    add_project_argument(p)
    p.add_argument("file", type=Path, metavar="FILE.toml", help="the file to read")
    p.set_defaults(handler=cmd_import_set)

    p = commands.add_parser("export-set", help="write a set's file (to edit it, or to share it)")
    add_project_argument(p)
    p.add_argument("name", help="the set: a demographic such as gender, or eep")
    p.add_argument("--out", type=Path, required=True, metavar="FILE.toml", help="the file to write")
    p.add_argument("--set-version", dest="version", type=int, metavar="N",
                   help="an older version of the set (default: the newest)")
    p.set_defaults(handler=cmd_export_set)

    p = commands.add_parser("run", help="sample every role stem N times from a model (resumable)")
    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help="a model of the project (palimpsest model list PROJECT lists them)")
    p.add_argument("--demographic", action="append", metavar="D", help="a set to run (repeat; default: all)")
    _sampling_arguments(p, samples=50, max_tokens=100)
    p.add_argument("--retry-failed", action="store_true", help="redo only the completions that failed")
    add_yes_argument(p)
    p.set_defaults(handler=cmd_run)

    p = commands.add_parser("classify", help="label the completions with a judge model, or show the lexical labels")
    add_project_argument(p)
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--judge", metavar="LABEL", help="a model of the project that labels each completion")
    how.add_argument("--lexical", action="store_true", help="the word-list baseline (computed when read)")
    p.add_argument("--demographic", action="append", metavar="D", help="only these sets (repeat; default: all)")
    p.add_argument("--max-tokens", type=int, default=16, help="longest judge answer in tokens (default 16)")
    p.add_argument("--retry-failed", action="store_true", help="redo only the judge calls that failed")
    add_yes_argument(p)
    add_format_argument(p)
    p.set_defaults(handler=cmd_classify)

    p = commands.add_parser("validate", help="create blinded label tasks for people to check the judge")
    add_project_argument(p)
    p.add_argument("--task", required=True, metavar="NAME",
                   help="task name (one task per demographic: NAME (gender) ...)")
    p.add_argument("--sample", type=int, default=50, metavar="N", help="completions per demographic (default 50)")
    p.add_argument("--demographic", action="append", metavar="D", help="only these sets (repeat; default: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample and of the annotators' order (default 0)")
    p.add_argument("--per-annotator", type=int, metavar="N", help="items per annotator (default: all)")
    p.add_argument("--overlap", type=float, default=0.2, metavar="F", help="share every annotator gets (default 0.2)")
    p.set_defaults(handler=cmd_validate)

    p = commands.add_parser("agreement", help="judge against people: accuracy (Wilson CI) and Cohen's kappa")
    add_project_argument(p)
    p.add_argument("--task", required=True, metavar="NAME", help="the annotation task made by rep validate")
    p.add_argument("--judge", metavar="LABEL", help="one judge (default: every judge)")
    add_format_argument(p)
    p.set_defaults(handler=cmd_agreement)

    p = commands.add_parser("stats", help="shares with Wilson CIs, tests across decades, trends, spread")
    add_project_argument(p)
    p.add_argument("--judge", metavar="LABEL",
                   help="count the labels this judge model gave (rep classify --judge); without it, the labels of the "
                        "word lists")
    p.add_argument("--table", default="shares", choices=["shares", "tests", "trends", "spread"],
                   help="which table to show")
    p.add_argument("--method", default="binomial", choices=["binomial", "ols"], help="trend fit (default binomial)")
    p.add_argument("--model", action="append", metavar="LABEL", help="only these models (repeat)")
    p.add_argument("--demographic", action="append", metavar="D", help="only these sets (repeat)")
    add_format_argument(p)
    p.set_defaults(handler=cmd_stats)

    p = commands.add_parser("entities", help="entity eliciting prompts: entity overlap with a set of books")
    add_project_argument(p)
    p.add_argument("--model", action="append", metavar="LABEL",
                   help="model to prompt (repeat; needed unless --stored, where the default is every model)")
    books = p.add_mutually_exclusive_group(required=True)
    books.add_argument("--tag", metavar="KEY=VALUE", help="the books with this tag, e.g. decade=1950s")
    books.add_argument("--book-set", metavar="NAME", help="the books of a book set")
    p.add_argument("--prompt-set", dest="eep_set", default="eep", metavar="NAME",
                   help="the EEP set whose stems are sampled (default eep; rep import-set adds others)")
    p.add_argument("--stored", action="store_true",
                   help="compare the completions already stored with the books, without sampling (as 'Compare "
                        "stored completions' on the Entities tab)")
    _sampling_arguments(p, samples=20, max_tokens=200)
    p.add_argument("--per-response", action="store_true", help="one row per completion instead of the summary")
    add_yes_argument(p)
    add_format_argument(p)
    p.set_defaults(handler=cmd_entities)

    p = commands.add_parser("export-finetune", help="write decade fine-tuning data (chat JSONL) from tagged books")
    add_project_argument(p)
    books = p.add_mutually_exclusive_group(required=True)
    books.add_argument("--tag", metavar="KEY=VALUE", help="the books with this tag, e.g. decade=1950s")
    books.add_argument("--book-set", metavar="NAME", help="only the books of this book set")
    p.add_argument("--out", type=Path, required=True, metavar="FILE.jsonl", help="the file to write")
    p.add_argument("--chunk-words", type=int, default=200, help="passage size in words (whole sentences; default 200)")
    p.add_argument("--prompt-share", type=float, default=0.5,
                   help="share of a passage given as its start (default 0.5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the example order (default 0)")
    p.add_argument("--max-examples", type=int, metavar="N", help="keep at most N examples (drawn with the seed)")
    p.add_argument("--system", default="", help="a system message for every example (default: none)")
    p.add_argument("--instruction", help="the text before each passage start")
    p.set_defaults(handler=cmd_export_finetune)


def _sampling_arguments(p: argparse.ArgumentParser, *, samples: int, max_tokens: int) -> None:
    p.add_argument("--samples", type=int, default=samples, metavar="N", help=f"completions per stem (default {samples})")
    p.add_argument("--temperature", type=float, default=1.0, metavar="T", help="sampling temperature (default 1.0)")
    p.add_argument("--max-tokens", type=int, default=max_tokens, metavar="M",
                   help=f"longest completion in tokens (default {max_tokens})")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="run seed; sample i uses S + i (default 0)")


def _settings(args: argparse.Namespace):
    from workbench.probes.rep.run import SamplingSettings

    return SamplingSettings(samples=args.samples, temperature=args.temperature, max_tokens=args.max_tokens,
                            seed=args.seed)


def cmd_sets(args: argparse.Namespace) -> int:
    from workbench.probes.rep.sets import sets_frame

    with opened(args.project) as project:
        print_frame(sets_frame(project), args.format)
    return 0


def cmd_import_set(args: argparse.Namespace) -> int:
    from workbench.probes.rep.sets import import_set_file

    with opened(args.project) as project:
        stored = import_set_file(project, args.file)
    print(f"The set '{stored.name}' is now at version {stored.version} ({len(stored.parsed.prompts)} prompts).")
    return 0


def cmd_export_set(args: argparse.Namespace) -> int:
    from workbench.probes.rep.sets import export_set_file

    with opened(args.project) as project:
        path = export_set_file(project, args.name, args.out, version=args.version)
    print(f"Wrote {path}.")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from workbench.probes.rep.plans import rep_work

    with opened(args.project) as project:
        work = rep_work(project, [args.model], args.demographic, _settings(args), retry_failed=args.retry_failed)
        return run_work(work, args, progress="REP")


def cmd_classify(args: argparse.Namespace) -> int:
    from workbench.probes.rep.classify import LEXICAL, classified_responses, judge_classifier
    from workbench.probes.rep.plans import judge_work

    status = 0
    with opened(args.project) as project:
        if args.judge:
            work = judge_work(project, args.judge, args.demographic, max_tokens=args.max_tokens,
                              retry_failed=args.retry_failed)
            status = run_work(work, args, progress="Judge")
        classifier = judge_classifier(args.judge) if args.judge else LEXICAL
        frame = classified_responses(project, classifier, demographics=args.demographic)
        summary = (frame.groupby(["model", "demographic", "outcome"]).size().unstack(fill_value=0).reset_index()
                   if not frame.empty else frame)
        print_frame(summary, args.format)
    return status


def cmd_validate(args: argparse.Namespace) -> int:
    from workbench.annotation.items import item_count
    from workbench.probes.rep.validation import create_validation_tasks

    with opened(args.project) as project:
        tasks = create_validation_tasks(project, args.task, sample=args.sample, demographics=args.demographic,
                                        seed=args.seed, per_annotator=args.per_annotator, overlap=args.overlap)
        for task in tasks:
            count = item_count(project, task.id)
            print(f"Created the blinded label task '{task.name}' with {count} completions "
                  f"(labels: {', '.join(task.labels)}).")
    print("Annotators can now label them on the Annotate page, or with 'palimpsest annotate'.")
    return 0


def cmd_agreement(args: argparse.Namespace) -> int:
    from workbench.probes.rep.views import AgreementChoices, agreement_frame

    with opened(args.project) as project:
        print_frame(agreement_frame(project, AgreementChoices(task=args.task, judge=args.judge)), args.format)
    return 0


def stats_choices(args: argparse.Namespace):
    """The Results tab's state for these options (the same table, computed by the same query)."""
    from workbench.probes.rep.classify import LEXICAL, judge_classifier
    from workbench.probes.rep.views import ResultsChoices

    return ResultsChoices(classifier=judge_classifier(args.judge) if args.judge else LEXICAL, table=args.table,
                          method=args.method, models=args.model or (), demographics=args.demographic or ())


def cmd_stats(args: argparse.Namespace) -> int:
    from workbench.probes.rep import views

    choices = stats_choices(args)
    with opened(args.project) as project:
        counted = views.count_results(project, choices)
        print_frame(views.results_frame_from(counted, choices), args.format, empty=views.why_no_rows(counted, choices))
    return 0


def entities_choices(args: argparse.Namespace):
    """The Entities tab's state for these options (the same comparison, made by the same query)."""
    from workbench.probes.rep.views import EntitiesChoices

    return EntitiesChoices(models=args.model or (), tag=args.tag, book_set=args.book_set, eep_set=args.eep_set)


def cmd_entities(args: argparse.Namespace) -> int:
    from workbench.errors import UserError
    from workbench.probes.rep.plans import eep_work
    from workbench.probes.rep.views import entities_result

    choices = entities_choices(args)
    if not args.stored and not choices.models:
        raise UserError("Name the models to prompt with --model LABEL (repeat it), or add --stored to compare the "
                        "completions already stored without sampling.")
    status = 0
    with opened(args.project) as project:
        if not args.stored:
            work = eep_work(project, list(choices.models), _settings(args), set_name=choices.eep_set)
            confirm_work(work, yes=args.yes)
            outcome = work.run(progress_state("EEP"))
            for model, report in zip(outcome.labels, outcome.reports):  # said only where a run did not end well
                if report.status != "done" or report.failed_total:  # (the table follows, maybe as CSV)
                    status = report_run(report, args.project, f"Entity eliciting prompts on {model}")
                if report.status != "done":
                    return status
        result = entities_result(project, choices, progress_state("Book entities"))
        if args.per_response:
            print_frame(result.per_response, args.format)
            return status
        print_frame(result.summary, args.format)
        stages = set(result.per_response["stage"])
        if args.format == "table" and {"base", "fine-tuned"} <= stages:
            print()
            print_frame(result.comparison, args.format)
    return status


def cmd_export_finetune(args: argparse.Namespace) -> int:
    from workbench.probes.rep.finetune import DEFAULT_INSTRUCTION, FinetuneSettings, export_finetune

    settings = FinetuneSettings(chunk_words=args.chunk_words, prompt_share=args.prompt_share, seed=args.seed,
                                max_examples=args.max_examples, system=args.system,
                                instruction=DEFAULT_INSTRUCTION if args.instruction is None else args.instruction)
    with opened(args.project) as project:
        report = export_finetune(project, args.out, tag=args.tag, book_set=args.book_set, settings=settings,
                                 state=progress_state("Passages"))
    print(f"Wrote {report.examples} examples ({report.words} words of {report.books} books) to {report.path}.")
    return 0
