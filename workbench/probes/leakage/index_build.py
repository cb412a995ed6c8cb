"""Building a local n-gram index of a reference corpus with infini-gram's own indexer.

Input: text files and folders of them (``.txt`` files are one document each; ``.jsonl`` and
``.jsonl.gz`` files hold one document per line, its text in the field ``text``, as pre-training
samples are usually shipped). Folders are read recursively, in name order; a file that is not text is
skipped and listed, never fatal.

Steps (progress for each; Cancel stops between documents and kills the indexer's processes):

1. tokenize every document (``tokenizing``) and write the token ids to a scratch file, counting the
   white-space words of each document (the *n* of the chance estimate);
2. write the engine's data file ``tokenized.0`` (16-bit units, each document after the separator
   0xFFFF) and ``offset.0`` (where each document starts);
3. build the suffix array ``table.0`` with infini-gram's ``rust_indexing`` program, in the same three
   steps its ``indexing.py`` runs (``make-part`` in parallel, ``merge``, ``concat``).

The index is built in a scratch folder beside its final place and moved there only when complete, so
a cancelled or failed build leaves nothing half-made. ``index.json`` in the folder says what it holds.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import subprocess
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from workbench.errors import CancelledError, UserError
from workbench.probes.leakage.tokenizing import VOCABULARY_FILE, IndexTokenizer, WordTokenizer, to_units, width_for
from workbench.probes.leakage.wordlevel import count_words, prepare
from workbench.progress import TaskState

META_FILE = "index.json"
DATA_FILE, OFFSET_FILE, TABLE_FILE = "tokenized.0", "offset.0", "table.0"
TEXT_SUFFIXES = (".txt", ".text", ".md")
LINE_SUFFIXES = (".jsonl", ".jsonl.gz")
DOC_SEPARATOR = b"\xff\xff"
# rust_indexing reads this many bytes past a part's end so that suffixes near the cut sort correctly
HACK = 100_000
MIN_PART_BYTES = 1 << 20
INSTALL_HINT = "Install it with: pip install 'palimpsest-workbench[leakage]' (the infini-gram package)."


@dataclass
class SourceFile:
    path: str
    bytes: int
    documents: int = 0
    tokens: int = 0
    skipped: str = ""


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

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def read(cls, folder: Path) -> "IndexInfo":
        data = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
        data["files"] = [SourceFile(**f) for f in data.get("files", [])]
        return cls(**data)


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


def documents(path: Path) -> Iterator[str]:
    """The documents of one corpus file; ``UserError`` if it cannot be read as text."""
    from workbench.corpus.decode import decode_text

    name = path.name.lower()
    if name.endswith(LINE_SUFFIXES):
        opener = gzip.open if name.endswith(".gz") else open
        try:
            with opener(path, "rt", encoding="utf-8") as handle:
                for number, line in enumerate(handle, start=1):
                    if not line.strip():
                        continue
                    try:
                        text = json.loads(line)["text"]
                    except (ValueError, KeyError, TypeError):
                        raise UserError(f"Line {number} of {path.name} is not a JSON object with a 'text' field.") from None
                    if isinstance(text, str) and text.strip():
                        yield text
        except (OSError, UnicodeDecodeError, EOFError) as exc:
            raise UserError(f"{path.name} could not be read ({exc}).") from None
        return
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path.name} could not be read ({exc}).") from None
    text = decode_text(data, path.name)
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
) -> IndexInfo:
    """Index the corpus files under ``paths`` into ``folder`` (which must not exist yet)."""
    state = state or TaskState()
    program = engine_program()
    folder = Path(folder)
    if folder.exists():
        raise UserError(f"{folder} already exists. Choose another name for the corpus, or remove the old index first.")
    files = source_files(paths)
    scratch = folder.with_name(folder.name + ".building")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    started = time.monotonic()
    try:
        cpus = cpus or os.cpu_count() or 1
        info = _tokenize_all(files, scratch, tokenizer, state, cpus)
        _build_suffix_array(program, scratch, info.width, state, cpus)
        info.size_bytes = sum(p.stat().st_size for p in scratch.iterdir())
        info.engine = engine_version()
        from workbench.project import now

        info.built_at = now()
        info.seconds = round(time.monotonic() - started, 3)
        (scratch / META_FILE).write_text(info.to_json(), encoding="utf-8")
        scratch.rename(folder)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    state.progress(1, 1, "Index ready", force=True)
    return info


def _tokenize_all(files: list[Path], scratch: Path, tokenizer: IndexTokenizer, state: TaskState,
                  cpus: int) -> IndexInfo:
    """Tokenize every document, several at a time in threads (the array work releases Python's lock); the
    vocabulary numbers their tokens in document order, so ids do not depend on the threads."""
    total_bytes = sum(p.stat().st_size for p in files) or 1
    done_bytes = 0
    records: list[SourceFile] = []
    lengths: list[int] = []
    words = 0
    ids_path = scratch / "ids.scratch"
    grow = isinstance(tokenizer, WordTokenizer)
    work = prepare if grow else (lambda text: (tokenizer.encode(text).ids, count_words(text)))
    pending: deque = deque()  # (record, future) in document order, across files

    def take_one() -> None:
        nonlocal words
        record, future = pending.popleft()
        if grow:
            spans = tokenizer.vocabulary.assign(future.result(), grow=True)  # type: ignore[attr-defined]
            ids, count = spans.ids, spans.words
        else:
            ids, count = future.result()
        ids_out.write(ids.astype(np.uint32).tobytes())
        lengths.append(int(ids.size))
        record.documents += 1
        record.tokens += int(ids.size)
        words += count

    with open(ids_path, "wb") as ids_out, ThreadPoolExecutor(max_workers=max(1, cpus)) as pool:
        try:
            for path in files:
                state.check()
                record = SourceFile(str(path), path.stat().st_size)
                records.append(record)
                try:
                    for text in documents(path):
                        state.check()
                        pending.append((record, pool.submit(work, text)))
                        while len(pending) > 2 * cpus:
                            take_one()
                except UserError as exc:
                    record.skipped = str(exc)
                done_bytes += record.bytes
                state.progress(done_bytes, total_bytes, f"Reading {path.name}")
            while pending:
                take_one()
        finally:
            for _, future in pending:
                future.cancel()
    if not lengths:
        raise UserError("None of the files held any text to index. " + "; ".join(r.skipped for r in records if r.skipped))
    vocabulary = tokenizer.vocabulary_size()
    width = width_for(vocabulary)
    state.progress(0, 1, "Writing the token file", force=True)
    _write_data(ids_path, lengths, width, scratch)
    ids_path.unlink()
    if grow:
        tokenizer.vocabulary.save(scratch / VOCABULARY_FILE)  # type: ignore[attr-defined]
    return IndexInfo(tokenizer=tokenizer.spec, width=width, documents=len(lengths), tokens=sum(lengths), words=words,
                     vocabulary=vocabulary, size_bytes=0, files=records)


def _write_data(ids_path: Path, lengths: list[int], width: int, scratch: Path) -> None:
    """Token ids (scratch file) -> the engine's data file and document offsets."""
    ids = np.memmap(ids_path, dtype=np.uint32, mode="r") if ids_path.stat().st_size else np.zeros(0, np.uint32)
    offsets = np.zeros(len(lengths), np.uint64)
    position = 0
    start = 0
    with open(scratch / DATA_FILE, "wb") as data:
        for number, length in enumerate(lengths):
            offsets[number] = position
            units = to_units(np.asarray(ids[start : start + length], dtype=np.int64), width)
            data.write(DOC_SEPARATOR)
            data.write(units.tobytes())
            position += len(DOC_SEPARATOR) + units.nbytes
            start += length
    del ids
    offsets.tofile(scratch / OFFSET_FILE)


def _build_suffix_array(program: Path, scratch: Path, width: int, state: TaskState, cpus: int) -> None:
    """infini-gram's three indexing steps, as its ``indexing.py`` runs them (16-bit units)."""
    data = scratch / DATA_FILE
    size = data.stat().st_size
    token_width = 2
    ratio = int(np.ceil(np.log2(size) / 8))
    parts_dir, merged_dir = scratch / "parts", scratch / "merged"
    parts_dir.mkdir()
    # Parts much smaller than the look-ahead make the indexer's merge write fewer files than its concat
    # step expects, so small corpora are sorted in one piece.
    jobs = max(1, min(cpus, size // MIN_PART_BYTES))
    part = size // jobs
    part += (token_width - part % token_width) % token_width
    common = ["--ratio", str(ratio), "--token-width", str(token_width)]
    state.progress(0, 3, "Sorting the corpus (1 of 3)", force=True)
    _run_parallel([[str(program), "make-part", "--data-file", str(data), "--parts-dir", str(parts_dir),
                    "--start-byte", str(i * part), "--end-byte", str(min((i + 1) * part + HACK, size)), *common]
                   for i in range(jobs) if i * part < size], state)
    merged_dir.mkdir()
    state.progress(1, 3, "Merging (2 of 3)", force=True)
    _run_parallel([[str(program), "merge", "--data-file", str(data), "--parts-dir", str(parts_dir),
                    "--merged-dir", str(merged_dir), "--num-threads", str(jobs), "--hacksize", str(HACK), *common]],
                  state)
    shutil.rmtree(parts_dir)
    state.progress(2, 3, "Writing the index (3 of 3)", force=True)
    _run_parallel([[str(program), "concat", "--data-file", str(data), "--merged-dir", str(merged_dir),
                    "--merged-file", str(scratch / TABLE_FILE), "--num-threads", str(jobs), *common]], state)
    shutil.rmtree(merged_dir)
    state.progress(3, 3, "Index written", force=True)


def _run_parallel(commands: list[list[str]], state: TaskState) -> None:
    """Run the indexer's processes together; Cancel kills them. A failure becomes a plain message."""
    processes = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for c in commands]
    try:
        while any(p.poll() is None for p in processes):
            if state.cancelled:
                raise CancelledError("Stopped at your request.")
            time.sleep(0.05)
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait()
    failed = [p for p in processes if p.returncode != 0]
    if failed:
        detail = (failed[0].stderr.read() or b"").decode("utf-8", "replace").strip().splitlines()
        for p in processes:
            p.stderr.close()
        raise UserError("The n-gram indexer stopped with an error" + (f" ({detail[-1]})" if detail else "") +
                        ". Check that there is free disk space beside the project, then build the index again.")
    for p in processes:
        p.stderr.close()


def size_on_disk(folder: Path) -> int:
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


def humanize_bytes(size: int) -> str:
    if size <= 0:
        return "0 B"
    units = ["B", "KB", "MB", "GB", "TB"]
    power = min(int(math.log(size, 1024)), len(units) - 1)
    return f"{size / 1024 ** power:.1f} {units[power]}" if power else f"{size} B"
