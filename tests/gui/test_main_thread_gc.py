"""Garbage cycles that hold Qt objects are freed on the GUI thread, even when a worker thread is the one
allocating (or asking a model to free its memory)."""

import gc
import threading

from PySide6.QtCore import QObject, Qt

from ui.main_thread_gc import MainThreadGarbageCollector
from workbench.models.torch_env import free_memory


def make_cycle_holding_a_qt_object(destroyed_in: list) -> None:
    holder = {"object": QObject()}
    holder["self"] = holder  # only the cycle collector can free this
    holder["object"].destroyed.connect(lambda *_: destroyed_in.append(threading.get_ident()),
                                       Qt.ConnectionType.DirectConnection)


def test_cycles_with_qt_objects_are_freed_on_the_gui_thread_only(qtbot):
    import torch

    collector = MainThreadGarbageCollector(interval_ms=20)
    try:
        assert not gc.isenabled()
        destroyed_in: list[int] = []
        make_cycle_holding_a_qt_object(destroyed_in)

        def busy_worker():
            junk = [[i] for i in range(50 * collector.thresholds[0])]  # far past the young threshold
            for item in junk:
                item.append(item)  # cycles of its own
            del junk
            free_memory(torch.device("cpu"))  # what a local model does when it is closed

        worker = threading.Thread(target=busy_worker)
        worker.start()
        worker.join(60)
        assert destroyed_in == []  # the worker freed nothing of the GUI's
        qtbot.waitUntil(lambda: bool(destroyed_in), timeout=5000)
        assert destroyed_in == [threading.get_ident()]
    finally:
        collector.stop()


def test_survivors_of_a_full_collection_are_frozen_and_a_full_scan_frees_cycles_that_died_since(qtbot):
    now = [0.0]
    collector = MainThreadGarbageCollector(interval_ms=10_000, full_scan_s=600, clock=lambda: now[0])
    try:
        destroyed_in: list[int] = []
        make_cycle_holding_a_qt_object(destroyed_in)  # garbage already: a full collection frees it
        kept = {"object": QObject()}
        kept["self"] = kept  # alive (referenced here) through the next full collection: then frozen
        kept["object"].destroyed.connect(lambda *_: destroyed_in.append("kept"), Qt.ConnectionType.DirectConnection)
        kept_alive, frozen_at_start = [], gc.get_freeze_count()  # what was loaded when the collector started
        for _ in range(10 * collector.thresholds[1] * collector.thresholds[2]):  # until a full collection is due
            kept_alive.append([[i] for i in range(collector.thresholds[0] + 1)])
            collector.check()
            if gc.get_freeze_count() > frozen_at_start:
                break
        del kept_alive
        assert frozen_at_start > 0  # the libraries loaded before the collector started: frozen at once
        assert destroyed_in == [threading.get_ident()] and gc.get_freeze_count() > frozen_at_start
        del kept  # now garbage, but frozen: collections skip it ...
        collector.check()
        gc.collect(2)
        assert destroyed_in == [threading.get_ident()]
        now[0] = 600  # ... until the full scan
        collector.check()
        assert destroyed_in == [threading.get_ident(), "kept"]
    finally:
        collector.stop()
    assert gc.get_freeze_count() == 0


def test_the_collector_stays_off_when_a_library_switches_it_back_on(qtbot):
    from workbench.nlp import load_english

    collector = MainThreadGarbageCollector(interval_ms=10_000)
    try:
        load_english(components=("tok2vec", "tagger"))  # a pipeline not loaded before: spaCy reads it (srsly)
        assert not gc.isenabled()
        gc.enable()  # any other library doing the same
        collector.check()
        assert not gc.isenabled()
    finally:
        collector.stop()


def test_loading_a_spacy_pipeline_on_a_worker_never_collects_there():
    """srsly switches the collector on while spaCy reads a pipeline: collected on the worker, a cycle holding
    a widget of the window was destroyed there (the suite crashed in a Qt event loop after an extraction)."""
    from workbench.nlp import load_english

    collected_in_workers: list[int] = []

    def record(phase: str, info: dict) -> None:
        if phase == "start" and threading.current_thread() is not threading.main_thread():
            collected_in_workers.append(info["generation"])

    was_enabled = gc.isenabled()
    gc.disable()
    gc.callbacks.append(record)
    try:
        worker = threading.Thread(target=lambda: load_english(components=("ner", "tok2vec", "senter")))
        worker.start()
        worker.join(120)
        assert collected_in_workers == [] and not gc.isenabled()
    finally:
        gc.callbacks.remove(record)
        if was_enabled:
            gc.enable()


def test_while_the_libraries_load_nothing_is_collected_until_they_are_frozen(qtbot):
    import matplotlib.figure  # noqa: F401 (the libraries it freezes once loaded)

    from ui.main_thread_gc import freeze_libraries, libraries_loading

    collector = MainThreadGarbageCollector(interval_ms=10_000)
    try:
        libraries_loading()
        made = [[[i] for i in range(collector.thresholds[0] + 1)] for _ in range(20)]  # a worker's imports
        young = gc.get_count()[0]
        assert young > collector.thresholds[0]
        collector.check()  # due, but left: the objects are frozen in a moment, looking at them is wasted
        assert gc.get_count()[0] >= young
        frozen = gc.get_freeze_count()
        freeze_libraries()  # the libraries loaded: frozen, and collections resume
        assert gc.get_freeze_count() > frozen
        del made
        [[i] for i in range(collector.thresholds[0] + 1)]
        collector.check()
        assert gc.get_count()[0] < collector.thresholds[0]
    finally:
        freeze_libraries()
        collector.stop()
