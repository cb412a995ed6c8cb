"""Building a local n-gram index: memory and time do not depend on how the text is spread over files.

On the LitBank novels (``../shared/data/litbank/original/``; skipped when absent), word-level tokens, each
build in a fresh process (``palimpsest corpus index`` as the command runs it):

- ``index_one_file_vs_many_memory``: peak memory of building the novels as ONE file (one document) against
  the same text as one file per novel. Memory is the whole build's: the building process and the indexer's
  processes together, sampled every 20 ms from /proc (so indexer processes sorting at the same time add up).
  Before the fix, measured the same way on the 100 novels (58.8 MB): 1,743 MB against 693 MB, 2.5x (the one
  document was held as arrays of every token, several times over). Goal <= 1.5.
- ``index_one_file_vs_many_time``: CPU time of the same two builds (process and indexer together); before the
  fix 60 s against 36 s (1.7x). Goal <= 1.5.
- ``index_repeated_text_time``: CPU time per byte of the same novels copied four times into one file (the
  same novel in several editions, say) against the novels once, one file each. The indexer's merge step compares
  suffixes byte by byte up to 100 KB, and on repeated text it ran for hours (a 92 MB file was still merging
  after 400 s; 6 MB of fourfold text took 384 s to merge); the build no longer merges. Goal <= 1.5.

``--quick``: 20 novels instead of 100 (and the fourfold copy of 10).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterable

from benchmarks.common import SHARED_DATA, line, skipped

LITBANK = SHARED_DATA / "litbank" / "original"
ROOT = Path(__file__).resolve().parents[1]
MEMORY_GOAL, TIME_GOAL, REPEAT_GOAL = 1.5, 1.5, 1.5


def _rss_kb(pid: int) -> int:
    try:
        for row in Path(f"/proc/{pid}/status").read_text().splitlines():
            if row.startswith("VmRSS:"):
                return int(row.split()[1])
    except OSError:
        pass
    return 0


def _tree(root: int) -> list[int]:
    """``root`` and every process below it."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents.setdefault(int(stat[stat.rindex(")") + 2 :].split()[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, []))
    return found


class TreeMemory:
    """The largest total resident memory of this process and its descendants, sampled in a thread."""

    def __init__(self, every: float = 0.02):
        import os

        self.root, self.every, self.peak_kb = os.getpid(), every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            self.peak_kb = max(self.peak_kb, sum(_rss_kb(pid) for pid in _tree(self.root)))
            time.sleep(self.every)

    def __enter__(self) -> "TreeMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def child_build(folder: str, source: str) -> dict:
    """Build the corpus in ``source`` into a new project in ``folder`` (pandas loaded before the clock starts,
    as in the running app)."""
    import pandas  # noqa: F401

    from workbench.probes.leakage.corpora import build_corpus
    from workbench.project import Project

    project = Project.create(Path(folder) / "bench.palimpsest")
    with TreeMemory() as memory:
        started, cpu = time.perf_counter(), _cpu()
        corpus = build_corpus(project, "corpus", [source])
        seconds, cpu = time.perf_counter() - started, _cpu() - cpu
    text_bytes = sum(f["bytes"] for f in corpus.files)
    project.close()
    return {"seconds": seconds, "cpu": cpu, "peak_mb": memory.peak_kb / 1024, "tokens": corpus.tokens,
            "documents": corpus.documents, "text_mb": text_bytes / 2**20}


def _in_child(folder: Path, source: Path) -> dict:
    folder.mkdir()
    code = ("import sys, json; from benchmarks.bench_index_scale import child_build; "
            "print(json.dumps(child_build(*sys.argv[1:])))")
    out = subprocess.run([sys.executable, "-c", code, str(folder), str(source)], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(quick: bool) -> Iterable[dict]:
    names = ("index_one_file_vs_many_memory", "index_one_file_vs_many_time", "index_repeated_text_time")
    if not LITBANK.exists():
        for name in names:
            yield skipped(name, f"missing {LITBANK}")
        return
    if not sys.platform.startswith("linux"):
        for name in names:
            yield skipped(name, "memory is read from /proc (Linux)")
        return
    files = sorted(LITBANK.glob("*.txt"))[: 20 if quick else 100]
    with tempfile.TemporaryDirectory(prefix="bench-index-scale-") as tmp:
        tmp = Path(tmp)
        texts = [f.read_text(encoding="utf-8") for f in files]
        many, one, repeated = tmp / "many", tmp / "one", tmp / "repeated"
        for folder in (many, one, repeated):
            folder.mkdir()
        for path, text in zip(files, texts):
            (many / path.name).write_text(text, encoding="utf-8")
        (one / "all.txt").write_text("\n\n".join(texts), encoding="utf-8")
        part = texts[: len(texts) // 2]
        (repeated / "fourfold.txt").write_text("\n\n".join(part * 4), encoding="utf-8")
        builds = {name: _in_child(tmp / f"build-{name}", source)
                  for name, source in (("many", many), ("one", one), ("repeated", repeated))}
    a, b, r = builds["many"], builds["one"], builds["repeated"]
    memory = b["peak_mb"] / a["peak_mb"]
    yield line(names[0], memory, "x peak memory of the same text as one file per novel", f"<= {MEMORY_GOAL}",
               memory <= MEMORY_GOAL, novels=len(files), text_mb=round(a["text_mb"], 1),
               one_file_peak_mb=round(b["peak_mb"]), many_files_peak_mb=round(a["peak_mb"]),
               tokens=a["tokens"], before_fix="100 novels: 1,743 MB against 693 MB (2.5x)")
    cpu = b["cpu"] / a["cpu"]
    yield line(names[1], cpu, "x CPU time of the same text as one file per novel", f"<= {TIME_GOAL}",
               cpu <= TIME_GOAL, one_file_cpu_s=round(b["cpu"], 2), many_files_cpu_s=round(a["cpu"], 2),
               one_file_seconds=round(b["seconds"], 2), many_files_seconds=round(a["seconds"], 2),
               before_fix="100 novels: 60 s against 36 s CPU (1.7x)")
    per_mb = (r["cpu"] / r["text_mb"]) / (a["cpu"] / a["text_mb"])
    yield line(names[2], per_mb, "x CPU time per MB of varied text", f"<= {REPEAT_GOAL}", per_mb <= REPEAT_GOAL,
               repeated_text_mb=round(r["text_mb"], 1), repeated_cpu_s=round(r["cpu"], 2),
               repeated_seconds=round(r["seconds"], 2), repeated_peak_mb=round(r["peak_mb"]),
               before_fix="6 MB of fourfold text: 384 s in the merge step alone")
