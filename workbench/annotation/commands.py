"""``palimpsest annotate ...``: annotation tasks, their items, imports, exports and agreement."""

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
)
from workbench.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    annotate = subparsers.add_parser("annotate", help="human annotation tasks: create, fill, import, export, agreement")
    commands = annotate.add_subparsers(dest="annotate_command", metavar="ACTION")
    annotate.set_defaults(handler=lambda args: annotate.print_help() or 2)

    p = commands.add_parser("create", help="create an annotation task")
    _project_and_task(p)
    p.add_argument("--kind", required=True, choices=["narrative-time", "summary-validity", "label"],
                   help="what annotators do: narrative-time (minutes of story time), summary-validity (pick the true "
                        "summary) or label (choose labels)")
    p.add_argument("--labels", help="label tasks: the label set, comma-separated (e.g. woman,man,non-binary)")
    p.add_argument("--blind", action="store_true", help="hide book, author, model and condition from annotators")
    p.add_argument("--per-annotator", type=int, metavar="N", help="items per annotator (default: all items)")
    p.add_argument("--overlap", type=float, default=0.2, metavar="F",
                   help="share of each annotator's items that every annotator gets (default 0.2)")
    p.add_argument("--seed", type=int, default=0, help="seed for sampling, assignment and order (default 0)")
    p.add_argument("--codebook", type=Path, metavar="FILE", help="a Markdown codebook instead of the shipped one")
    p.set_defaults(handler=cmd_create)

    p = commands.add_parser("tasks", help="list the annotation tasks")
    add_project_argument(p)
    add_format_argument(p)
    p.set_defaults(handler=cmd_tasks)

    p = commands.add_parser("items", help="narrative-time items: passages of ~250 words sampled from books")
    _project_and_task(p)
    _book_selection(p)
    p.add_argument("--per-book", type=int, default=20, metavar="N", help="passages per book (default 20)")
    p.add_argument("--seed", type=int, help="sampling seed (default: the task's)")
    p.add_argument("--words", type=int, default=250, help="passage length in words (default 250)")
    p.set_defaults(handler=cmd_items)

    p = commands.add_parser("summarize", help="summary-validity items: scenes summarized and distorted by a model")
    _project_and_task(p)
    p.add_argument("--model", required=True, metavar="LABEL", help="a model of the project (palimpsest model list PROJECT lists them)")
    _book_selection(p, required=False)
    p.add_argument("--per-book", type=int, default=10, metavar="N", help="scenes per book (default 10)")
    p.add_argument("--seed", type=int, help="sampling and generation seed (default: the task's)")
    p.add_argument("--chars", type=int, default=3000, help="scene length in characters (default 3000)")
    p.add_argument("--attempts", type=int, default=3, help="tries per scene when an answer is unusable (default 3)")
    p.add_argument("--max-tokens", type=int, default=256, help="longest answer, in tokens (default 256)")
    p.add_argument("--template", default="summary", help="prompt template for the summaries (default: summary)")
    p.add_argument("--distort-template", default="summary-distort",
                   help="prompt template for the distorted versions (default: summary-distort)")
    add_yes_argument(p)
    p.set_defaults(handler=cmd_summarize)

    p = commands.add_parser("import-items", help="add items from a CSV/TSV file (item_id, text, optional gold)")
    _project_and_task(p)
    p.add_argument("file", type=Path, metavar="FILE", help="the file to read")
    p.set_defaults(handler=cmd_import_items)

    p = commands.add_parser("import", help="import answers made elsewhere (annotator, item_id, value)")
    _project_and_task(p)
    p.add_argument("file", type=Path, metavar="FILE.csv", help="the file to read")
    p.set_defaults(handler=cmd_import)

    p = commands.add_parser("export", help="write a task's answers (or items, agreement, adjudications) as CSV")
    _project_and_task(p)
    p.add_argument("--out", type=Path, required=True, metavar="FILE.csv", help="the file to write")
    p.add_argument("--table", default="annotations",
                   choices=["annotations", "items", "agreement", "adjudications"],
                   help="what to write (default: annotations; 'items' includes the hidden metadata)")
    p.set_defaults(handler=cmd_export)

    p = commands.add_parser("agreement", help="agreement statistics: one row per statistic")
    _project_and_task(p)
    add_format_argument(p)
    p.set_defaults(handler=cmd_agreement)

    p = commands.add_parser("disagreements", help="items where annotators disagree")
    _project_and_task(p)
    p.add_argument("--factor", type=float, default=2.0,
                   help="narrative time: answers further apart than this ratio disagree (default 2)")
    add_format_argument(p)
    p.set_defaults(handler=cmd_disagreements)

    p = commands.add_parser("adjudicate", help="store the agreed value for a disputed item (answers are kept)")
    _project_and_task(p)
    p.add_argument("--item", required=True, metavar="ITEM_ID", help="the item's id, as the disagreements list shows it")
    p.add_argument("--value", required=True, help="the decided answer")
    p.add_argument("--adjudicator", default="", metavar="NAME", help="who decided (kept with the decision)")
    p.add_argument("--note", default="", help="why it was decided so (kept with the decision)")
    p.set_defaults(handler=cmd_adjudicate)


def _project_and_task(p: argparse.ArgumentParser) -> None:
    add_project_argument(p)
    p.add_argument("--task", required=True, metavar="NAME", help="the annotation task")


def _book_selection(p: argparse.ArgumentParser, required: bool = True) -> None:
    group = p.add_mutually_exclusive_group(required=required)
    group.add_argument("--book", type=int, action="append", metavar="ID", help="a book id (repeat for several)")
    group.add_argument("--tag", metavar="KEY=VALUE", help="every book with this tag")


def _books(project, args: argparse.Namespace) -> list[int]:
    from workbench.corpus.library import books_with_tag, get_book, list_books

    if args.book:
        return [get_book(project, book_id).id for book_id in dict.fromkeys(args.book)]
    if args.tag:
        key, sep, value = args.tag.partition("=")
        if not sep or not key.strip():
            raise UserError(f"'{args.tag}' is not a tag: write it as key=value, e.g. group=famous.")
        ids = books_with_tag(project, key.strip(), value.strip())
        if not ids:
            raise UserError(f"No book has the tag {key.strip()}={value.strip()}.")
        return ids
    ids = [b.id for b in list_books(project)]
    if not ids:
        raise UserError("The project has no books yet. Import some first (palimpsest import).")
    return ids


def cmd_create(args: argparse.Namespace) -> int:
    from workbench.annotation.codebooks import read_codebook_file
    from workbench.annotation.tasks import create_task

    codebook = read_codebook_file(args.codebook) if args.codebook else None
    with opened(args.project) as project:
        task = create_task(project, args.task, args.kind, labels=args.labels, codebook=codebook, blinded=args.blind,
                           per_annotator=args.per_annotator, overlap=args.overlap, seed=args.seed)
    blind = "blinded" if task.blinded else "not blinded"
    print(f"Created the {task.kind} task '{task.name}' ({blind}).")
    return 0


def cmd_tasks(args: argparse.Namespace) -> int:
    from workbench.annotation.tasks import tasks_frame

    with opened(args.project) as project:
        print_frame(tasks_frame(project), args.format)
    return 0


def cmd_items(args: argparse.Namespace) -> int:
    from workbench.annotation.items import add_book_passages

    with opened(args.project) as project:
        added = add_book_passages(project, args.task, _books(project, args),
                                  per_book=args.per_book, seed=args.seed, words=args.words,
                                  state=progress_state("Sampling"))
    total = sum(added.values())
    short = [str(b) for b, n in added.items() if n < args.per_book]
    print(f"Added {total} passages from {len(added)} book(s)."
          + (f" Books with fewer new passages than asked (too short, or sampled before): {', '.join(short)}." if short else ""))
    return 0


def cmd_summarize(args: argparse.Namespace) -> int:
    from workbench.models.catalog import get_model
    from workbench.summaries.plans import SummaryPlan, summary_items_work

    with opened(args.project) as project:
        spec = get_model(project, args.model)
        plan = SummaryPlan(model=spec.label, book_ids=tuple(_books(project, args)), per_book=args.per_book,
                           seed=args.seed, chars=args.chars, max_tokens=args.max_tokens, max_attempts=args.attempts,
                           summary_template=args.template, distort_template=args.distort_template)
        work = summary_items_work(project, args.task, plan)
        confirm_work(work, yes=args.yes)
        report = work.run(progress_state("Summarizing")).value
    if report is None:
        return 1
    print(report.describe())
    if report.summaries_failed or report.distorted_failed:
        print("Ask again for the failed ones with: palimpsest continue "
              f"{args.project} {report.summary_run} --retry-failed (the summaries), then "
              f"palimpsest continue {args.project} {report.distort_run} --retry-failed (the distorted versions).")
        return 1
    return 0


def cmd_import_items(args: argparse.Namespace) -> int:
    from workbench.annotation.item_import import import_items

    with opened(args.project) as project:
        count = import_items(project, args.task, args.file)
    print(f"Imported {count} items into '{args.task}'.")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from workbench.annotation.annotation_import import import_annotations

    with opened(args.project) as project:
        counts = import_annotations(project, args.task, args.file)
    new = f" and {counts['new_annotators']} new annotator(s)" if counts["new_annotators"] else ""
    print(f"Imported {counts['answers']} answers{new} into '{args.task}'.")
    return 0


_EXPORT_TABLES = {"annotations": "annotations", "items": "annotation-items", "agreement": "annotation-agreement",
                  "adjudications": "annotation-adjudications"}


def cmd_export(args: argparse.Namespace) -> int:
    from workbench.export.registry import export_table

    with opened(args.project) as project:
        written = export_table(project, _EXPORT_TABLES[args.table], args.out, task=args.task)
    print(f"Wrote {written}.")
    return 0


def cmd_agreement(args: argparse.Namespace) -> int:
    from workbench.annotation.agreement import why_no_agreement
    from workbench.annotation.views import AnnotationChoices, agreement_frame

    with opened(args.project) as project:
        frame = agreement_frame(project, AnnotationChoices(task=args.task))  # the Annotate page's, both CI ends
        print_frame(frame, args.format, empty=why_no_agreement(project, args.task) if frame.empty else "")
    return 0


def cmd_disagreements(args: argparse.Namespace) -> int:
    from workbench.annotation.views import AnnotationChoices, disputes_table

    with opened(args.project) as project:
        print_frame(disputes_table(project, AnnotationChoices(task=args.task, factor=args.factor)), args.format)
    return 0


def cmd_adjudicate(args: argparse.Namespace) -> int:
    from workbench.annotation.adjudication import adjudicate

    with opened(args.project) as project:
        stored = adjudicate(project, args.task, args.item, args.value, adjudicator=args.adjudicator, note=args.note)
    print(f"Item {stored['item_id']}: adjudicated as {stored['value']}.")
    return 0
