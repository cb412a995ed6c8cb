"""Read-along and reconstruction questions, built with a seed from a book's scene summaries.

**Read-along** (multiple choice), as NarrativeXL builds them. After every ``every`` scenes (a
*checkpoint*, after scene ``c``) the reader is asked which of several scene summaries describes something
in what they have read so far. The true option is the summary of a scene ``s <= c`` drawn at random; its
*retention demand* is the number of words between the end of scene ``s`` and the checkpoint (0 when
``s = c``). The other options are, by the question's kind,

- ``lookahead``: summaries of scenes after the checkpoint (same book, not read yet);
- ``false-summary``: false summaries (same characters and setting, other events) of scenes read so far,
  the true scene's own among them (a distortion of the very scene the true option tells);
- ``other-book``: summaries of other books' scenes summarized by the same model, one from each of as
  many other books drawn at random (a scene drawn at random from anywhere in that book); when both
  books' names are known (``palimpsest reading substitute``), the other book's character names are
  replaced by this book's, so that names give nothing away.

Each question shows ``options - 1`` summaries and, last, "None of the above". In a share of the
questions (``none_share``, by default one in ``options``, so that the last choice is right as often as
any other) the true summary is left out and "None of the above" is the answer (``answer`` is then
None). To rule out every option the reader must remember the whole book read so far, so such a
question's retention demand is that of the first scene (NarrativeXL gives it the same). A checkpoint gets
a question of a kind only where there are wrong options enough for a "None of the above" question (so
that its share does not depend on where in the book it is asked); a kind without them there is skipped,
never padded. Options are drawn and shuffled with a seed that depends on the book, checkpoint and kind,
so adding a kind or a book changes no other question; no two options of a question have the same text.

**Reconstruction** (free form). For ``reconstruction`` scenes drawn with the seed: the false summary,
to be corrected into the true one, once without the scene's text (``reconstruct``: from memory or
prior knowledge of the book) and once with it (``reconstruct-passage``). With hierarchical summaries
(``reading summarize --hierarchical``) the same two questions are built on ``reconstruction`` nodes of
every level above the scenes (up to ``max_level``), each about the stretch of scenes its summary covers
(NarrativeXL's hierarchical reconstruction); their body names the ``level``, the ``node`` and the first
and last scene.

**Variants.** A question set is built on the ``original`` text or on the ``substituted`` one (names
replaced, ``substitution``): then every option, summary and offset is that of the substituted text.

The questions of a build are stored as a *question set* (``reading_question_sets``); building the same
questions again finds the stored set (the fingerprint is a hash of the questions), so runs on it continue.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.probes.reading.names import NameWord
from workbench.probes.reading.scenes import Scene, SceneSet, latest_scene_set
from workbench.probes.reading.substitution import Substitution, apply_edits, get_substitution, substitution_edits
from workbench.probes.reading.summaries import level_group, level_summaries, levels_of, summary_models
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

READ_ALONG_KINDS = ("lookahead", "false-summary", "other-book")
RECONSTRUCTION_KINDS = ("reconstruct", "reconstruct-passage")
VARIANTS = ("original", "substituted")
NONE_OF_THE_ABOVE = "None of the above"


@dataclass(frozen=True)
class QuestionSettings:
    every: int = 5
    options: int = 6
    seed: int = 0
    kinds: tuple[str, ...] = READ_ALONG_KINDS
    none_share: float | None = None
    reconstruction: int = 20
    max_level: int | None = None

    def check(self) -> None:
        if self.every < 1:
            raise UserError("Ask questions at least every scene (--every 1 or more).")
        if self.options < 3:
            raise UserError("A question needs at least three choices: two summaries and 'None of the above'.")
        unknown = [k for k in self.kinds if k not in READ_ALONG_KINDS]
        if unknown:
            raise UserError(f"Unknown question kind(s) {', '.join(unknown)}; choose from {', '.join(READ_ALONG_KINDS)}.")
        if self.none_share is not None and not 0 <= self.none_share <= 1:
            raise UserError("The share of 'None of the above' questions must lie between 0 and 1.")
        if self.reconstruction < 0:
            raise UserError("The number of reconstruction scenes cannot be negative.")
        if self.max_level is not None and self.max_level < 0:
            raise UserError("The highest summary level is 0 (the scenes) or more.")

    @property
    def none_probability(self) -> float:
        return 1 / self.options if self.none_share is None else self.none_share


@dataclass(frozen=True)
class Question:
    key: str
    kind: str
    checkpoint_scene: int | None = None
    checkpoint_char: int | None = None
    checkpoint_word: int | None = None
    scene: int | None = None
    retention_words: int | None = None
    retention_scenes: int | None = None
    options: tuple[str, ...] = ()
    sources: tuple[dict, ...] = ()
    answer: int | None = None
    body: dict = field(default_factory=dict)
    id: int | None = None

    @property
    def read_along(self) -> bool:
        return self.kind in READ_ALONG_KINDS

    @property
    def choices(self) -> int:
        """What the reader chooses from: the options and 'None of the above'."""
        return len(self.options) + 1 if self.read_along else 0

    @property
    def correct_choice(self) -> int | None:
        """0-based index of the right choice among ``choices`` ('None of the above' is the last)."""
        if not self.read_along:
            return None
        return len(self.options) if self.answer is None else self.answer


@dataclass(frozen=True)
class OtherSummary:
    book_id: int
    scene: int
    text: str
    names: tuple[NameWord, ...] = ()


# ---------------------------------------------------------------------------------------------- building
def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def retention(scenes: Sequence[Scene], scene: int, checkpoint: int) -> int:
    """Words read between the end of ``scene`` and the end of ``checkpoint``."""
    return scenes[checkpoint].word_end - scenes[scene].word_end


def checkpoints(scene_count: int, every: int) -> list[int]:
    """The scenes after which questions are asked: every ``every``-th scene."""
    return list(range(every - 1, scene_count, every))


def _distinct(candidates: Iterable[tuple[str, dict]], avoid: set[str]) -> list[tuple[str, dict]]:
    seen = set(avoid)
    found = []
    for text, source in candidates:
        key = _normal(text)
        if text and key not in seen:
            seen.add(key)
            found.append((text, source))
    return found


def borrow_names(text: str, theirs: Sequence[NameWord], ours: Sequence[NameWord], rng: random.Random) -> str:
    """``text`` (about another book) with that book's name words replaced by this book's: given names by
    given names of the same gender where there are, surnames by surnames."""
    if not theirs or not ours:
        return text
    by_kind: dict[str, list[str]] = {}
    for name in ours:
        by_kind.setdefault(_name_kind(name), []).append(name.word)
    mapped = []
    for name in theirs:
        pool = by_kind.get(_name_kind(name)) or by_kind.get("given") or [n.word for n in ours]
        mapped.append(replace(name, replacement=rng.choice(pool)))
    return apply_edits(text, substitution_edits(text, mapped))


def _name_kind(name: NameWord) -> str:
    return name.gender if name.role == "given" and name.gender != "unknown" else name.role


def _other_book_options(rng: random.Random, by_book: dict[int, list[OtherSummary]], needed: int, least: int,
                        avoid: set[str]) -> list[OtherSummary] | None:
    """``needed`` summaries of other books, one from each of ``needed`` books drawn at random (a summary drawn
    at random from anywhere in the book); None when fewer than ``least`` books have a summary to give."""
    usable = {book: [o for o in found if o.text and _normal(o.text) not in avoid] for book, found in by_book.items()}
    books = sorted(book for book, found in usable.items() if found)
    if len(books) < least:
        return None
    chosen, seen = [], set(avoid)
    for book in rng.sample(books, needed):
        left = [o for o in usable[book] if _normal(o.text) not in seen]
        if not left:
            return None
        pick = rng.choice(left)
        seen.add(_normal(pick.text))
        chosen.append(pick)
    return chosen


def _read_along(book_id: int, scenes: Sequence[Scene], summaries: dict[int, tuple[str | None, str | None]],
                others: Sequence[OtherSummary], own_names: Sequence[NameWord], settings: QuestionSettings,
                variant: str) -> list[Question]:
    shown = settings.options - 1
    # a checkpoint gets a question of a kind only where there are wrong options enough for a 'None of the
    # above' question, so that how often 'None of the above' is right does not depend on where it is asked
    least = shown if settings.none_probability > 0 else shown - 1
    by_book: dict[int, list[OtherSummary]] = {}
    for other in others:
        by_book.setdefault(other.book_id, []).append(other)
    questions = []
    for c in checkpoints(len(scenes), settings.every):
        read = [s for s in range(c + 1) if summaries.get(s, (None, None))[0]]
        if not read:
            continue
        for kind in settings.kinds:
            rng = random.Random(f"read-along:{settings.seed}:{book_id}:{c}:{kind}")
            none = rng.random() < settings.none_probability
            true_scene = None if none else rng.choice(read)
            true_text = summaries[true_scene][0] if true_scene is not None else None
            needed = shown if none else shown - 1
            avoid = {_normal(true_text)} if true_text else set()
            if kind == "other-book":
                picked = _other_book_options(rng, by_book, needed, least, avoid)
                if picked is None:
                    continue
                chosen = [(borrow_names(o.text, o.names, own_names, rng),
                           {"source": kind, "scene": o.scene, "book_id": o.book_id,
                            "names_borrowed": bool(o.names and own_names)}) for o in picked]
            else:
                if kind == "lookahead":
                    pool = [(summaries[s][0], {"source": kind, "scene": s})
                            for s in range(c + 1, len(scenes)) if summaries.get(s, (None, None))[0]]
                else:  # false-summary: any scene read so far, the true scene's own distortion included
                    pool = [(summaries[s][1], {"source": kind, "scene": s})
                            for s in range(c + 1) if summaries.get(s, (None, None))[1]]
                pool = _distinct(pool, avoid)
                if len(pool) < least:
                    continue
                chosen = rng.sample(pool, needed)
            if true_text is not None:
                chosen.append((true_text, {"source": "true", "scene": true_scene}))
            rng.shuffle(chosen)
            answer = next((i for i, (_, src) in enumerate(chosen) if src["source"] == "true"), None)
            # 'None of the above' is right only if no option happened anywhere in what was read: its demand
            # is that of the first scene, the whole book so far (NarrativeXL's too)
            about = 0 if true_scene is None else true_scene
            questions.append(Question(
                key=f"b{book_id}-{variant}-c{c}-{kind}", kind=kind, checkpoint_scene=c,
                checkpoint_char=scenes[c].end_char, checkpoint_word=scenes[c].word_end, scene=true_scene,
                retention_words=retention(scenes, about, c), retention_scenes=c - about,
                options=tuple(text for text, _ in chosen), sources=tuple(src for _, src in chosen), answer=answer,
            ))
    return questions


@dataclass(frozen=True)
class SummaryLevel:
    """The summaries of one level above the scenes (hierarchical summaries): node -> (summary, false
    summary); each node joins ``group`` consecutive nodes of the level below."""
    level: int
    group: int
    summaries: dict[int, tuple[str | None, str | None]]


def level_spans(scene_count: int, levels: Sequence[SummaryLevel]) -> dict[int, list[tuple[int, int]]]:
    """level -> for each of its nodes, the first and last scene it covers."""
    spans = {0: [(s, s) for s in range(scene_count)]}
    below = spans[0]
    for level in sorted(levels, key=lambda lv: lv.level):
        if level.level != len(spans):
            break  # a level whose level below is missing covers nothing known
        nodes = math.ceil(len(below) / level.group)
        below = spans[level.level] = [(below[n * level.group][0], below[min((n + 1) * level.group, len(below)) - 1][1])
                                      for n in range(nodes)]
    return spans


def _reconstruction_of(book_id: int, scenes: Sequence[Scene], level: int, spans: Sequence[tuple[int, int]],
                       summaries: dict[int, tuple[str | None, str | None]], settings: QuestionSettings,
                       variant: str) -> list[Question]:
    usable = [n for n, (true, false) in sorted(summaries.items()) if true and false and n < len(spans)]
    rng = random.Random(f"reconstruct:{settings.seed}:{book_id}" + (f":L{level}" if level else ""))
    chosen = sorted(rng.sample(usable, min(settings.reconstruction, len(usable))))
    questions = []
    for n in chosen:
        true, false = summaries[n]
        first, last = spans[n]
        for kind in RECONSTRUCTION_KINDS:
            body: dict[str, Any] = {"false_summary": false, "reference": true}
            if level:
                body.update(level=level, node=n, first_scene=first, last_scene=last)
            if kind == "reconstruct-passage":
                body.update(passage_start=scenes[first].start_char, passage_end=scenes[last].end_char)
            key = f"b{book_id}-{variant}-s{n}-{kind}" if level == 0 else f"b{book_id}-{variant}-L{level}n{n}-{kind}"
            questions.append(Question(key=key, kind=kind, scene=n if level == 0 else None, body=body))
    return questions


def _reconstruction(book_id: int, scenes: Sequence[Scene], summaries: dict[int, tuple[str | None, str | None]],
                    higher: Sequence[SummaryLevel], settings: QuestionSettings, variant: str) -> list[Question]:
    """Reconstruction questions on the scene summaries and, with hierarchical summaries, on each level above
    (up to ``settings.max_level``): ``settings.reconstruction`` nodes of each level drawn with the seed."""
    wanted = [lv for lv in higher if settings.max_level is None or lv.level <= settings.max_level]
    spans = level_spans(len(scenes), wanted)
    questions = _reconstruction_of(book_id, scenes, 0, spans[0], summaries, settings, variant)
    for level in sorted(wanted, key=lambda lv: lv.level):
        if level.level in spans:
            questions += _reconstruction_of(book_id, scenes, level.level, spans[level.level], level.summaries,
                                            settings, variant)
    return questions


def build(book_id: int, scenes: Sequence[Scene], summaries: dict[int, tuple[str | None, str | None]],
          settings: QuestionSettings, *, others: Sequence[OtherSummary] = (), substitution: Substitution | None = None,
          variant: str = "original", higher: Sequence[SummaryLevel] = ()) -> list[Question]:
    """The read-along questions, then the reconstruction questions, of one book (pure: no project).
    ``summaries``: scene -> (summary, false summary), of the original text; ``higher``: the levels of
    hierarchical summaries above the scenes (reconstruction questions only); ``substitution`` is needed
    for the substituted variant and lets other books' names be replaced by this book's."""
    settings.check()
    if variant not in VARIANTS:
        raise UserError(f"The text variant is 'original' or 'substituted', not '{variant}'.")
    if variant == "substituted" and substitution is None:
        raise UserError(f"The names of book {book_id} have not been substituted yet. "
                        "Run 'palimpsest reading substitute' first.")
    own_names = substitution.names if substitution is not None else ()
    questions = _read_along(book_id, scenes, summaries, others, own_names, settings, variant)
    questions += _reconstruction(book_id, scenes, summaries, higher, settings, variant)
    if variant == "substituted":
        questions = [substituted(q, substitution) for q in questions]
    return questions


def substituted(question: Question, substitution: Substitution) -> Question:
    """The question on the substituted text: its texts with the names replaced, its offsets moved."""
    def move(offset: int | None) -> int | None:
        return None if offset is None else substitution.shift(offset)

    body = {k: substitution.substitute(v) if isinstance(v, str) else v for k, v in question.body.items()}
    for key in ("passage_start", "passage_end"):
        if key in body:
            body[key] = move(body[key])
    return replace(question, options=tuple(substitution.substitute(o) for o in question.options),
                   checkpoint_char=move(question.checkpoint_char), body=body)


# ---------------------------------------------------------------------------------------------- storage
@dataclass(frozen=True)
class QuestionSet:
    id: int
    book_id: int | None
    scene_set_id: int | None
    variant: str
    summaries: str
    settings: dict
    origin: str
    created_at: str


def _others(project: "Project", book_id: int, model: str) -> list[OtherSummary]:
    """Scene summaries of ``model`` for every other book (its latest scene set), with that book's names."""
    rows = project.db.execute(
        "SELECT s.book_id, MAX(s.id) FROM reading_scene_sets s WHERE s.book_id <> ? GROUP BY s.book_id", [book_id])
    found = []
    for other_book, set_id in rows.fetchall():
        pairs = level_summaries(project, set_id, model, 0)
        if not pairs:
            continue
        names = get_substitution(project, other_book)
        found += [OtherSummary(other_book, scene, true, names.names if names else ())
                  for scene, (true, _) in pairs.items() if true]
    return found


def higher_levels(project: "Project", scene_set_id: int, model: str, max_level: int | None = None
                  ) -> list[SummaryLevel]:
    """The hierarchical summaries of ``model`` above the scenes (up to ``max_level``), level by level."""
    return [SummaryLevel(level, level_group(project, scene_set_id, model, level),
                         level_summaries(project, scene_set_id, model, level))
            for level in levels_of(project, scene_set_id, model)
            if level >= 1 and (max_level is None or level <= max_level)]


def _fingerprint(questions: Sequence[Question], meta: dict) -> str:
    payload = json.dumps([meta] + [asdict(replace(q, id=None)) for q in questions], sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def build_questions(project: "Project", book_id: int, settings: QuestionSettings | None = None, *,
                    variant: str = "original", summaries_model: str | None = None,
                    scene_set: SceneSet | None = None) -> QuestionSet:
    """Build the book's questions from ``summaries_model``'s scene summaries (the newest model with
    summaries of the book's latest scene set, unless named) and store them; the stored set when exactly
    these questions were built before."""
    settings = settings or QuestionSettings()
    scene_set = scene_set or latest_scene_set(project, book_id)
    models = summary_models(project, scene_set.id)
    if summaries_model is None:
        if not models:
            raise UserError(f"Book {book_id} has no scene summaries yet. Make them with 'palimpsest reading "
                            "summarize' or bring them in with 'palimpsest reading import-summaries'.")
        summaries_model = models[0]
    elif summaries_model not in models:
        raise UserError(f"'{summaries_model}' has made no summaries of book {book_id}'s scenes. "
                        f"Models with summaries: {', '.join(models) or 'none'}.")
    summaries = level_summaries(project, scene_set.id, summaries_model, 0)
    questions = build(book_id, scene_set.scenes, summaries, settings,
                      others=_others(project, book_id, summaries_model) if "other-book" in settings.kinds else (),
                      substitution=get_substitution(project, book_id), variant=variant,
                      higher=higher_levels(project, scene_set.id, summaries_model, settings.max_level))
    if not questions:
        raise UserError(f"No questions could be built for book {book_id}: too few scenes have summaries. "
                        "Summarize more scenes or ask less often.")
    meta = {"variant": variant, "summaries": summaries_model, "scene_set": scene_set.id, **asdict(settings)}
    return store_questions(project, book_id, questions, meta, scene_set_id=scene_set.id, variant=variant,
                           summaries=summaries_model)


def store_questions(project: "Project", book_id: int | None, questions: Sequence[Question], settings: dict, *,
                    scene_set_id: int | None, variant: str, summaries: str, origin: str = "built") -> QuestionSet:
    """Store a question set (or find the identical one stored before)."""
    digest = _fingerprint(questions, settings)
    row = project.db.execute("SELECT id FROM reading_question_sets WHERE fingerprint = ? AND book_id IS ?",
                             [digest, book_id]).fetchone()
    if row is not None:
        return get_question_set(project, row[0])
    db = project.db
    with db.transaction():
        cur = db.execute(
            "INSERT INTO reading_question_sets (book_id, scene_set_id, variant, summaries, settings, fingerprint,"
            " origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [book_id, scene_set_id, variant, summaries, json.dumps(settings, sort_keys=True), digest, origin, now()])
        set_id = cur.lastrowid
        db.conn.executemany(
            "INSERT INTO reading_questions (set_id, position, key, kind, checkpoint_scene, checkpoint_char,"
            " checkpoint_word, scene, retention_words, retention_scenes, options, sources, answer, body)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(set_id, position, q.key, q.kind, q.checkpoint_scene, q.checkpoint_char, q.checkpoint_word, q.scene,
              q.retention_words, q.retention_scenes, json.dumps(list(q.options)), json.dumps(list(q.sources)),
              q.answer, json.dumps(q.body, sort_keys=True)) for position, q in enumerate(questions)])
    return get_question_set(project, set_id)


_SET_COLUMNS = "id, book_id, scene_set_id, variant, summaries, settings, origin, created_at"


def _question_set(row) -> QuestionSet:
    values = list(row)
    values[5] = json.loads(values[5] or "{}")
    return QuestionSet(*values)


def get_question_set(project: "Project", set_id: int) -> QuestionSet:
    row = project.db.execute(f"SELECT {_SET_COLUMNS} FROM reading_question_sets WHERE id = ?", [set_id]).fetchone()
    if row is None:
        raise UserError(f"There is no question set number {set_id} in this project.")
    return _question_set(row)


def latest_question_sets(project: "Project", *, variant: str | None = None, book_ids: Sequence[int] | None = None
                         ) -> list[QuestionSet]:
    """The newest question set of each book (and variant), in book order."""
    sql = (f"SELECT {_SET_COLUMNS} FROM reading_question_sets WHERE id IN (SELECT MAX(id) FROM reading_question_sets"
           " GROUP BY book_id, variant)")
    params: list[Any] = []
    if variant is not None:
        sql += " AND variant = ?"
        params.append(variant)
    if book_ids:
        sql += f" AND book_id IN ({','.join('?' * len(book_ids))})"
        params.extend(book_ids)
    return [_question_set(r) for r in project.db.execute(sql + " ORDER BY book_id, variant", params).fetchall()]


_Q_COLUMNS = ("id, key, kind, checkpoint_scene, checkpoint_char, checkpoint_word, scene, retention_words,"
              " retention_scenes, options, sources, answer, body")


def load_questions(project: "Project", set_id: int, ids: Sequence[int] | None = None) -> list[Question]:
    """The questions of a set, in order (only ``ids``, if given)."""
    rows = project.db.execute(f"SELECT {_Q_COLUMNS} FROM reading_questions WHERE set_id = ? ORDER BY position",
                              [set_id]).fetchall()
    wanted = set(ids) if ids is not None else None
    questions = []
    for (qid, key, kind, cp_scene, cp_char, cp_word, scene, ret_words, ret_scenes, options, sources, answer,
         body) in rows:
        if wanted is not None and qid not in wanted:
            continue
        questions.append(Question(key=key, kind=kind, checkpoint_scene=cp_scene, checkpoint_char=cp_char,
                                  checkpoint_word=cp_word, scene=scene, retention_words=ret_words,
                                  retention_scenes=ret_scenes, options=tuple(json.loads(options)),
                                  sources=tuple(json.loads(sources)), answer=answer, body=json.loads(body), id=qid))
    return questions


def question_count(project: "Project", set_id: int) -> int:
    return project.db.execute("SELECT COUNT(*) FROM reading_questions WHERE set_id = ?", [set_id]).fetchone()[0]


def questions_frame(project: "Project", set_id: int) -> pd.DataFrame:
    """One row per question: id, key, kind, checkpoint, scene, retention demand, choices, answer."""
    rows = [{"question_id": q.id, "key": q.key, "kind": q.kind, "checkpoint_scene": q.checkpoint_scene,
             "scene": q.scene, "level": None if q.read_along else int(q.body.get("level", 0)),
             "retention_words": q.retention_words, "choices": q.choices,
             "answer": q.correct_choice + 1 if q.correct_choice is not None else None,
             "none_of_the_above": q.read_along and q.answer is None}
            for q in load_questions(project, set_id)]
    return pd.DataFrame(rows, columns=["question_id", "key", "kind", "checkpoint_scene", "scene", "level",
                                       "retention_words", "choices", "answer", "none_of_the_above"])


#: why a kind of read-along question may have none (each needs, at its checkpoint, as many wrong options as a
#: 'None of the above' question shows: one fewer than the choices)
KIND_NEEDS = {
    "lookahead": "each needs that many scenes with summaries after its checkpoint",
    "false-summary": "each needs that many false summaries of the scenes read",
    "other-book": "each needs that many other books with summaries by the same model, one option from each",
}


def missing_kinds(kinds: Sequence[str], built: Iterable[str], options: int) -> list[str]:
    """A sentence for each kind asked for of which no question could be built, saying what it needs."""
    found = set(built)
    return [f"No {kind} questions: {KIND_NEEDS[kind].replace('that many', f'{options - 1}', 1)}."
            for kind in kinds if kind in KIND_NEEDS and kind not in found]


def question_counts(project: "Project", set_id: int) -> pd.DataFrame:
    """Questions per kind, with how many have 'None of the above' as answer, the retention demand's median,
    quartiles and range (words), and for reconstruction the summary levels asked about ("0-2")."""
    frame = questions_frame(project, set_id)
    rows = []
    for kind, group in frame.groupby("kind", sort=False):
        demand = group["retention_words"].dropna()
        levels = sorted({int(v) for v in group["level"].dropna()})
        rows.append({"kind": kind, "questions": len(group), "none_of_the_above": int(group["none_of_the_above"].sum()),
                     **({"levels": f"{levels[0]}-{levels[-1]}" if len(levels) > 1 else str(levels[0])}
                        if levels else {}),
                     **({"retention_min": int(demand.min()), "retention_q1": int(demand.quantile(0.25)),
                         "retention_median": int(demand.median()), "retention_q3": int(demand.quantile(0.75)),
                         "retention_max": int(demand.max())} if len(demand) else {})})
    return pd.DataFrame(rows)
