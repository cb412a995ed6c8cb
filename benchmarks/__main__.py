from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import traceback

import benchmarks


def available() -> list[str]:
    return sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=benchmarks.__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller inputs, for a fast check")
    parser.add_argument("--fail-on", choices=("goal", "error"), default="goal",
                        help="exit non-zero when a goal is missed or a benchmark breaks ('goal', the default), or only "
                             "when a benchmark breaks ('error': what CI checks, since timings vary between machines)")
    parser.add_argument("names", nargs="*", help=f"benchmarks to run (default: all): {', '.join(available())}")
    args = parser.parse_args(argv)
    names = args.names or available()
    unknown = [n for n in names if n not in available()]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    goals_met = no_errors = True
    for name in names:
        module = importlib.import_module(f"benchmarks.bench_{name}")
        try:
            for line in module.run(args.quick):
                line.setdefault("benchmark", name)
                print(json.dumps(line), flush=True)
                goals_met &= bool(line.get("pass", True)) or bool(line.get("skipped"))
        except Exception as exc:  # report and go on with the others
            print(json.dumps({"benchmark": name, "name": name, "error": repr(exc), "pass": False}), flush=True)
            traceback.print_exc(file=sys.stderr)
            no_errors = False
    return 0 if no_errors and (goals_met or args.fail_on == "error") else 1


if __name__ == "__main__":
    sys.exit(main())
