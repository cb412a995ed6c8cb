"""``palimpsest corpus|leakage|membership|surprisal|decop``: leakage and membership evidence from the command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.common import (
    BOOK_HELP,
    CORPUS_HELP,
    MODEL_HELP,
    RETRY_HELP,
    SEED_HELP,
    add_format_argument,
    add_project_argument,
    add_yes_argument,
    opened,
    print_frame,
    progress_state,
    report_run,
    run_work,
)
from workbench.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    _register_corpus(subparsers)
    _register_leakage(subparsers)
    _register_membership(subparsers)
    _register_surprisal(subparsers)
    _register_decop(subparsers)


def _source_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", default="cloze", metavar="cloze|validity|FILE",
                   help="the passages: name-cloze passages with the name put back (default), the downstream-validity "
                        "passages, or a .txt (blank-line separated) / .csv / .tsv file with a 'passage' column")
    p.add_argument("--book", type=int, action="append", metavar="ID", help="only this book (repeatable)")


def _register_corpus(subparsers) -> None:
    corpus = subparsers.add_parser("corpus", help="reference corpora for leakage analyses: build, add, list",
                                   description="Reference corpora: n-gram indexes of text a model may have been "
                                               "trained on (built beside the project, or a remote infini-gram index).")
    commands = corpus.add_subparsers(dest="corpus_command", metavar="STEP")

    p = commands.add_parser("index", help="build a local n-gram index of text files and folders")
    add_project_argument(p)
    p.add_argument("--name", required=True, help="the corpus's name in the project")
    p.add_argument("paths", nargs="+", type=Path, metavar="FILE_OR_DIR",
                   help=".txt files (one document each), .jsonl(.gz) files (one document per line, field 'text'), folders")
    p.add_argument("--tokenizer", default="word", metavar="word|MODEL_LABEL",
                   help="word-level tokens (default; nothing downloaded) or the tokenizer of a local model of the project")
    p.set_defaults(handler=cmd_corpus_index)

    p = commands.add_parser("remote", help="add a remote infini-gram index (web API)")
    add_project_argument(p)
    p.add_argument("--name", required=True, help="the corpus's name in the project")
    p.add_argument("--url", required=True, help="the API address, e.g. https://api.infini-gram.io/")
    p.add_argument("--index", required=True, help="the index there, e.g. v4_piletrain_llama")
    p.add_argument("--no-check", action="store_true", help="do not ask the server for the corpus size now")
    p.set_defaults(handler=cmd_corpus_remote)

    p = commands.add_parser("list", help="the project's reference corpora")
    add_project_argument(p)
    add_format_argument(p)
    p.set_defaults(handler=cmd_corpus_list)

    p = commands.add_parser("remove", help="forget a corpus (and, with --delete-files, delete its index)")
    add_project_argument(p)
    p.add_argument("name", help="the corpus's name (palimpsest corpus list PROJECT lists them)")
    p.add_argument("--delete-files", action="store_true",
                   help="also delete its index files beside the project (a local index only)")
    p.set_defaults(handler=cmd_corpus_remove)


def _register_leakage(subparsers) -> None:
    leakage = subparsers.add_parser("leakage", help="overlap of passages with a reference corpus; book frequency",
                                    description="Where could a model have seen these texts? Overlap with a reference "
                                                "corpus (longest shared sequence, its frequency and chance) and how "
                                                "often each book's n-grams occur there.")
    commands = leakage.add_subparsers(dest="leakage_command", metavar="STEP")

    p = commands.add_parser("overlap", help="longest sequence each passage shares with the corpus (queries what is missing)")
    add_project_argument(p)
    p.add_argument("--corpus", required=True, metavar="NAME", help=CORPUS_HELP)
    p.add_argument("--background", metavar="CORPUS",
                   help="estimate the chance of each overlap on this other corpus of the project (local or remote), "
                        "as the leakage study does on Gigaword; default: the same corpus with the overlap's own "
                        "occurrences taken out of the counts")
    _source_argument(p)
    p.add_argument("--positions", action="store_true", help="add the longest match ending at every token")
    p.add_argument("--retry-failed", action="store_true", help=RETRY_HELP)
    add_format_argument(p)
    p.set_defaults(handler=cmd_overlap)

    p = commands.add_parser("frequency", help="how often each book's n-grams occur in the corpus, against cloze accuracy")
    add_project_argument(p)
    p.add_argument("--corpus", required=True, metavar="NAME", help=CORPUS_HELP)
    p.add_argument("--per-book", type=int, default=10, metavar="K", help="passages per book (default 10)")
    p.add_argument("--gram", type=int, default=10, metavar="N", help="words per n-gram (default 10)")
    p.add_argument("--split", metavar="TAG", help="compare within the values of this book tag (default: published "
                                                   "before 1928 / 1928 and later)")
    p.add_argument("--model", metavar="LABEL", help="whose name-cloze accuracy to compare with")
    p.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    p.add_argument("--book", type=int, action="append", metavar="ID", help=BOOK_HELP)
    p.add_argument("--correlations", action="store_true", help="print Spearman's rho (overall and per group) instead")
    add_format_argument(p)
    p.set_defaults(handler=cmd_frequency)


def _register_membership(subparsers) -> None:
    membership = subparsers.add_parser("membership", help="membership scores from an open model's log-probabilities")
    commands = membership.add_subparsers(dest="membership_command", metavar="STEP")

    p = commands.add_parser("run", help="read the passages with a model (and a reference model)")
    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help=MODEL_HELP)
    p.add_argument("--reference-model", dest="reference", metavar="LABEL",
                   help="a second model for the reference ratio and difference")
    _source_argument(p)
    p.add_argument("--retry-failed", action="store_true", help=RETRY_HELP)
    p.set_defaults(handler=cmd_membership_run)

    p = commands.add_parser("scores", help="perplexity, zlib ratio, Min-K%%, Min-K%%++, reference ratio and difference")
    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help=MODEL_HELP)
    p.add_argument("--reference-model", dest="reference", metavar="LABEL",
                   help="the second model read by membership run --reference-model")
    p.add_argument("--k", type=float, default=20.0, metavar="PERCENT", help="Min-K%% share of tokens (default 20)")
    p.add_argument("--books", dest="per_book", action="store_true",
                   help="book means (with the member tag) instead of passages")
    p.add_argument("--auc", action="store_true", help="ROC AUC of each score over books tagged member=yes/no and over "
                                                       "their passages (interval: books redrawn)")
    p.add_argument("--tag", default="member", help="the book tag holding yes/no (default 'member')")
    add_format_argument(p)
    p.set_defaults(handler=cmd_membership_scores)


def _register_surprisal(subparsers) -> None:
    p = subparsers.add_parser("surprisal", help="word-by-word surprisal of a text (bits), for reading-time studies")
    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help=MODEL_HELP)
    p.add_argument("file", type=Path, metavar="FILE", help="a text file")
    p.add_argument("--no-correction", action="store_true", help="leave out the leading-white-space correction")
    add_format_argument(p)
    p.set_defaults(handler=cmd_surprisal)


def _register_decop(subparsers) -> None:
    decop = subparsers.add_parser("decop", help="DE-COP: pick the verbatim passage among paraphrases")
    commands = decop.add_subparsers(dest="decop_command", metavar="STEP")

    p = commands.add_parser("run", help="paraphrase the passages (if needed) and ask the model")
    add_project_argument(p)
    p.add_argument("--model", required=True, metavar="LABEL", help="the model tested")
    p.add_argument("--paraphraser", required=True, metavar="LABEL", help="the model that writes the paraphrases")
    _source_argument(p)
    p.add_argument("--orders", type=int, choices=[4, 8, 12, 16, 20, 24], default=24, metavar="N",
                   help="option orders per passage: all 24 (default, as DE-COP), or 4, 8, 12, 16 or 20 (each place "
                        "of the verbatim passage equally often)")
    p.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    p.add_argument("--retry-failed", action="store_true", help=RETRY_HELP)
    add_yes_argument(p)
    p.set_defaults(handler=cmd_decop_run)

    p = commands.add_parser("paraphrases", help="review the paraphrases")
    add_project_argument(p)
    p.add_argument("--paraphraser", required=True, metavar="LABEL", help="the model that writes the paraphrases")
    add_format_argument(p)
    p.set_defaults(handler=cmd_decop_paraphrases)

    p = commands.add_parser("regenerate", help="write new paraphrases for some passages")
    add_project_argument(p)
    p.add_argument("--paraphraser", required=True, metavar="LABEL", help="the model that writes the paraphrases")
    p.add_argument("--passage", type=int, action="append", required=True, metavar="ITEM",
                   help="the passage's item_id (see decop paraphrases)")
    add_yes_argument(p)
    p.set_defaults(handler=cmd_decop_regenerate)

    p = commands.add_parser("accuracy", help="score per book (passage as unit) against chance; suspect vs clean books",
                            description="Per book: the mean passage score (share of orders answered verbatim), its "
                                        "interval and test against chance (25%%) with the passage as the unit. Then "
                                        "DE-COP's decision: ROC AUC of book scores, suspect books against clean books "
                                        "(tagged member=no, or published after the model's training cutoff).")
    add_project_argument(p)
    p.add_argument("--model", metavar="LABEL", help=MODEL_HELP)
    p.add_argument("--cutoff-year", type=int, metavar="YEAR",
                   help="the last year of the model's training data: books published later count as clean (default: "
                        "the model's tag cutoff=YEAR, else none)")
    p.add_argument("--tag", default="member", help="the book tag holding yes/no (default 'member')")
    p.add_argument("--auc", action="store_true", help="print the decision (ROC AUC, suspect vs clean books) instead")
    add_format_argument(p)
    p.set_defaults(handler=cmd_decop_accuracy)


# ---------------------------------------------------------------------------------------------- handlers

def cmd_corpus_index(args) -> int:
    from workbench.probes.leakage.corpora import build_corpus, build_notes
    from workbench.probes.leakage.index_build import humanize_bytes

    with opened(args.project) as project:
        corpus = build_corpus(project, args.name, args.paths, tokenizer=args.tokenizer,
                              state=progress_state(f"Indexing {args.name}"))
        print(f"Indexed {corpus.documents:,} documents ({corpus.tokens:,} tokens, {corpus.words:,} words) into "
              f"{corpus.folder(project)} ({humanize_bytes(corpus.size_bytes or 0)}).")
        for line in build_notes(project, corpus):
            print(line, file=sys.stderr)
    return 0


def cmd_corpus_remote(args) -> int:
    from workbench.probes.leakage.corpora import add_remote

    with opened(args.project) as project:
        corpus = add_remote(project, args.name, args.url, args.index, check=not args.no_check)
        size = f" ({corpus.tokens:,} tokens)" if corpus.tokens else ""
        print(f"Added '{corpus.name}': {corpus.remote_index} at {corpus.address}{size}.")
    return 0


def cmd_corpus_list(args) -> int:
    from workbench.probes.leakage.views import corpora_table

    with opened(args.project) as project:
        print_frame(corpora_table(project), args.format)
    return 0


def cmd_corpus_remove(args) -> int:
    from workbench.probes.leakage.corpora import remove_corpus

    with opened(args.project) as project:
        remove_corpus(project, args.name, delete_files=args.delete_files)
    return 0


def cmd_overlap(args) -> int:
    from workbench.probes.leakage import passages
    from workbench.probes.leakage.chance import CAVEAT
    from workbench.probes.leakage.corpora import get_corpus
    from workbench.probes.leakage.overlap import chance_model, run_background, run_overlap
    from workbench.probes.leakage.views import OverlapChoices, overlap_table

    with opened(args.project) as project:
        if args.background:
            get_corpus(project, args.background)  # known, before anything is asked
            if args.background == args.corpus:
                raise UserError("--background must name another corpus than --corpus: the chance of an overlap is "
                                "estimated on text that does not hold it. Leave --background out to use the same "
                                "corpus with the overlap's own occurrences removed.")
        ids = passages.gather(project, args.source, book_ids=args.book)
        report = run_overlap(project, args.corpus, passage_ids=ids, retry_failed=args.retry_failed,
                             state=progress_state(f"Overlap with {args.corpus}"))
        status = report_run(report, args.project, f"Overlap with {args.corpus}", out=sys.stderr)
        if args.background and report.status != "cancelled":
            counted = run_background(project, args.corpus, args.background, passage_ids=ids,
                                     retry_failed=args.retry_failed,
                                     state=progress_state(f"Counting the overlaps in {args.background}"))
            status = max(status, report_run(counted, args.project, f"Counts in {args.background}", out=sys.stderr))
        print(f"Chance model: {chance_model(args.background).describe()}." + ("" if args.background else
              f" {CAVEAT}"), file=sys.stderr)
        choices = OverlapChoices(corpus=args.corpus, background=args.background, source=str(args.source),
                                 passage_ids=tuple(ids), book_ids=_book_ids(args.book), positions=args.positions)
        print_frame(overlap_table(project, choices), args.format)
    return status


def cmd_frequency(args) -> int:
    from workbench.probes.leakage.frequency import run_frequency
    from workbench.probes.leakage.views import FrequencyChoices, frequency_correlations, frequency_table

    with opened(args.project) as project:
        report = run_frequency(project, args.corpus, per_book=args.per_book, gram=args.gram, seed=args.seed,
                               book_ids=args.book, state=progress_state(f"Counting in {args.corpus}"))
        status = report_run(report, args.project, f"N-gram counts in {args.corpus}", out=sys.stderr)
        choices = FrequencyChoices(corpus=args.corpus, model=args.model, split=args.split, per_book=args.per_book,
                                   gram=args.gram, seed=args.seed, book_ids=_book_ids(args.book))
        if args.correlations:
            print_frame(frequency_correlations(project, choices), args.format)
        else:
            _print_with_note(frequency_table(project, choices), args.format)
    return status


def _print_with_note(frame, fmt: str) -> None:
    """The table on standard output and what the tab writes above it (its note: the correlation, the AUCs, worked
    out with the table) on standard error, as the page shows both."""
    print_frame(frame, fmt)
    if frame.attrs.get("note"):
        print(frame.attrs["note"], file=sys.stderr)


def _book_ids(books: list[int] | None) -> tuple[int, ...] | None:
    return tuple(books) if books else None


def cmd_membership_run(args) -> int:
    from workbench.probes.leakage.membership import run_membership

    # Membership scores need an open model (every token's probability): a paid API is refused before anything
    # is sent, so there is no cost to ask about.
    with opened(args.project) as project:
        reports = run_membership(project, args.model, args.source, reference=args.reference, book_ids=args.book,
                                 retry_failed=args.retry_failed, state=progress_state("Reading passages"))
    labels = [args.model, args.reference]
    return max(report_run(report, args.project, f"Membership reading by {label}")
               for report, label in zip(reports, labels))


def cmd_membership_scores(args) -> int:
    from workbench.probes.leakage import membership
    from workbench.probes.leakage.views import MembershipChoices, membership_table

    if not 0 < args.k <= 100:
        raise UserError("--k is a percentage of tokens: more than 0, at most 100.")
    with opened(args.project) as project:
        if args.per_book and not args.auc:  # the Membership tab's table
            choices = MembershipChoices(model=args.model, reference=args.reference, k_percent=args.k, tag=args.tag)
            _print_with_note(membership_table(project, choices), args.format)
            return 0
        frame = membership.scores(project, args.model, reference=args.reference, k_percent=args.k)
        labels = membership.member_labels(project, args.tag)
        if args.auc:
            note = membership.auc_note(frame, labels, model=args.model, tag=args.tag)
            if note:
                raise UserError(note)
            frame = membership.auc_table(frame, labels)
        print_frame(frame, args.format)
    return 0


def cmd_surprisal(args) -> int:
    from workbench.probes.leakage.surprisal import run_surprisal
    from workbench.probes.leakage.views import SurprisalChoices, surprisal_table

    with opened(args.project) as project:
        report, item = run_surprisal(project, args.model, args.file, state=progress_state("Reading the text"))
        status = report_run(report, args.project, f"Surprisal by {args.model}", out=sys.stderr)
        choices = SurprisalChoices(model=args.model, item=item, correct=False if args.no_correction else None)
        print_frame(surprisal_table(project, choices), args.format)
    return status


def cmd_decop_run(args) -> int:
    from workbench.probes.leakage import decop
    from workbench.probes.leakage.plans import decop_work

    with opened(args.project) as project:
        warning = decop.paraphraser_warning(project, args.model, args.paraphraser)
        if warning:
            print(f"Warning: {warning}", file=sys.stderr)
        work = decop_work(project, args.model, args.paraphraser, args.source, book_ids=args.book,
                          orders=args.orders, seed=args.seed, retry_failed=args.retry_failed,
                          project_path=str(args.project))
        return run_work(work, args, progress="Paraphrasing, then asking")


def cmd_decop_paraphrases(args) -> int:
    from workbench.probes.leakage.decop import paraphrases_frame

    with opened(args.project) as project:
        print_frame(paraphrases_frame(project, args.paraphraser), args.format)
    return 0


def cmd_decop_regenerate(args) -> int:
    from workbench.probes.leakage.plans import regeneration_work

    with opened(args.project) as project:
        return run_work(regeneration_work(project, args.paraphraser, args.passage), args,
                        progress="Paraphrasing again")


def cmd_decop_accuracy(args) -> int:
    from workbench.probes.leakage import decop
    from workbench.probes.leakage.decop_scores import describe_decision
    from workbench.probes.leakage.views import DecopChoices, decop_table

    with opened(args.project) as project:
        books = decop_table(project, DecopChoices(model=args.model, cutoff_year=args.cutoff_year, tag=args.tag))
        decided = books.attrs["decided"]
        print_frame(decided if args.auc else books, args.format)
        notes = [describe_decision(row) for _, row in decided.iterrows()]
        notes.append(decop.cutoff_note(project, args.model, args.cutoff_year))
        for model, paraphraser in sorted(set(zip(books["model"], books["paraphraser"]))):
            notes.append(decop.paraphraser_warning(project, model, paraphraser))
        for note in filter(None, notes):
            print(note, file=sys.stderr)
    return 0
