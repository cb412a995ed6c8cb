"""``palimpsest cloze ...``: the name-cloze memorization probe from the command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.common import (
    FLAGGED_HELP,
    MODEL_HELP,
    RETRY_HELP,
    add_format_argument,
    add_project_argument,
    add_yes_argument,
    confirm,
    opened,
    print_frame,
    progress_state,
    report_run,
    run_work,
)
from workbench.errors import UserError
from workbench.probes.cloze.views import ANSWER_FILTERS

ONE_BOOK_HELP = "only this book (its id; palimpsest books lists them)"


def register(subparsers: argparse._SubParsersAction) -> None:
    cloze = subparsers.add_parser(
        "cloze", help="name-cloze memorization probe: passages, runs, results",
        description="Which books does a model remember? Hide one character name per passage and ask for it.",
    )
    commands = cloze.add_subparsers(dest="cloze_command", metavar="STEP")

    p = commands.add_parser("extract", help="find passages with one hidden name in books")
    add_project_argument(p)
    _add_book_choice(p)
    p.add_argument("--per-book", type=int, default=100, metavar="N", help="passages per book (default 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    p.add_argument("--fast", action="store_true", help="stop reading a book once it has enough passages")
    p.add_argument("--workers", type=int, default=1, metavar="N", help="books read at the same time (processes)")
    p.add_argument("--replace", action="store_true",
                   help="extract again even where runs used the old passages (deletes those responses)")
    p.add_argument("--yes", action="store_true", help="do not ask before deleting with --replace")
    p.set_defaults(handler=cmd_extract)

    p = commands.add_parser("passages", help="list the stored passages")
    add_project_argument(p)
    p.add_argument("--book", type=int, action="append", metavar="ID", help="only this book (repeatable)")
    add_format_argument(p)
    p.set_defaults(handler=cmd_passages)

    p = commands.add_parser("run", help="ask a model to fill in the hidden names")
    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help="a model of the project (palimpsest model list PROJECT lists them)")
    p.add_argument("--template", default="name-cloze", metavar="NAME", help="prompt template (default name-cloze)")
    _add_book_choice(p)
    p.add_argument("--max-tokens", type=int, metavar="N", help="longest answer in tokens (default 16)")
    p.add_argument("--retry-failed", action="store_true", help="only ask again where the model failed")
    add_yes_argument(p)
    p.set_defaults(handler=cmd_run)

    p = commands.add_parser("logprob", help="score how likely a local model finds each true name")
    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help=MODEL_HELP)
    p.add_argument("--template", default="name-cloze", metavar="NAME",
                   help="the prompt template to use (palimpsest cloze templates PROJECT lists them)")
    _add_book_choice(p)
    p.add_argument("--retry-failed", action="store_true", help=RETRY_HELP)
    p.set_defaults(handler=cmd_logprob)

    p = commands.add_parser("baseline", help="the masked-language-model baseline (e.g. BERT)")
    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help=MODEL_HELP)
    _add_book_choice(p)
    p.add_argument("--top-k", type=int, default=5, help="fills kept per passage (default 5)")
    p.add_argument("--retry-failed", action="store_true", help=RETRY_HELP)
    p.set_defaults(handler=cmd_baseline)

    p = commands.add_parser(
        "import", help="import published results (gpt4-books TSV files, or folders of them)",
        description="Import published name-cloze results (one gpt4-books TSV file per book; a folder stands for its "
                    ".tsv and .txt files) as one run of the model LABEL. Files imported before add nothing; books not "
                    "in the library are added without text; each file keeps a book of its own, even where two files "
                    "hold results for the same work.")
    add_project_argument(p)
    p.add_argument("--input-format", choices=["gpt4books"], default="gpt4books",
                   help="the files' format (gpt4books, the only one so far)")
    p.add_argument("--model-label", required=True, metavar="LABEL", help="the label the results go under")
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="results files or folders of them")
    add_format_argument(p)
    p.set_defaults(handler=cmd_import)

    p = commands.add_parser("accuracy", help="per-book accuracy with 95%% confidence intervals")
    add_project_argument(p)
    p.add_argument("--model", action="append", metavar="LABEL", help="only this model (repeatable)")
    p.add_argument("--ci", choices=["wilson", "bootstrap"], default="wilson",
                   help="the kind of 95%% interval: wilson (default) or bootstrap over passages")
    p.add_argument("--exclude-flagged", action="store_true", help="leave out books with too few passages")
    p.add_argument("--all-columns", action="store_true", help="also failures, candidates, flags, log-probability")
    p.add_argument("--book", type=int, metavar="ID", help=ONE_BOOK_HELP)
    add_format_argument(p)
    p.set_defaults(handler=cmd_accuracy)

    p = commands.add_parser("categories", help="mean accuracy by a book tag (or decade, source)")
    add_project_argument(p)
    p.add_argument("tag", help="a tag name such as genre, or decade, or source")
    p.add_argument("--model", action="append", metavar="LABEL", help=MODEL_HELP)
    p.add_argument("--exclude-flagged", action="store_true", help=FLAGGED_HELP)
    add_format_argument(p)
    p.set_defaults(handler=cmd_categories)

    p = commands.add_parser("table", help="several models side by side, one row per book (the paper's tables)")
    add_project_argument(p)
    p.add_argument("--model", action="append", required=True, metavar="LABEL",
                   help="a model whose accuracy to show (repeat for each column; rows are sorted by the first)")
    p.add_argument("--top", type=int, metavar="N", help="only the N books the first model knows best")
    p.add_argument("--year-from", type=int, metavar="YEAR", help="only books first published in YEAR or later")
    p.add_argument("--year-to", type=int, metavar="YEAR", help="only books first published in YEAR or before")
    p.add_argument("--sort-by", dest="sort_by", metavar="NAME",
                   help="order of the rows: book, year, one of the models or humans, best first (default: the first "
                        "model, whose column then comes first); --top keeps the first rows of this order")
    p.add_argument("--book", type=int, metavar="ID", help=ONE_BOOK_HELP + " (its row of the table)")
    _human_arguments(p, "add a column for the people who did the name cloze (Annotate page), with its interval")
    add_format_argument(p)
    p.set_defaults(handler=cmd_table)

    p = commands.add_parser("answers", help="one book's passages with each model's raw and parsed answer")
    add_project_argument(p)
    p.add_argument("--book", type=int, required=True, metavar="ID", help="the book whose passages to list")
    p.add_argument("--model", action="append", metavar="LABEL", help="only this model's answers (repeatable)")
    p.add_argument("--show", choices=list(ANSWER_FILTERS), default="all",
                   help="which answers: all (default), right, wrong (answered, but not the true name) or failed calls")
    add_format_argument(p)
    p.set_defaults(handler=cmd_answers)

    p = commands.add_parser("frequent-name", help="the most-frequent-name baseline, overall and per book")
    add_project_argument(p)
    p.add_argument("--pooled", action="store_true",
                   help="choose one name from every book's passages, as the paper does (by default each book's "
                        "name comes from the other books' passages, so that no book's own answer is known)")
    _human_arguments(p, "add the people's accuracy beside the baseline, per book and overall")
    add_format_argument(p)
    p.set_defaults(handler=cmd_frequent_name)

    p = commands.add_parser("human-task", help="a blinded annotation task in which people fill in the hidden names")
    add_project_argument(p)
    p.add_argument("--task", required=True, metavar="NAME", help="a name for the new annotation task")
    p.add_argument("--book", type=int, action="append", metavar="ID",
                   help="a book whose passages to use (repeatable; default: every book with passages)")
    p.add_argument("--per-book", type=int, metavar="N",
                   help="passages per book, drawn at random with the seed (default: all of a book's passages)")
    p.add_argument("--per-annotator", type=int, metavar="N", help="items per annotator (default: all items)")
    p.add_argument("--overlap", type=float, default=0.2, metavar="F",
                   help="share of each annotator's items that every annotator gets (default 0.2)")
    p.add_argument("--seed", type=int, default=0, help="seed for sampling, assignment and order (default 0)")
    p.set_defaults(handler=cmd_human_task)

    p = commands.add_parser("humans", help="people, models and the most-frequent-name baseline on the passages "
                                           "people answered (or --answers: every human answer, scored)")
    add_project_argument(p)
    p.add_argument("--model", action="append", metavar="LABEL", help="a model to score on the same passages "
                                                                     "(repeatable; default: every model)")
    p.add_argument("--task", metavar="NAME", help="only this name-cloze annotation task (default: all of them)")
    p.add_argument("--annotator", metavar="NAME", help="only this annotator's answers (default: everyone's)")
    p.add_argument("--answers", action="store_true", help="list every human answer with its gold name and score")
    p.add_argument("--each-annotator", action="store_true",
                   help="add a row for each annotator (on the passages they answered) below the pooled row")
    p.add_argument("--per-answer", action="store_true",
                   help="count every answer as a unit (by default several people's answers to one passage are "
                        "pooled into one mark by majority, so that the interval is over passages)")
    add_format_argument(p)
    p.set_defaults(handler=cmd_humans)

    p = commands.add_parser("compare", help="two models book by book, with Wilcoxon and McNemar tests")
    add_project_argument(p)
    p.add_argument("model_a", metavar="MODEL_A", help="the first model (a)")
    p.add_argument("model_b", metavar="MODEL_B", help="the second model (b); the difference is a minus b")
    p.add_argument("--exclude-flagged", action="store_true", help=FLAGGED_HELP)
    p.add_argument("--books", action="store_true", help="print the per-book table instead of the tests")
    add_format_argument(p)
    p.set_defaults(handler=cmd_compare)

    p = commands.add_parser("year", help="Spearman correlation of accuracy with year of publication")
    add_project_argument(p)
    p.add_argument("--model", action="append", metavar="LABEL", help=MODEL_HELP)
    p.add_argument("--exclude-flagged", action="store_true", help=FLAGGED_HELP)
    add_format_argument(p)
    p.set_defaults(handler=cmd_year)

    p = commands.add_parser("deciles", help="save the top and bottom tenth of books as book sets")
    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help=MODEL_HELP)
    p.add_argument("--include-flagged", action="store_true",
                   help="rank books with fewer passages than were asked for too (left out by default, as in the paper)")
    _add_tie_arguments(p, draws=False)
    add_format_argument(p)
    p.set_defaults(handler=cmd_deciles)

    p = commands.add_parser("errors", help="error analysis: do wrong answers name characters of memorized books?")
    add_project_argument(p)
    p.add_argument("--model", required=True, action="append", metavar="LABEL",
                   help="a model whose errors are analysed (repeat to compare several)")
    p.add_argument("--grouped-by", dest="grouped_by", metavar="LABEL",
                   help="the one model whose accuracy groups the books for every model analysed (default: the "
                        "first --model)")
    p.add_argument("--groups", choices=["decile", "quintile"], default="decile", help="top/bottom decile or quintile")
    p.add_argument("--set-size", action="append", metavar="K",
                   help="names per set; repeat for several ('all': as many as both sides allow; default: all, "
                        "500 and 100)")
    _add_tie_arguments(p, draws=True)
    p.add_argument("--permutations", type=int, default=10_000, metavar="N", help="deals of the test (default 10000)")
    p.add_argument("--names", action="store_true", help="list the names of both sets (first model and set size)")
    add_format_argument(p)
    p.set_defaults(handler=cmd_errors)

    p = commands.add_parser("templates", help="list prompt templates, or add a version from a file")
    add_project_argument(p)
    p.add_argument("--add", nargs=2, metavar=("NAME", "FILE"), help="save FILE's text as template NAME (new version)")
    p.add_argument("--all-versions", action="store_true",
                   help="list every version of each template, not only the newest")
    p.add_argument("--show", metavar="NAME", help="print a template's text")
    add_format_argument(p)
    p.set_defaults(handler=cmd_templates)

    cloze.set_defaults(handler=lambda args: cloze.print_help() or 2)


def _add_book_choice(p: argparse.ArgumentParser) -> None:
    p.add_argument("--book", type=int, action="append", metavar="ID", help="only this book (repeatable)")
    p.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE", help="only books with this tag")
    p.add_argument("--book-set", dest="book_set", metavar="NAME", help="only books of this book set")


def _tags(pairs: list[str]) -> dict[str, str]:
    from workbench.corpus.library import parse_tags

    tags: dict[str, str] = {}
    for pair in pairs:
        tags.update(parse_tags(pair))
    return tags


def _selection(args: argparse.Namespace):
    from workbench.probes.cloze.run import Selection

    return Selection(book_ids=args.book, tags=_tags(args.tag) or None, book_set=args.book_set)


def _books_for_extraction(project, args: argparse.Namespace) -> list[int] | None:
    from workbench.probes.cloze.passages import select_books

    ids = select_books(project, book_ids=args.book, tags=_tags(args.tag) or None, book_set=args.book_set)
    if ids == []:
        raise UserError("No book matches the books, tags or set you chose.")
    return ids


def cmd_extract(args: argparse.Namespace) -> int:
    from workbench.probes.cloze.extract import extract_books
    from workbench.probes.cloze.passages import extracted_usage
    from workbench.probes.cloze.rules import project_settings

    with opened(args.project) as project:
        book_ids = _books_for_extraction(project, args)
        settings = project_settings(project, per_book=args.per_book, seed=args.seed, fast=args.fast)
        if args.replace:
            ids = book_ids if book_ids is not None else [r[0] for r in project.db.execute("SELECT id FROM books")]
            usage = extracted_usage(project, ids)
            passages = sum(p for p, n in usage.values() if n)
            responses = sum(n for _, n in usage.values())
            if responses and not args.yes:
                question = (f"This deletes {passages} passages and the {responses} responses that runs gave for them. "
                            "Continue?")
                if not confirm(question):
                    raise UserError(f"Nothing was changed. {question.split('. ')[0]}; add --yes to confirm.")
        summary = extract_books(project, book_ids, settings, workers=args.workers, replace=args.replace,
                                state=progress_state("Extracting"))
    print_frame(summary.drop(columns=["seconds"]))
    flagged = int(summary["flagged"].sum())
    if flagged:
        print(f"{flagged} book(s) had fewer than {args.per_book} passages; they are flagged, and analyses can "
              "leave them out (--exclude-flagged).")
    return 0


def cmd_passages(args: argparse.Namespace) -> int:
    from workbench.probes.cloze.passages import passages_frame

    with opened(args.project) as project:
        frame = passages_frame(project, args.book)
    print_frame(frame[["book_id", "passage_id", "passage", "gold", "start_char", "end_char"]], args.format)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """Planned as on the Name cloze page (``plan_work``): its cost is every chosen passage, answers as long as allowed."""
    from workbench.probes.cloze.plan import ProbePlan, plan_work
    from workbench.probes.cloze.run import DEFAULT_MAX_TOKENS

    plan = ProbePlan(models=[args.model], template=args.template, max_tokens=args.max_tokens or DEFAULT_MAX_TOKENS,
                     retry_failed=args.retry_failed, chosen=_selection(args))
    with opened(args.project) as project:
        work = plan_work(project, plan, next_step=RETRY_HERE)
        work.heading = f"Name cloze on {args.model}"
        return run_work(work, args, progress=f"Asking {args.model}")


#: failed items, on the command line (the exact command follows the run's report)
RETRY_HERE = "ask again for just those with --retry-failed"


def cmd_logprob(args: argparse.Namespace) -> int:
    from workbench.probes.cloze.run import run_logprob

    with opened(args.project) as project:  # local models only: nothing to pay for
        report = run_logprob(project, args.model, template=args.template, selection=_selection(args),
                             state=progress_state(f"Scoring with {args.model}"), retry_failed=args.retry_failed)
    return report_run(report, args.project, f"Log-probabilities from {args.model}")


def cmd_baseline(args: argparse.Namespace) -> int:
    from workbench.probes.cloze.mlm import run_mlm

    with opened(args.project) as project:  # masked models are local: nothing to pay for
        report = run_mlm(project, args.model, selection=_selection(args), top_k=args.top_k,
                         state=progress_state(f"Filling with {args.model}"), retry_failed=args.retry_failed)
    return report_run(report, args.project, f"Masked-LM baseline {args.model}")


def cmd_import(args: argparse.Namespace) -> int:
    from workbench.probes.cloze.gpt4books import import_gpt4books, import_summary_text

    with opened(args.project) as project:
        summary = import_gpt4books(project, args.paths, args.model_label, state=progress_state("Importing"))
    print_frame(summary, args.format)
    print(import_summary_text(summary, args.model_label), file=sys.stdout if args.format == "table" else sys.stderr)
    return 0


def _keyed(project, frame, fmt: str):
    """A per-book frame with its books' keys beside the title: the id always, and in a CSV or JSON also where
    each book came from (``book_source``, ``book_external_id``), so that rows join back to published results."""
    from workbench.corpus.book_keys import with_book_keys

    return with_book_keys(project, frame, sources=fmt != "table")


def cmd_accuracy(args: argparse.Namespace) -> int:
    """The numbers of the Name cloze page's "Accuracy per book" tab, for the same choices."""
    from workbench.probes.cloze.views import AccuracyChoices, accuracy_frame

    choices = AccuracyChoices(models=tuple(args.model or ()), book_id=args.book, exclude_flagged=args.exclude_flagged,
                              ci=args.ci, all_columns=args.all_columns)
    with opened(args.project) as project:
        frame = _keyed(project, accuracy_frame(project, choices), args.format)
    print_frame(frame, args.format)
    return 0


def cmd_categories(args: argparse.Namespace) -> int:
    from workbench.probes.cloze.analysis import category_means

    with opened(args.project) as project:
        frame = category_means(project, args.tag, args.model, exclude_flagged=args.exclude_flagged)
    print_frame(frame, args.format)
    return 0


def _human_arguments(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--humans", action="store_true", help=what)
    p.add_argument("--annotator", metavar="NAME", help="with --humans: only this annotator's answers")
    p.add_argument("--task", metavar="NAME", help="with --humans: only this name-cloze annotation task")
    p.add_argument("--per-answer", action="store_true",
                   help="with --humans: count every answer as a unit (by default several people's answers to one "
                        "passage are pooled into one mark by majority, so that the interval is over passages)")


def cmd_table(args: argparse.Namespace) -> int:
    """The numbers of the Name cloze page's "Models side by side" tab, for the same choices."""
    from workbench.probes.cloze.models_table import models_table_note
    from workbench.probes.cloze.views import ModelsTableChoices, models_table_frame

    choices = ModelsTableChoices(models=tuple(args.model), top=args.top, year_from=args.year_from,
                                 year_to=args.year_to, humans=args.humans, sort_by=args.sort_by, book_id=args.book,
                                 annotator=args.annotator, task=args.task, per_answer=args.per_answer)
    with opened(args.project) as project:
        frame = models_table_frame(project, choices)
        note = models_table_note(project, frame, year_from=args.year_from, year_to=args.year_to,
                                 per_answer=args.per_answer)
        if args.humans or args.annotator:
            from workbench.probes.cloze.human import human_answers, pooling_note

            pooling = pooling_note(human_answers(project, args.task, annotator=args.annotator), args.per_answer)
            note = " ".join(n for n in (note, f"People: {pooling}." if pooling else "") if n)
    print_frame(frame, args.format, empty="No book has results for these models (within these years).")
    if note:
        print(note, file=sys.stderr)
    return 0


def cmd_answers(args: argparse.Namespace) -> int:
    """The passages dialog of the Charts page (a book's point clicked), for the same choices."""
    from workbench.probes.cloze.views import PassagesChoices, passages_view

    choices = PassagesChoices(book_id=args.book, models=tuple(args.model or ()), show=args.show)
    with opened(args.project) as project:
        frame = passages_view(project, choices)
    print_frame(frame, args.format, empty="No answers of this kind for this book: run the probe, or choose --show all.")
    return 0


def cmd_frequent_name(args: argparse.Namespace) -> int:
    from workbench.probes.cloze.baselines import frequent_name_baseline

    with opened(args.project) as project:
        frame = frequent_name_baseline(project, construction="pooled" if args.pooled else "leave-book-out")
        if args.humans or args.annotator:
            from workbench.probes.cloze.human import baseline_with_humans, human_answers, pooling_note

            frame = baseline_with_humans(project, frame, args.task, annotator=args.annotator,
                                         per_answer=args.per_answer)
            pooling = pooling_note(human_answers(project, args.task, annotator=args.annotator), args.per_answer)
            if pooling:
                print(f"People: {pooling}.", file=sys.stderr)
    print_frame(frame, args.format)
    return 0


def cmd_human_task(args: argparse.Namespace) -> int:
    from workbench.annotation.items import item_count
    from workbench.probes.cloze.human import create_human_task

    with opened(args.project) as project:
        task = create_human_task(project, args.task, args.book, per_book=args.per_book,
                                 per_annotator=args.per_annotator, overlap=args.overlap, seed=args.seed)
        items = item_count(project, task.id)
    print(f"Created the blinded name-cloze task '{task.name}' with {items:,} passages. Annotators work through it "
          "on the Annotate page; see their scores with palimpsest cloze humans.")
    return 0


def cmd_humans(args: argparse.Namespace) -> int:
    from workbench.probes.cloze.analysis import model_labels
    from workbench.probes.cloze.human import human_answers, humans_vs_models, no_answers_message

    with opened(args.project) as project:
        if args.answers:
            frame = human_answers(project, args.task, annotator=args.annotator)
            print_frame(frame, args.format, empty=no_answers_message(project, args.task, args.annotator))
            return 0
        frame = humans_vs_models(project, args.model or model_labels(project), args.task, annotator=args.annotator,
                                 per_answer=args.per_answer, each_annotator=args.each_annotator)
    print_frame(frame, args.format)
    people = frame.loc[frame["kind"] == "people", "note"]
    if args.format == "table" and len(people):  # the pooling rule and counts, readable under the table
        print(f"People: {people.iloc[0]}.", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from workbench.probes.cloze.analysis import compare_models, compare_models_tests

    with opened(args.project) as project:
        if args.books:
            frame = compare_models(project, args.model_a, args.model_b, exclude_flagged=args.exclude_flagged)
            frame = _keyed(project, frame, args.format)
            frame.insert(0, "model_a", args.model_a)  # which model the _a and _b columns are
            frame.insert(1, "model_b", args.model_b)
        else:
            frame = compare_models_tests(project, args.model_a, args.model_b, exclude_flagged=args.exclude_flagged)
    print_frame(frame, args.format)
    return 0


def cmd_year(args: argparse.Namespace) -> int:
    from workbench.probes.cloze.analysis import year_correlation

    with opened(args.project) as project:
        frame = year_correlation(project, args.model, exclude_flagged=args.exclude_flagged)
    print_frame(frame, args.format)
    return 0


def cmd_deciles(args: argparse.Namespace) -> int:
    from workbench.probes.cloze.analysis import decile_sets

    with opened(args.project) as project:
        frame = _keyed(project, decile_sets(project, args.model, ties=args.ties, seed=args.seed,
                                            exclude_flagged=not args.include_flagged), args.format)
    print_frame(frame, args.format)
    return 0


def cmd_errors(args: argparse.Namespace) -> int:
    from workbench.probes.cloze.error_analysis import DEFAULT_SET_SIZES, SHORT_COLUMNS, error_analyses, summary_frame
    from workbench.probes.cloze.error_charts import set_size_option

    sizes = [set_size_option(s) for s in args.set_size] if args.set_size else list(DEFAULT_SET_SIZES)
    if args.names:
        sizes = sizes[:1]
    with opened(args.project) as project:
        results = error_analyses(project, args.model[:1] if args.names else args.model, args.grouped_by,
                                 groups=args.groups, set_sizes=sizes, permutations=args.permutations, seed=args.seed,
                                 ties=args.ties, draws=args.draws, state=progress_state("Shuffling"))
        names = _keyed(project, results[0].names, args.format) if args.names else None
    if names is not None:
        print_frame(names, args.format)
        return 0
    frame = summary_frame(results)
    print_frame(frame if args.format != "table" else frame[SHORT_COLUMNS], args.format)
    if args.format == "table":
        for note in dict.fromkeys(r.note for r in results if r.note):
            print(note)
    return 0


def _add_tie_arguments(p: argparse.ArgumentParser, *, draws: bool) -> None:
    from workbench.corpus.book_sets import DEFAULT_DRAWS, TIE_RULES

    p.add_argument("--ties", choices=list(TIE_RULES), default="all",
                   help="books (and names) tied at a cut: 'all' go in (a group may be larger than its share), or "
                        "'draw' at random" + (", over --draws seeded draws, reported as a spread" if draws else
                                              " (one seeded draw)"))
    if draws:
        p.add_argument("--draws", type=int, default=DEFAULT_DRAWS, metavar="N",
                       help=f"draws of the ties with --ties draw (default {DEFAULT_DRAWS})")
    p.add_argument("--seed", type=int, default=0, help="seed of the draws and of the randomization test (default 0)")


def cmd_templates(args: argparse.Namespace) -> int:
    from workbench.prompt_templates import get_template, save_template, templates_frame

    with opened(args.project) as project:
        if args.add:
            name, path = args.add
            try:
                body = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise UserError(f"Could not read {path}: {exc}.") from exc
            saved = save_template(project, name, body, "cloze")
            print(f"Saved {saved.label} ({saved.hash[:12]}).")
            return 0
        if args.show:
            print(get_template(project, args.show).body, end="")
            return 0
        frame = templates_frame(project, kind="cloze", all_versions=args.all_versions)
    print_frame(frame[["name", "version", "versions", "origin", "hash", "created_at"]], args.format)
    return 0
