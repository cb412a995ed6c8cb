"""Building a local n-gram index of a reference corpus with infini-gram's own indexer.

Input: text files and folders of them (``.txt`` files are one document each; ``.jsonl`` and
``.jsonl.gz`` files hold one document per line, its text in the field ``text``, as pre-training
samples are usually shipped). Folders are read recursively, in name order; a file that is not text is
skipped and listed, never fatal; a ``.jsonl`` line that is not a JSON object with a 'text' field is
left out and listed by its number (``SourceFile.skipped`` says exactly what of a file was not indexed).

Steps (progress for each; Cancel stops between pieces of text and kills the indexer's processes):

1. tokenize every document (``tokenizing``), a piece of ``PIECE_CHARS`` characters at a time, and
   write the token ids to a scratch file, counting the white-space words of each document (the *n* of
   the chance estimate). Word-level tokens are cut at white space; a model's tokens are joined where
   two overlapping pieces agree (``tokenizing.ids_in_pieces``): either way a document's tokens are those
   of the whole document, and a match across the place where one piece ends is found;
2. write the engine's data files in *shards* of at most ``SHARD_BYTES`` (``tokenized.N``: 16-bit units,
   each document after the separator 0xFFFF; ``offset.N``: where each document starts), cut between
   documents. A document larger than a shard (tens of millions of tokens) is cut into shard-sized parts:
   a match cannot run across such a cut, and ``index.json`` records how many there are (``cuts``);
3. sort each shard's suffix array ``table.N`` with one ``rust_indexing make-part`` (a linear-time
   suffix-array construction, about ``INDEXER_MEMORY_PER_BYTE`` bytes of memory per byte of the shard),
   as many at a time as ``BUILD_MEMORY`` allows. Shards are never merged: the indexer's merge step compares
   suffixes byte by byte up to 100 KB each, and on repeated text (the same novel in several editions) it
   ran for hours. The engine answers over all shards: counts add up, and a longest match is the longest
   in any shard (a match never runs across documents, so nothing is lost between shards).

So memory and time grow with the corpus, not with how it is spread over files: beyond the shards being
sorted, a build holds the text of one document (the file, for a ``.txt``) and a few pieces in work.

The index is built in a scratch folder ``NAME.building`` beside its final place and moved there only when
complete, so a cancelled or failed build leaves nothing half-made. A build holds a lock on a file in that
folder: a folder whose builder is gone (the program was killed) is removed by the next build, and a
folder whose builder is still at work is never touched. The indexer's processes are asked (on Linux) to
die with the program, so a killed build leaves none running. ``index.json`` in the folder says what the
index holds, the size of every file (``manifest``) and a checksum of all that: ``index_files`` checks them
every time the index is opened.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Callable, Iterator, Sequence

import numpy as np

from workbench.errors import CancelledError, UserError
from workbench.probes.leakage.tokenizing import (
    VOCABULARY_FILE,
    IndexTokenizer,
    WordTokenizer,
    ids_in_pieces,
    to_units,
    width_for,
)
from workbench.probes.leakage.wordlevel import count_words, pieces, prepare
from workbench.progress import TaskState

META_FILE = "index.json"
DATA_PREFIX, OFFSET_PREFIX, TABLE_PREFIX = "tokenized", "offset", "table"
DATA_FILE, OFFSET_FILE, TABLE_FILE = "tokenized.0", "offset.0", "table.0"  # the first shard's
TEXT_SUFFIXES = (".txt", ".text", ".md")
LINE_SUFFIXES = (".jsonl", ".jsonl.gz")
DOC_SEPARATOR = b"\xff\xff"
#: rust_indexing's look-ahead (kept for the benchmark that runs the indexer's own three steps)
HACK = 100_000
#: bytes of 16-bit units in one shard of the token file (its suffix array is sorted in one piece)
SHARD_BYTES = 64 << 20
#: characters of a document tokenized at a time
PIECE_CHARS = 1_000_000
#: ``rust_indexing make-part`` needs about this many bytes of memory per byte of the shard it sorts
INDEXER_MEMORY_PER_BYTE = 12
#: how much memory the shards being sorted at the same time may take together (at least one is sorted)
BUILD_MEMORY = 1536 << 20
#: tokens turned into units and written at a time
WRITE_TOKENS = 1 << 20
BUILDING = ".building"
OWNER_FILE = ".builder"
#: a scratch folder without its owner file (left by an older version) counts as abandoned after this long
UNOWNED_GRACE_S = 60.0
MAX_LISTED_LINES = 10
INSTALL_HINT = "Install it with: pip install 'palimpsest-workbench[leakage]' (the infini-gram package)."


def shard_files(shard: int) -> tuple[str, str, str]:
    """The data, offset and suffix-array files of one shard."""
    return f"{DATA_PREFIX}.{shard}", f"{OFFSET_PREFIX}.{shard}", f"{TABLE_PREFIX}.{shard}"


def table_ratio(data_bytes: int) -> int:
    """Bytes per suffix-array entry for a data file of this size (as infini-gram's indexer sizes them)."""
    return max(1, int(np.ceil(np.log2(max(data_bytes, 2)) / 8)))


class DamagedIndex(UserError):
    """An index folder whose files are not what its ``index.json`` says (or that has none that can be read).
    ``detail`` says what is wrong; the message adds where, that nothing is asked of it, and how to rebuild it."""

    def __init__(self, detail: str, folder: Path | None = None, advice: str = ""):
        self.detail, self.folder = detail, folder
        where = f"The n-gram index in {folder}" if folder is not None else "The n-gram index"
        super().__init__(f"{where} is damaged: {detail}. Palimpsest will not query it. "
                         + (advice or "Build the index again (palimpsest corpus index)."))


@dataclass
class SourceFile:
    path: str
    bytes: int
    documents: int = 0  # documents of this file that were indexed
    tokens: int = 0
    skipped: str = ""  # what of the file was not indexed, and why ("" when all of it was)


@dataclass
class IndexInfo:
    """What ``index.json`` records about a built index."""

    tokenizer: str
    width: int  # 16-bit units per token
    documents: int
    tokens: int
    words: int  # white-space separated words, the n of 1 - (1 - p)^n
    vocabulary: int  # token types (word level) or the tokenizer's vocabulary size
    size_bytes: int
    files: list[SourceFile] = field(default_factory=list)
    engine: str = ""
    built_at: str = ""
    seconds: float = 0.0
    #: documents in each shard's offset file (a document cut in parts counts once per part); empty for
    #: indexes built before shards, which have one (``tokenized.0``)
    shard_documents: list[int] = field(default_factory=list)
    cuts: int = 0  # places where a document larger than a shard was cut (a match cannot run across one)
    manifest: dict[str, int] = field(default_factory=dict)  # every file of the index but this one: its size
    checksum: str = ""  # of everything above (``seal``)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    def content_checksum(self) -> str:
        fields = asdict(self)
        fields.pop("checksum")
        canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(canonical.encode("ascii")).hexdigest()

    def seal(self) -> None:
        self.checksum = self.content_checksum()

    @property
    def shards(self) -> int:
        return max(1, len(self.shard_documents))

    @classmethod
    def read(cls, folder: Path) -> "IndexInfo":
        """``index.json`` of ``folder``; ``DamagedIndex`` when it cannot be read as one."""
        try:
            data = json.loads((Path(folder) / META_FILE).read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise TypeError("it is not a JSON object")
            files = data.get("files", [])
            if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
                raise TypeError("its list of files is not a list of objects")
            data["files"] = [SourceFile(**f) for f in files]
            info = cls(**data)
        except FileNotFoundError:
            raise DamagedIndex(f"its {META_FILE} is missing") from None
        except (OSError, UnicodeDecodeError, ValueError, TypeError) as exc:
            reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise DamagedIndex(f"its {META_FILE} cannot be read ({reason})") from None
        problem = info._type_problem()
        if problem:
            raise DamagedIndex(f"its {META_FILE} cannot be read ({problem})")
        return info

    def _type_problem(self) -> str:
        def count(value) -> bool:
            return isinstance(value, int) and not isinstance(value, bool) and value >= 0

        for name in ("documents", "tokens", "words", "vocabulary", "size_bytes", "cuts"):
            if not count(getattr(self, name)):
                return f"'{name}' is not a whole number"
        if self.width not in (1, 2) or isinstance(self.width, bool):
            return "'width' is neither 1 nor 2"
        if not isinstance(self.tokenizer, str) or not self.tokenizer:
            return "'tokenizer' is not a name"
        if not isinstance(self.shard_documents, list) or not all(count(n) for n in self.shard_documents):
            return "'shard_documents' is not a list of whole numbers"
        if not isinstance(self.manifest, dict) or not all(isinstance(k, str) and count(v)
                                                          for k, v in self.manifest.items()):
            return "'manifest' is not a list of file sizes"
        if not isinstance(self.checksum, str):
            return "'checksum' is not text"
        return ""


def engine_program() -> Path:
    """infini-gram's indexer program, shipped inside its wheel."""
    try:
        import infini_gram
    except ImportError:
        raise UserError(f"The n-gram engine is not installed. {INSTALL_HINT}") from None
    program = Path(infini_gram.__file__).parent / "rust_indexing"
    if not program.exists():
        raise UserError(f"The installed infini-gram has no indexer program ({program}). Reinstall it: {INSTALL_HINT}")
    return program


def engine_version() -> str:
    from importlib.metadata import version

    return f"infini-gram {version('infini-gram')}"


# ---------------------------------------------------------------------------------------------- input
def source_files(paths: Sequence[str | Path]) -> list[Path]:
    """Every corpus file under ``paths`` (files as given, folders recursively, in name order)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists():
            raise UserError(f"There is no file or folder at {path}. Check the path.")
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.is_file() and _readable_kind(p)))
        else:
            found.append(path)
    unique = list(dict.fromkeys(p.resolve() for p in found))
    if not unique:
        raise UserError("No corpus files were found there: an index is built from .txt files or .jsonl files "
                        "(one document per line, its text in the field 'text').")
    return unique


def _readable_kind(path: Path) -> bool:
    name = path.name.lower()
    return name.endswith(TEXT_SUFFIXES) or name.endswith(LINE_SUFFIXES)


@dataclass
class Reading:
    """What reading one corpus file met: lines left out, and where reading stopped early."""

    bad_lines: list[int] = field(default_factory=list)  # the first MAX_LISTED_LINES of them
    bad_count: int = 0
    lines: int = 0  # lines read so far
    stopped: str = ""  # why the rest of the file could not be read

    def bad_line(self, number: int) -> None:
        self.bad_count += 1
        if len(self.bad_lines) < MAX_LISTED_LINES:
            self.bad_lines.append(number)

    def describe(self, name: str, indexed: int) -> str:
        """What of the file was not indexed, and what was ("" when all of it was)."""
        notes = []
        if self.bad_count == 1:
            notes.append(f"Line {self.bad_lines[0]} of {name} is not a JSON object with a 'text' field and was left out")
        elif self.bad_count:
            listed = ", ".join(str(n) for n in self.bad_lines) + (", …" if self.bad_count > len(self.bad_lines) else "")
            notes.append(f"{self.bad_count:,} lines of {name} (lines {listed}) are not JSON objects with a 'text' field "
                         "and were left out")
        if self.stopped:
            notes.append(f"{name} could not be read past line {self.lines:,} ({self.stopped}), so the rest of it was "
                         "not indexed")
        if not notes:
            return ""
        done = (f"{indexed:,} document{'s' if indexed != 1 else ''} of it {'were' if indexed != 1 else 'was'} indexed"
                if indexed else "nothing of it was indexed")
        return "; ".join(notes) + f"; {done}."


def documents(path: Path, reading: Reading | None = None) -> Iterator[str]:
    """The documents of one corpus file. ``UserError`` if it cannot be read as text; a ``.jsonl`` line that
    is not a JSON object with a 'text' field is noted in ``reading`` and passed over (without ``reading``:
    ``UserError``), and a file that cannot be read to its end stops with its reason in ``reading``."""
    from workbench.corpus.decode import decode_text

    name = path.name.lower()
    if name.endswith(LINE_SUFFIXES):
        opener = gzip.open if name.endswith(".gz") else open
        strict = reading is None
        reading = Reading() if reading is None else reading
        try:
            with opener(path, "rt", encoding="utf-8") as handle:
                for number, line in enumerate(handle, start=1):
                    reading.lines = number
                    if not line.strip():
                        continue
                    try:
                        text = json.loads(line)["text"]
                    except (ValueError, KeyError, TypeError, IndexError):
                        if strict:
                            raise UserError(f"Line {number} of {path.name} is not a JSON object with a 'text' field.") from None
                        reading.bad_line(number)
                        continue
                    if not isinstance(text, str):
                        if strict:
                            raise UserError(f"Line {number} of {path.name} is not a JSON object with a 'text' field.")
                        reading.bad_line(number)
                        continue
                    if text.strip():
                        yield text
        except (OSError, UnicodeDecodeError, EOFError, zlib.error) as exc:
            reason = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
            if not reading.lines:
                raise UserError(f"{path.name} could not be read ({reason}).") from None
            reading.stopped = reason
        return
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path.name} could not be read ({exc}).") from None
    text = decode_text(data, path.name)
    del data
    if text.strip():
        yield text


# ---------------------------------------------------------------------------------------------- building
def build_index(
    paths: Sequence[str | Path],
    folder: Path,
    tokenizer: IndexTokenizer,
    state: TaskState | None = None,
    *,
    cpus: int | None = None,
    shard_bytes: int = SHARD_BYTES,
    piece_chars: int = PIECE_CHARS,
) -> IndexInfo:
    """Index the corpus files under ``paths`` into ``folder`` (which must not exist yet)."""
    state = state or TaskState()
    program = engine_program()
    folder = Path(folder)
    if folder.exists():
        raise UserError(f"{folder} already exists. Choose another name for the corpus, or remove the old index first.")
    files = source_files(paths)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        clear_abandoned_builds(folder.parent)
        scratch = folder.with_name(folder.name + BUILDING)
        owner = _claim(scratch)
    except OSError as exc:
        raise _not_written(folder, exc) from None
    started = time.monotonic()
    try:
        cpus = cpus or os.cpu_count() or 1
        info, lengths = _tokenize_all(files, scratch, tokenizer, state, cpus, piece_chars)
        state.progress(0, 1, "Writing the token file", force=True)
        sizes = _write_shards(scratch, lengths, info, shard_bytes)
        _sort_shards(program, scratch, sizes, state, cpus)
        info.engine = engine_version()
        from workbench.project import now

        info.built_at = now()
        info.seconds = round(time.monotonic() - started, 3)
        _release(owner, scratch)
        owner = None
        info.manifest = {p.name: p.stat().st_size for p in sorted(scratch.iterdir()) if p.is_file()}
        info.size_bytes = sum(info.manifest.values())
        info.seal()
        (scratch / META_FILE).write_text(info.to_json(), encoding="utf-8")
        scratch.rename(folder)
    except BaseException as exc:
        if owner is not None:
            _release(owner, scratch)
        shutil.rmtree(scratch, ignore_errors=True)
        if isinstance(exc, OSError):
            raise _not_written(folder, exc) from None
        raise
    state.progress(1, 1, "Index ready", force=True)
    return info


def _not_written(folder: Path, exc: OSError) -> UserError:
    reason = exc.strerror or type(exc).__name__
    return UserError(f"The index could not be written in {folder.parent} ({reason}). Check that there is free disk "
                     "space there and that the folder can be written to, then build the index again.")


# ---- the scratch folder and its owner ---------------------------------------------------------------
try:
    import fcntl
except ImportError:  # pragma: no cover - Windows, where infini-gram's indexer does not run
    fcntl = None  # type: ignore[assignment]


def _claim(scratch: Path) -> IO[str]:
    """Make the scratch folder and hold the lock that says its build is alive."""
    try:
        scratch.mkdir()
    except FileExistsError:
        if build_in_progress(scratch):
            raise UserError(f"Another build of this corpus is under way ({scratch.name}), in this program or another. "
                            "Wait for it to finish (or stop it), then try again.") from None
        shutil.rmtree(scratch, ignore_errors=True)
        try:
            scratch.mkdir()
        except FileExistsError:
            raise UserError(f"Another build of this corpus has just started ({scratch.name}). Wait for it to "
                            "finish (or stop it), then try again.") from None
    handle = open(scratch / OWNER_FILE, "w", encoding="utf-8")  # noqa: SIM115 -- held (and locked) for the whole build
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    if fcntl is not None:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise UserError(f"Another build of this corpus is under way ({scratch.name}). Wait for it to finish, "
                            "then try again.") from None
    return handle


def _release(owner: IO[str], scratch: Path) -> None:
    owner.close()  # lets go of the lock
    (scratch / OWNER_FILE).unlink(missing_ok=True)


def build_in_progress(scratch: Path) -> bool:
    """Whether a live build holds this scratch folder (its owner file is locked)."""
    owner = scratch / OWNER_FILE
    try:
        handle = open(owner, "r+", encoding="utf-8")  # noqa: SIM115 -- closed below, after the lock test
    except FileNotFoundError:
        try:  # just made by a build that has not written its owner file yet, or left by an older version
            return time.time() - scratch.stat().st_mtime < UNOWNED_GRACE_S
        except OSError:
            return False
    except OSError:
        return True  # cannot tell: leave it alone
    with handle:
        if fcntl is None:  # pragma: no cover
            return True
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        return False  # closing the file lets go of the lock just taken


def clear_abandoned_builds(parent: Path) -> list[Path]:
    """Remove the scratch folders under ``parent`` whose builds are gone (a program that was killed)."""
    removed = []
    for scratch in sorted(Path(parent).glob("*" + BUILDING)):
        if scratch.is_dir() and not build_in_progress(scratch):
            shutil.rmtree(scratch, ignore_errors=True)
            removed.append(scratch)
    return removed


# ---- tokenizing -------------------------------------------------------------------------------------
def _tokenize_all(files: list[Path], scratch: Path, tokenizer: IndexTokenizer, state: TaskState,
                  cpus: int, piece_chars: int) -> tuple[IndexInfo, list[int]]:
    """Tokenize every document, several pieces at a time in threads (the array work releases Python's lock);
    the vocabulary numbers their tokens in document order, so ids do not depend on the threads. Returns the
    index's description (without its shards) and the number of tokens of each document."""
    total_bytes = sum(p.stat().st_size for p in files) or 1
    done_bytes = 0
    records: list[SourceFile] = []
    lengths: list[int] = []
    words = 0
    ids_path = scratch / "ids.scratch"
    grow = isinstance(tokenizer, WordTokenizer)
    if grow:
        work: Callable = prepare
    else:
        def work(text: str):
            ids = ids_in_pieces(tokenizer, text, piece_chars)
            return ids, sum(count_words(p) for p in pieces(text, piece_chars))
    pending: deque = deque()  # (record, document number, future) in document order, across files

    def take_one() -> None:
        nonlocal words
        record, number, future = pending.popleft()
        if grow:
            spans = tokenizer.vocabulary.assign(future.result(), grow=True)  # type: ignore[attr-defined]
            ids, count = spans.ids, spans.words
        else:
            ids, count = future.result()
        ids_out.write(np.asarray(ids).astype(np.uint32).tobytes())
        lengths[number] += int(ids.size)
        record.tokens += int(ids.size)
        words += count

    with open(ids_path, "wb") as ids_out, ThreadPoolExecutor(max_workers=max(1, cpus)) as pool:
        try:
            for path in files:
                state.check()
                record = SourceFile(str(path), path.stat().st_size)
                records.append(record)
                reading = Reading()
                try:
                    for text in documents(path, reading):
                        state.check()
                        record.documents += 1
                        lengths.append(0)
                        # word-level tokens never hold white space: cut there, the pieces' tokens are the text's
                        for piece in (pieces(text, piece_chars) if grow else (text,)):
                            pending.append((record, len(lengths) - 1, pool.submit(work, piece)))
                            while len(pending) > 2 * cpus:
                                take_one()
                        del text
                except UserError as exc:
                    record.skipped = str(exc)
                else:
                    record.skipped = reading.describe(path.name, record.documents)
                done_bytes += record.bytes
                state.progress(done_bytes, total_bytes, f"Reading {path.name}")
            while pending:
                take_one()
        finally:
            for _, _, future in pending:
                future.cancel()
    if not lengths:
        raise UserError("None of the files held any text to index. " + "; ".join(r.skipped for r in records if r.skipped))
    vocabulary = tokenizer.vocabulary_size()
    width = width_for(vocabulary)
    if grow:
        tokenizer.vocabulary.save(scratch / VOCABULARY_FILE)  # type: ignore[attr-defined]
    info = IndexInfo(tokenizer=tokenizer.spec, width=width, documents=len(lengths), tokens=sum(lengths), words=words,
                     vocabulary=vocabulary, size_bytes=0, files=records)
    return info, lengths


# ---- the token files --------------------------------------------------------------------------------
class _ShardWriter:
    """Writes documents into ``tokenized.N`` / ``offset.N``, starting the next shard when asked."""

    def __init__(self, scratch: Path, width: int):
        self.scratch, self.width = scratch, width
        self.sizes: list[int] = []
        self.documents: list[int] = []
        self._data: IO[bytes] | None = None
        self._offsets: list[int] = []
        self.units = 0

    def start(self) -> None:
        self.close()
        self._data = open(self.scratch / shard_files(len(self.sizes))[0], "wb")  # noqa: SIM115 -- the writer holds it across calls; closed by close()
        self._offsets, self.units = [], 0

    def document(self, ids: np.ndarray) -> None:
        assert self._data is not None
        self._offsets.append(self.units * 2)
        self._data.write(DOC_SEPARATOR)
        self.units += 1
        for start in range(0, ids.size, WRITE_TOKENS):
            units = to_units(np.asarray(ids[start : start + WRITE_TOKENS], dtype=np.int64), self.width)
            self._data.write(units.tobytes())
            self.units += units.size

    def close(self) -> None:
        if self._data is None:
            return
        self._data.close()
        self._data = None
        np.asarray(self._offsets, dtype=np.uint64).tofile(self.scratch / shard_files(len(self.sizes))[1])
        self.sizes.append(self.units * 2)
        self.documents.append(len(self._offsets))


def _write_shards(scratch: Path, lengths: list[int], info: IndexInfo, shard_bytes: int) -> list[int]:
    """Token ids (the scratch file) -> the engine's data and offset files, shard by shard; records the shards
    in ``info`` and returns the size of each shard's data file."""
    ids_path = scratch / "ids.scratch"
    ids = np.memmap(ids_path, dtype=np.uint32, mode="r") if ids_path.stat().st_size else np.zeros(0, np.uint32)
    width = info.width
    limit = max(shard_bytes // 2, 1 + width)  # units a shard may hold
    most = (limit - 1) // width  # tokens of a document (part) that fill a shard
    writer = _ShardWriter(scratch, width)
    writer.start()
    start = cuts = 0
    for length in lengths:
        parts = [most] * (length // most) + ([length % most] if length % most or length == 0 else [])
        cuts += len(parts) - 1
        for part in parts:
            if writer.units and writer.units + 1 + part * width > limit:
                writer.start()
            writer.document(ids[start : start + part])
            start += part
    writer.close()
    del ids
    ids_path.unlink()
    info.shard_documents, info.cuts = writer.documents, cuts
    return writer.sizes


# ---- the suffix arrays ------------------------------------------------------------------------------
def _sort_shards(program: Path, scratch: Path, sizes: list[int], state: TaskState, cpus: int) -> None:
    """Each shard's suffix array, by one ``make-part`` over the whole shard (16-bit units), a few at a time."""
    at_once = max(1, min(cpus, BUILD_MEMORY // max(1, INDEXER_MEMORY_PER_BYTE * max(sizes))))
    jobs = []
    for shard, size in enumerate(sizes):
        data, _, table = shard_files(shard)
        parts = scratch / f"parts.{shard}"
        parts.mkdir()

        def finish(parts: Path = parts, size: int = size, table: str = table) -> None:
            (parts / f"0-{size}").rename(scratch / table)
            parts.rmdir()

        jobs.append(([str(program), "make-part", "--data-file", str(scratch / data), "--parts-dir", str(parts),
                      "--start-byte", "0", "--end-byte", str(size), "--ratio", str(table_ratio(size)),
                      "--token-width", "2"], finish))
    label = "Sorting the corpus" if len(sizes) == 1 else f"Sorting the corpus ({len(sizes)} parts)"
    state.progress(0, len(jobs), label, force=True)
    _run_indexer(jobs, state, at_once, label)
    state.progress(len(jobs), len(jobs), "Index written", force=True)


def _die_with_parent() -> Callable[[], None] | None:
    """A function for ``Popen(preexec_fn=...)`` that makes the child die when this process does (Linux), so a
    killed build leaves no indexer running; None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def arrange() -> None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the line above: go too
            os._exit(1)

    return arrange


def _run_indexer(jobs: list[tuple[list[str], Callable[[], None]]], state: TaskState, at_once: int,
                 label: str) -> None:
    """Run the indexer's processes, ``at_once`` at a time; ``finish`` of each when it succeeds. Cancel kills
    them; a failure becomes a plain message."""
    waiting = deque(jobs)
    running: list[tuple[subprocess.Popen, IO[bytes], Callable[[], None]]] = []
    done = 0
    try:
        while waiting or running:
            while waiting and len(running) < at_once:
                command, finish = waiting.popleft()
                errors = tempfile.TemporaryFile()  # noqa: SIM115 -- read and closed when its process ends
                running.append((subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors,
                                                 preexec_fn=_die_with_parent()), errors, finish))
            time.sleep(0.05)
            if state.cancelled:
                raise CancelledError("Stopped at your request.")
            for item in [r for r in running if r[0].poll() is not None]:
                running.remove(item)
                process, errors, finish = item
                if process.returncode != 0:
                    errors.seek(0)
                    detail = errors.read()[-4000:].decode("utf-8", "replace").strip().splitlines()
                    errors.close()
                    raise UserError("The n-gram indexer stopped with an error" + (f" ({detail[-1]})" if detail else "")
                                    + ". Check that there is free disk space and memory, then build the index again.")
                errors.close()
                finish()
                done += 1
                state.progress(done, len(jobs), label)
    finally:
        for process, errors, _ in running:
            if process.poll() is None:
                process.kill()
                process.wait()
            errors.close()


def humanize_bytes(size: int) -> str:
    if size <= 0:
        return "0 B"
    units = ["B", "KB", "MB", "GB", "TB"]
    power = min(int(math.log(size, 1024)), len(units) - 1)
    return f"{size / 1024 ** power:.1f} {units[power]}" if power else f"{size} B"
