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

``cast="shared"`` (the default) draws every book's six names from one list of 60 first names, so names
are shared by many books; ``cast="distinct"`` gives each book a cast of its own invented names (a few
main characters named often, a tail named once or twice) plus two common first names, as in real
novels, and wrong answers name a well-known book's character (15%), a common first name (50%) or a
character of some other book (35%): the shape the name-set analysis of the error analysis needs.
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


ONSETS = ["B", "C", "D", "F", "G", "H", "J", "K", "L", "M", "N", "P", "R", "S", "T", "V", "W", "Br", "Ch", "Cl",
          "Dr", "Fl", "Gr", "Th", "Tr", "St", "Sh", "Wr"]
VOWELS = ["a", "e", "i", "o", "u", "ae", "ia", "ou", "ei"]
CODAS = ["n", "l", "r", "s", "th", "nd", "rk", "ll", "mb", "x", "ck", "ss", "rn", "sh"]
ENDINGS = ["", "a", "o", "ie", "en", "ia", "y", "us", "el"]
CAST = 14  # characters of a book with a distinct cast


def invented_names(count: int, rng: random.Random) -> list[str]:
    """``count`` different made-up names ('Thessaly', 'Brondie' ...)."""
    names: list[str] = []
    seen: set[str] = set(FIRST)
    while len(names) < count:
        name = rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) + rng.choice(ENDINGS)
        if rng.random() < 0.4:
            name += rng.choice(VOWELS) + rng.choice(CODAS)
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


@dataclass(frozen=True)
class PublishedBook:
    stem: str
    title: str
    author: str
    year: int
    fame: float  # 0..1: how well the made-up models know the book
    names: tuple[str, ...]


def made_up_books(count: int = 571, seed: int = 0, cast: str = "shared") -> list[PublishedBook]:
    rng = random.Random(seed)
    invented = iter(invented_names(count * (CAST - 2), random.Random(f"{seed}-names"))) if cast == "distinct" else None
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
        if invented is None:
            names = tuple(rng.sample(FIRST, 6))
        else:  # its own characters first (the first named most often), then two common first names
            names = tuple([next(invented) for _ in range(CAST - 2)] + rng.sample(FIRST, 2))
        books.append(PublishedBook(stem, title, f"{author_first} {author_last}", rng.randint(1750, 2015), fame, names))
    return books


def write_published_results(folder: Path, books: int = 571, rows: int = 100,
                            models: tuple[str, ...] = ("gpt4", "chatgpt"), seed: int = 0,
                            cast: str = "shared") -> dict[str, list[Path]]:
    """Write one folder per model under ``folder``; returns {model: [file paths]}."""
    catalogue = made_up_books(books, seed, cast)
    famous_names = [n for b in sorted(catalogue, key=lambda b: -b.fame)[: max(1, books // 10)] for n in b.names]
    every_name = [n for b in catalogue for n in b.names]
    weights = [1 / (i + 1) for i in range(CAST)]  # a character's share of a book's passages
    famous_weights = [weights[i % CAST] for i in range(len(famous_names))] if cast == "distinct" else None
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
                if cast == "distinct":
                    gold = rng.choices(book.names, weights[: len(book.names)])[0]
                else:
                    gold = book.names[k % len(book.names)]
                passage = f"({k + 1}) {SCENES[k % len(SCENES)]}"
                roll = rng.random()
                if roll < book.fame * strength:
                    answer = gold
                elif roll < book.fame * strength + 0.03:
                    answer = None
                elif cast == "distinct":
                    pick = rng.random()
                    if pick < 0.15:  # a well-known book's character, its main characters most often
                        answer = rng.choices(famous_names, famous_weights)[0]
                    else:
                        answer = rng.choice(FIRST) if pick < 0.65 else rng.choice(every_name)
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
