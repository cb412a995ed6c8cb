"""Made-up name-cloze results in the published gpt4-books format, at the papers' scale (written here).

``write_published_results(folder, books=571, rows=100, models=("gpt4", "chatgpt"))`` writes, for each model,
a folder of one TSV file per book (raw response, response without tags, gold name, passage with [MASK]).
Nothing comes from anyone's published data: titles, authors, names and passages are generated.

The files look like the real ones where it matters for the workbench:

- file names in both published forms: ``{gutenberg_number}_{title_words}.txt`` and
  ``{author}_{title_words}_{Title_Words}.txt``;
- per-book accuracy that is heavy-tailed (most books near zero, a few well-known books high), the same
  book being well known to every model (the second model a little weaker);
- wrong answers that lean towards the names of the well-known books (what the error analysis of
  *Speak, Memory* measures), tags around some answers, refusals and empty answers.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

FIRST = ["Abel", "Ada", "Agnes", "Albert", "Alma", "Amos", "Anna", "Arthur", "Beatrice", "Bertram", "Bess", "Caleb",
         "Celia", "Clara", "Cyril", "Dora", "Edgar", "Edith", "Eli", "Elsie", "Emil", "Esther", "Felix", "Flora",
         "Frank", "Gideon", "Grace", "Hal", "Hattie", "Hugo", "Ida", "Isaac", "Ivy", "Jasper", "Jude", "Kit",
         "Laura", "Leon", "Lottie", "Mabel", "Milo", "Nell", "Noah", "Olive", "Otto", "Pearl", "Percy", "Rhoda",
         "Rufus", "Ruth", "Silas", "Stella", "Tess", "Theo", "Una", "Vera", "Walter", "Wilma", "Zeke", "Zora"]
SURNAMES = ["Ashby", "Blackwood", "Carrow", "Dunmore", "Ellery", "Fairlie", "Garside", "Holloway", "Inchbald",
            "Jessop", "Kettering", "Lockhart", "Marchbanks", "Norbury", "Ormsby", "Pendleton", "Quarles", "Redfern",
            "Sallow", "Thackeray", "Underhill", "Vane", "Whitcombe", "Yardley"]
TITLE_WORDS = ["house", "river", "winter", "garden", "letters", "shadow", "harbour", "orchard", "daughter", "road",
               "lantern", "bells", "tower", "meadow", "stranger", "inheritance", "ashes", "glass", "silver", "moor",
               "captain", "widow", "fortune", "crossing", "island", "mill", "valley", "secret", "season", "heart"]
REFUSALS = ["I'm sorry, I cannot determine the name from this passage.", "<name></name>", "Unknown"]
SCENES = [
    "The lamps were lit early that evening, and [MASK] sat by the window waiting for the coach.",
    "By the time the bells had finished, [MASK] had read the letter twice and put it away.",
    "Nobody in the kitchen spoke when [MASK] came in from the yard with snow on his boots.",
    "It was late in the season, and [MASK] walked the long way round by the mill to avoid them.",
    "\u201cYou will not go tonight,\u201d said [MASK], and shut the door against the wind.",
]


@dataclass(frozen=True)
class PublishedBook:
    stem: str
    title: str
    author: str
    year: int
    fame: float  # 0..1: how well the made-up models know the book
    names: tuple[str, ...]


def made_up_books(count: int = 571, seed: int = 0) -> list[PublishedBook]:
    rng = random.Random(seed)
    books = []
    for index in range(count):
        words = rng.sample(TITLE_WORDS, rng.choice((2, 3)))
        title = "The " + " of the ".join(w.capitalize() for w in words[:2]) + (
            f" and {words[2].capitalize()}" if len(words) > 2 else "")
        author_first, author_last = rng.choice(FIRST), rng.choice(SURNAMES)
        snake = "_".join(w.lower() for w in title.split())
        if index % 2 == 0:
            stem = f"{1000 + 37 * index}_{snake}"
        else:
            stem = f"{author_last.lower()}_{snake}_{title.replace(' ', '_')}"
        fame = 0.02 + 0.9 * rng.random() ** 4  # heavy tail: most books barely known, a tenth well known
        names = tuple(rng.sample(FIRST, 6))
        books.append(PublishedBook(stem, title, f"{author_first} {author_last}", rng.randint(1750, 2015), fame, names))
    return books


def write_published_results(folder: Path, books: int = 571, rows: int = 100,
                            models: tuple[str, ...] = ("gpt4", "chatgpt"), seed: int = 0) -> dict[str, list[Path]]:
    """Write one folder per model under ``folder``; returns {model: [file paths]}."""
    catalogue = made_up_books(books, seed)
    famous_names = [n for b in sorted(catalogue, key=lambda b: -b.fame)[: max(1, books // 10)] for n in b.names]
    out: dict[str, list[Path]] = {}
    for m, model in enumerate(models):
        rng = random.Random(f"{seed}-{model}")
        strength = 1.0 - 0.15 * m
        target = Path(folder) / model
        target.mkdir(parents=True, exist_ok=True)
        paths = []
        for book in catalogue:
            lines = []
            for k in range(rows):
                gold = book.names[k % len(book.names)]
                passage = f"({k + 1}) {SCENES[k % len(SCENES)]}"
                roll = rng.random()
                if roll < book.fame * strength:
                    answer = gold
                elif roll < book.fame * strength + 0.03:
                    answer = None
                else:
                    answer = rng.choice(famous_names) if rng.random() < 0.6 else rng.choice(FIRST)
                if answer is None:
                    raw = rng.choice(REFUSALS)
                    parsed = raw.replace("<name>", "").replace("</name>", "").strip()
                else:
                    raw, parsed = f"<name>{answer}</name>", answer
                lines.append(f"{raw}\t{parsed}\t{gold}\t{passage}\n")
            path = target / f"{book.stem}.txt"
            path.write_text("".join(lines), encoding="utf-8")
            paths.append(path)
        out[model] = paths
    return out
