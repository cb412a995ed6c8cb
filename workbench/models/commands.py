"""``palimpsest model …`` (add, edit, list, test, remove, prices), ``cache``, ``runs`` and ``continue``."""

from __future__ import annotations

import argparse
import sys

from workbench.cli.common import (
    MODEL_HELP,
    add_format_argument,
    add_project_argument,
    add_yes_argument,
    confirm,
    confirm_work,
    opened,
    print_frame,
    progress_state,
    report_outcome,
)
from workbench.errors import UserError
from workbench.models import catalog
from workbench.models.catalog import BACKENDS, ModelSpec

FREE_YES_HELP = ("confirm without a question that a model on a known paid service (OpenAI, Anthropic, Google, "
                 "Mistral ...) costs nothing (free=true)")
KEY_HELP = ("the NAME of the environment variable that holds the API key (e.g. OPENAI_API_KEY); "
            "the key itself is never stored")


def _add_model_fields(p: argparse.ArgumentParser, *, required: bool) -> None:
    p.add_argument("--backend", choices=sorted(BACKENDS), required=required,
                   help="hf (transformers), gguf (llama.cpp), openai (any OpenAI-compatible server), external")
    p.add_argument("--ref",
                   help="hub id or folder (hf), .gguf file (gguf), the model's name on the server (openai)")
    p.add_argument("--base-url", help="server address for openai models, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--api-key-env", metavar="VAR", help=KEY_HELP)
    p.add_argument("--api-key-keyring", metavar="NAME",
                   help="the NAME of a system keyring entry (service 'palimpsest') holding the key")
    p.add_argument("--concurrency", type=int, metavar="N",
                   help=f"API server models: requests sent at once (default {catalog.DEFAULT_CONCURRENCY}); raise it for "
                        "a vLLM server on several GPUs or several servers behind a router")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="backend parameter, e.g. chat=false, free=true (a server of your own: no cost question), "
                        "timeout=60, n_ctx=4096, device=cuda")
    p.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE",
                   help="a tag for grouping, e.g. decade=1950s, or a bare word such as fine-tuned")


def register(subparsers: argparse._SubParsersAction) -> None:
    model = subparsers.add_parser("model", help="the models of a project: add, edit, list, test, remove, prices")
    sub = model.add_subparsers(dest="model_command", metavar="ACTION")
    model.set_defaults(handler=lambda args: model.print_help() or 2)

    p = sub.add_parser("add", help="add a model")
    add_project_argument(p)
    p.add_argument("--label", required=True, help="a short name for the model in this project")
    _add_model_fields(p, required=True)
    add_yes_argument(p, FREE_YES_HELP)
    p.set_defaults(handler=cmd_add)

    p = sub.add_parser("edit", help="change a model (only the options given)")
    add_project_argument(p)
    p.add_argument("label", help="the model to change")
    p.add_argument("--new-label", help="rename it")
    _add_model_fields(p, required=False)
    p.add_argument("--remove-tag", action="append", default=[], metavar="KEY", help="drop a tag")
    p.add_argument("--remove-param", action="append", default=[], metavar="KEY", help="drop a parameter")
    add_yes_argument(p, FREE_YES_HELP)
    p.set_defaults(handler=cmd_edit)

    p = sub.add_parser("list", help="list the models")
    add_project_argument(p)
    add_format_argument(p)
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("test", help="send a one-line prompt; print the answer and how long it took")
    add_project_argument(p)
    p.add_argument("label", help=MODEL_HELP)
    p.add_argument("--prompt", default=catalog.TEST_PROMPT, help="what to send")
    p.set_defaults(handler=cmd_test)

    p = sub.add_parser("remove", help="remove a model")
    add_project_argument(p)
    p.add_argument("label", help=MODEL_HELP)
    p.add_argument("--with-runs", action="store_true", help="also remove the runs (and responses) that used it")
    p.set_defaults(handler=cmd_remove)

    p = sub.add_parser("prices", help="show or set API prices (US dollars per million tokens)")
    add_project_argument(p)
    p.add_argument("--set", nargs=3, metavar=("MODEL", "INPUT", "OUTPUT"),
                   help="the project's price for MODEL (a name, or a prefix ending in *)")
    p.add_argument("--remove", metavar="MODEL", help="forget the project's own price for MODEL")
    add_format_argument(p)
    p.set_defaults(handler=cmd_prices)

    p = subparsers.add_parser("cache", help="the response cache: its size, or clear it")
    add_project_argument(p)
    p.add_argument("--clear", action="store_true", help="forget cached answers")
    p.add_argument("--model", help="with --clear: only this model's answers (as listed)")
    add_format_argument(p)
    p.set_defaults(handler=cmd_cache)

    p = subparsers.add_parser("runs", help="list runs with their status, counts, tokens and cost")
    add_project_argument(p)
    p.add_argument("--kind", help="only runs of this kind (cloze, rep, ...)")
    p.add_argument("--model", metavar="LABEL", help="only this model's runs")
    add_format_argument(p)
    p.set_defaults(handler=cmd_runs)

    p = subparsers.add_parser("continue", help="continue a stopped run, or retry only its failed items")
    add_project_argument(p)
    p.add_argument("run", type=int, help="the run's number (palimpsest runs PROJECT lists them)")
    p.add_argument("--retry-failed", "--failed-only", dest="retry_failed", action="store_true",
                   help="redo only the items that failed")
    add_yes_argument(p)
    p.set_defaults(handler=cmd_continue)


# ---------------------------------------------------------------------------------------------- models
def _params(args: argparse.Namespace, current: dict | None = None) -> dict:
    params = {**(current or {}), **catalog.parse_pairs(args.param, what="parameter", typed=True)}
    if args.concurrency is not None:
        params["concurrency"] = args.concurrency
    return params


def _saved(save, yes: bool) -> ModelSpec:
    """``save(confirm_free)``, asking first when a model on a paid service is being marked free."""
    try:
        return save(yes)
    except catalog.FreeOnPaidHost as exc:
        if not sys.stdin.isatty():
            raise
        sys.stderr.write(str(exc) + "\n")
        if not confirm("Mark it as costing nothing anyway?"):
            raise UserError("Nothing was changed, at your request.") from None
        return save(True)


def cmd_add(args: argparse.Namespace) -> int:
    spec = ModelSpec(
        label=args.label, backend=args.backend, ref=args.ref or "", base_url=args.base_url,
        api_key_env=args.api_key_env, api_key_keyring=args.api_key_keyring, params=_params(args),
        tags=catalog.parse_pairs(args.tag, what="tag", typed=False),
    )
    with opened(args.project) as project:
        added = _saved(lambda confirmed: catalog.add_model(project, spec, confirm_free=confirmed), args.yes)
    print(f"Added {added.label} ({added.backend}: {added.ref}). Check it with: palimpsest model test "
          f"{args.project} {added.label}")
    _print_warnings(added)
    return 0


def _print_warnings(spec: ModelSpec) -> None:
    for warning in catalog.model_warnings(spec):
        print(f"Warning: {warning}")


def cmd_edit(args: argparse.Namespace) -> int:
    with opened(args.project) as project:
        current = catalog.get_model(project, args.label)
        changes: dict = {}
        for field, value in (("label", args.new_label), ("backend", args.backend), ("ref", args.ref),
                             ("base_url", args.base_url), ("api_key_env", args.api_key_env),
                             ("api_key_keyring", args.api_key_keyring)):
            if value is not None:
                changes[field] = value
        if args.param or args.remove_param or args.concurrency is not None:
            params = _params(args, current.params)
            changes["params"] = {k: v for k, v in params.items() if k not in args.remove_param}
        if args.tag or args.remove_tag:
            tags = {**current.tags, **catalog.parse_pairs(args.tag, what="tag", typed=False)}
            changes["tags"] = {k: v for k, v in tags.items() if k not in args.remove_tag}
        updated = _saved(lambda confirmed: catalog.update_model(project, current.id, confirm_free=confirmed, **changes),
                         args.yes)
    print(f"Updated {updated.label}.")
    _print_warnings(updated)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with opened(args.project) as project:
        print_frame(catalog.models_frame(project), args.format)
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    with opened(args.project) as project:
        spec = catalog.get_model(project, args.label)
    _print_warnings(spec)
    print(f"Sending to {spec.label}: {args.prompt}", flush=True)
    answer, seconds = catalog.test_model(spec, args.prompt)
    print(f"Answer: {answer.strip() or '(empty)'}")
    print(f"Latency: {seconds:.2f} s")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    with opened(args.project) as project:
        catalog.remove_model(project, args.label, with_runs=args.with_runs)
    print(f"Removed {args.label}.")
    return 0


def cmd_prices(args: argparse.Namespace) -> int:
    from workbench.models import prices

    with opened(args.project) as project:
        if args.set:
            model, i, o = args.set
            prices.set_price(project, model, i, o)
            print(f"Set the price of {model}: ${float(i):g} input, ${float(o):g} output per million tokens.")
        if args.remove and not prices.remove_price(project, args.remove):
            print(f"This project had no price of its own for {args.remove}.")
        if not args.set and not args.remove:
            print_frame(prices.prices_frame(project), args.format)
            if args.format == "table":
                print(prices.default_prices_note())
    return 0


# ---------------------------------------------------------------------------------------------- cache, runs
def cmd_cache(args: argparse.Namespace) -> int:
    from workbench.models.cache import cache_size, cache_stats, clear_cache, describe_size

    with opened(args.project) as project:
        if args.clear:
            removed = clear_cache(project, args.model)
            print(f"Removed {removed} cached answer{'s' if removed != 1 else ''}.")
        elif args.model:
            print("--model only goes with --clear.")
            return 2
        else:
            print_frame(cache_stats(project), args.format)
            if args.format == "table":
                print(describe_size(*cache_size(project)))
    return 0


#: ``what``: the kind in the words of the probe that declared it (as the Jobs page shows it); ``kind`` as stored
def cmd_runs(args: argparse.Namespace) -> int:
    from workbench.models.usage import run_cost_text
    from workbench.runs.views import RunsChoices, runs_frame

    with opened(args.project) as project:
        frame = runs_frame(project, RunsChoices(kind=args.kind, model=args.model))  # the Jobs page's runs
    if args.format == "table":
        frame = frame.assign(cost=[run_cost_text(c, b, n, m) for c, b, n, m in zip(
                                 frame["cost"], frame["backend"], frame["calls"], frame["model"])],
                             model=frame["model"].fillna("")).drop(columns=["note"])
    frame = frame.drop(columns=["backend"])
    print_frame(frame, args.format)
    return 0


def cmd_continue(args: argparse.Namespace) -> int:
    from workbench.work import continue_work

    with opened(args.project) as project:
        work = continue_work(project, args.run, args.retry_failed)
        confirm_work(work, yes=args.yes)
        print(f"{work.title}…", flush=True)
        outcome = work.run(progress_state(f"Run {args.run}"))
        return report_outcome(work, outcome, args.project)
