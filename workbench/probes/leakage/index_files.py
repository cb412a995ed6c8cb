"""A local index's files: checked against ``index.json`` every time it is opened, and shown to the engine.

``verified_info(folder)`` reads ``index.json`` and refuses (``DamagedIndex``) an index that is not what it
says, before the engine ever sees it: a truncated suffix array answered "no overlap" where there was one,
a truncated token file took the whole program down, and a garbled ``index.json`` ended in a traceback.
It checks

- the checksum ``index.json`` carries of its own content (an edited or half-written description);
- that every file its manifest names is there, at the size written;
- that the sizes fit together as the engine needs them to: a shard's token file holds a separator and the
  units of every document (2 bytes each), its offset file 8 bytes per document, its suffix array one entry
  of ``table_ratio`` bytes per unit; the word-level vocabulary has one line per token type;
- a sample of suffix-array entries and document offsets: each must point inside its token file (garbage
  there would make the engine read outside it).

Indexes built before the manifest (one shard, no checksum) get the same size checks, from the counts in
their ``index.json``.

``engine_view(folder, names)``: infini-gram's engine finds an index's files by looking for the words
"tokenized", "table", "offset" (and "metadata", "metaoff", "unigram") anywhere in their *full path*, so
an index in a folder called "Timetables" handed it every file as a suffix array and it crashed. The engine
is therefore opened on a private folder of links named exactly as it expects, in a place whose path holds
none of those words, and the links are removed once it has mapped the files.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from workbench.errors import UserError
from workbench.probes.leakage.index_build import (
    DOC_SEPARATOR,
    META_FILE,
    DamagedIndex,
    IndexInfo,
    shard_files,
    table_ratio,
)
from workbench.probes.leakage.tokenizing import VOCABULARY_FILE, WORD

#: words infini-gram's engine looks for in a file's path to tell what the file is
ENGINE_WORDS = ("tokenized", "table", "offset", "metadata", "metaoff", "unigram")
#: suffix-array entries and document offsets read from each shard to see that they point inside it
SAMPLE = 2048


def verified_info(folder: Path) -> IndexInfo:
    """``index.json`` of the index in ``folder``, once its files have been checked against it."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UserError(f"The index folder {folder} is missing or incomplete. Build the corpus index again "
                        "(palimpsest corpus index), or move the folder back beside the project.")
    try:
        return _verified(folder)
    except DamagedIndex as exc:
        raise DamagedIndex(exc.detail, folder) from None
    except OSError as exc:  # a file that vanished or cannot be read while it was being checked
        raise DamagedIndex(f"its files cannot be read ({exc.strerror or type(exc).__name__})", folder) from None


def _verified(folder: Path) -> IndexInfo:
    info = IndexInfo.read(folder)
    if info.checksum or info.manifest:
        if info.checksum != info.content_checksum():
            raise DamagedIndex(f"its {META_FILE} was changed after the index was built (its checksum does not match)")
        expected = dict(info.manifest)
    else:  # built before the manifest: one shard, sizes from the counts
        expected = {}
    shards = engine_files(info)
    for name in (n for trio in shards for n in trio):
        expected.setdefault(name, -1)
    for name, size in expected.items():
        path = folder / name
        if Path(name).name != name or name == META_FILE:
            raise DamagedIndex(f"its {META_FILE} names a file that cannot be part of an index ('{name[:80]}')")
        try:
            found = path.stat().st_size
        except FileNotFoundError:
            raise DamagedIndex(f"the file {name} is missing") from None
        except OSError as exc:
            raise DamagedIndex(f"the file {name} cannot be read ({exc.strerror})") from None
        if size >= 0 and found != size:
            raise DamagedIndex(f"the file {name} is {found:,} bytes, but the index was written with {size:,}")
    _check_shapes(folder, info, shards)
    return info


def engine_files(info: IndexInfo) -> list[tuple[str, str, str]]:
    """(token file, offset file, suffix array) of each shard."""
    return [shard_files(shard) for shard in range(info.shards)]


def _check_shapes(folder: Path, info: IndexInfo, shards: list[tuple[str, str, str]]) -> None:
    documents = info.shard_documents or [info.documents]
    if len(documents) != len(shards):
        raise DamagedIndex(f"its {META_FILE} does not say how many documents each part holds")
    if sum(documents) != info.documents + info.cuts:
        raise DamagedIndex(f"its {META_FILE} counts {info.documents:,} documents but its parts hold {sum(documents):,}")
    total = 0
    for (data, offsets, table), count in zip(shards, documents):
        data_size = (folder / data).stat().st_size
        if data_size % 2 or data_size < max(2, 2 * count):
            raise DamagedIndex(f"the file {data} is {data_size:,} bytes, too few for {count:,} documents")
        total += data_size
        if (folder / offsets).stat().st_size != 8 * count:
            raise DamagedIndex(f"the file {offsets} is {(folder / offsets).stat().st_size:,} bytes; "
                               f"{count:,} documents need {8 * count:,}")
        ratio = table_ratio(data_size)
        table_size = (folder / table).stat().st_size
        if table_size != data_size // 2 * ratio:
            raise DamagedIndex(f"the file {table} is {table_size:,} bytes; the token file {data} needs "
                               f"{data_size // 2 * ratio:,}")
        _check_pointers(folder / data, folder / offsets, folder / table, data_size, ratio, count)
    units = 2 * (info.documents + info.cuts) + 2 * info.width * info.tokens
    if total != units:
        raise DamagedIndex(f"its token files hold {total:,} bytes, but {info.tokens:,} tokens need {units:,}")
    if info.tokenizer == WORD:
        vocabulary = folder / VOCABULARY_FILE
        try:
            with open(vocabulary, "rb") as handle:
                lines = sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
        except FileNotFoundError:
            raise DamagedIndex(f"the file {VOCABULARY_FILE} is missing") from None
        if lines != info.vocabulary:
            raise DamagedIndex(f"the file {VOCABULARY_FILE} holds {lines:,} words; the index was built with "
                               f"{info.vocabulary:,}")


def _sample(size: int) -> np.ndarray:
    """Positions 0 .. size-1 to look at: the first and last ones and some evenly between."""
    if size <= SAMPLE:
        return np.arange(size, dtype=np.int64)
    return np.unique(np.concatenate([np.arange(SAMPLE // 4), np.linspace(0, size - 1, SAMPLE, dtype=np.int64),
                                     np.arange(size - SAMPLE // 4, size)]))


def _check_pointers(data: Path, offsets: Path, table: Path, data_size: int, ratio: int, count: int) -> None:
    entries = data_size // 2
    raw = np.memmap(table, dtype=np.uint8, mode="r")
    at = _sample(entries)
    pointers = np.zeros(at.size, dtype=np.uint64)
    for byte in range(ratio):
        pointers |= raw[at * ratio + byte].astype(np.uint64) << np.uint64(8 * byte)
    del raw
    if np.any(pointers >= data_size) or np.any(pointers % 2):
        raise DamagedIndex(f"the file {table.name} holds entries that point outside the token file {data.name}")
    if count:
        starts = np.memmap(offsets, dtype=np.uint64, mode="r")
        chosen = starts[_sample(count)].astype(np.uint64)
        del starts
        units = np.memmap(data, dtype=np.uint8, mode="r")
        inside = bool(chosen[0] == 0 and np.all(chosen < data_size) and np.all(np.diff(chosen.astype(np.int64)) > 0))
        separated = inside and all(units[int(p)] == DOC_SEPARATOR[0] and units[int(p) + 1] == DOC_SEPARATOR[1]
                                   for p in chosen)
        del units
        if not separated:
            raise DamagedIndex(f"the file {offsets.name} does not mark where the documents of {data.name} start")


# ---------------------------------------------------------------------------------------------- the engine
def _clean(path: str) -> bool:
    lowered = path.lower()
    return not any(word in lowered for word in ENGINE_WORDS)


def _view_roots() -> list[str]:
    roots = [tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"]
    return [r for r in dict.fromkeys(roots) if _clean(os.path.abspath(r)) and os.path.isdir(r)]


@contextmanager
def engine_view(folder: Path, names: Sequence[str]) -> Iterator[str]:
    """A folder holding links to exactly the files ``names`` of ``folder``, in a place whose path has none of
    the words the engine looks for; removed on leaving (once the engine has mapped the files)."""
    folder = Path(folder).resolve()
    view = None
    for root in _view_roots():
        for _ in range(20):  # the random part of the name could spell one of the words
            made = tempfile.mkdtemp(prefix="palimpsest-ngram-", dir=root)
            if _clean(os.path.abspath(made)):
                view = Path(os.path.abspath(made))
                break
            os.rmdir(made)
        if view is not None:
            break
    if view is None:
        raise UserError("The n-gram engine cannot open the index: it needs a temporary folder whose path does not "
                        f"contain any of the words {', '.join(ENGINE_WORDS)}. Set the TMPDIR environment variable "
                        "to such a folder and start Palimpsest again.")
    try:
        for name in names:
            try:
                os.symlink(folder / name, view / name)
            except OSError:
                os.link(folder / name, view / name)
        yield str(view)
    finally:
        shutil.rmtree(view, ignore_errors=True)
