"""How often name-cloze extraction is right, measured against LitBank's gold annotations.

LitBank (Bamman et al.) marks every proper mention in the first ~2,000 words of 100 novels; its
coreference layer tells proper person mentions (``PROP_PER``) from other proper names (``PROP_GPE``,
``PROP_FAC``, ...). This script runs the extraction over the 70 annotated excerpts
(``entities/brat/*_brat.txt``) and counts, over every candidate passage found there (all of them, not
a sample), the share that is *right*:

- the masked word lies inside a gold ``PROP_PER`` mention, and
- no other gold proper mention (``PROP_*``) overlaps the window.

Usage: ``python scripts/cloze_litbank_precision.py [LITBANK_DIR] [--show-errors N] [--allow-other-proper-nouns]``
(default folder: ``../shared/data/litbank``). Prints one JSON line; exits 2 when the data is missing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_DIR = ROOT.parent / "shared" / "data" / "litbank"
MENTION = re.compile(r"^T\d+\t(PROP_[A-Z]+) (\d+) (\d+)\t", re.MULTILINE)
GOAL = 0.90


def gold_mentions(ann_path: Path) -> list[tuple[str, int, int]]:
    return [(m.group(1), int(m.group(2)), int(m.group(3))) for m in MENTION.finditer(ann_path.read_text(encoding="utf-8"))]


def judge(candidate, mentions) -> str | None:
    """None when the passage is right, else what is wrong with it."""
    name = (candidate.name_start, candidate.name_end)
    covering = [m for m in mentions if m[1] <= name[0] and name[1] <= m[2]]
    if not any(m[0] == "PROP_PER" for m in covering):
        return "masked word is not a gold proper person"
    others = [m for m in mentions if m not in covering and m[1] < candidate.end_char and m[2] > candidate.start_char]
    if others:
        return "window holds another gold proper name: " + ", ".join(sorted({m[0] for m in others}))
    return None


def measure(litbank: Path, allow_other_proper_nouns: bool = False, show_errors: int = 0) -> dict:
    from workbench.nlp import load_english
    from workbench.probes.cloze.candidates import find_candidates
    from workbench.probes.cloze.extract import blocks
    from workbench.probes.cloze.rules import ExtractionSettings

    settings = ExtractionSettings(reject_other_proper_nouns=not allow_other_proper_nouns)
    nlp = load_english()
    excerpts = sorted((litbank / "entities" / "brat").glob("*_brat.txt"))
    total = right = 0
    books_with_passages = 0
    problems: Counter[str] = Counter()
    shown = 0
    for excerpt in excerpts:
        ann = litbank / "coref" / "brat" / excerpt.with_suffix(".ann").name
        if not ann.exists():
            continue
        text = excerpt.read_text(encoding="utf-8")
        mentions = gold_mentions(ann)
        found = []
        for start, end in blocks(text, settings.block_words):
            found += find_candidates(nlp(text[start:end]), settings, offset=start)
        books_with_passages += bool(found)
        for candidate in found:
            total += 1
            problem = judge(candidate, mentions)
            if problem is None:
                right += 1
                continue
            problems[problem.split(":")[0]] += 1
            if shown < show_errors:
                shown += 1
                print(f"--- {excerpt.name}: {problem}\n{candidate.passage(text)}\n(gold: {candidate.gold})", file=sys.stderr)
    precision = right / total if total else 0.0
    return {
        "name": "cloze_litbank_precision",
        "value": round(precision, 4),
        "passages": total,
        "right": right,
        "books": len(excerpts),
        "books_with_passages": books_with_passages,
        "problems": dict(problems),
        "reject_other_proper_nouns": settings.reject_other_proper_nouns,
        "goal": f">= {GOAL}",
        "pass": precision >= GOAL,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("litbank", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--show-errors", type=int, default=0, metavar="N", help="print the first N wrong passages")
    parser.add_argument("--allow-other-proper-nouns", action="store_true",
                        help="measure without the extra proper-noun filter")
    args = parser.parse_args(argv)
    if not (args.litbank / "entities" / "brat").is_dir():
        print(json.dumps({"name": "cloze_litbank_precision", "skipped": f"no LitBank data at {args.litbank}"}))
        return 2
    result = measure(args.litbank, args.allow_other_proper_nouns, args.show_errors)
    print(json.dumps(result))
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
