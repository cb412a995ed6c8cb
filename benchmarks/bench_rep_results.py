"""The Bias page's Results tab on a Time-Capsules-sized project (one model per decade, four demographics,
21 roles, 50 completions each): how long the window is blocked when the scholar switches to the
"Quadratic trends" table and back, then between roles of the trends chart. Measured side by side on the
same page: as the tab does it now (tables on a worker, kept per count; chart frames kept per role) and
as it did before (everything recomputed on the GUI thread at each change). The value is the longest
freeze before over the longest now (filling the table with its rows stays on the GUI thread in both).
Goal: at least 4 times shorter, and no step over 150 ms.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from benchmarks.common import line, qt_application, skipped


def _project(folder: Path, decades: list[str], samples: int):
    from workbench import Project, jobs
    from workbench.jobs import Outcome
    from workbench.models.base import GenerationParams
    from workbench.models.catalog import ModelSpec, add_model
    from workbench.probes.rep.run import KIND, run_config
    from workbench.probes.rep.sets import current_sets

    project = Project.create(folder / "capsules.palimpsest")
    rng = random.Random(3)
    words = [" a woman who", " a man who", " a Black nurse", " a white man", " a Muslim family", " a Jewish scholar",
             " his boyfriend", " her girlfriend", " someone", " a non-binary chemist", " a Christian pastor"]
    sets = current_sets(project, "rep")
    for index, decade in enumerate(decades):
        model = add_model(project, ModelSpec(label=f"tc-{decade}", backend="external", tags={"decade": decade}))
        run_id = jobs.create_run(project, KIND, model_id=model.id, params=GenerationParams().as_dict(),
                                 config=run_config(sets, samples))
        units = [jobs.Unit(pid, s) for stored in sets for pid in stored.prompt_ids.values() for s in range(samples)]
        weights = [1 + (index + j) % 4 for j in range(len(words))]

        def process(units, state, weights=weights):
            for unit in units:
                yield unit, Outcome(raw=rng.choices(words, weights)[0], prompt="", seed=unit.sample)
        jobs.run_job(project, run_id, units, process)
    return project


def run(quick: bool):
    app = qt_application()
    if app is None:
        yield skipped("rep_results_blocking", "the GUI extra is not installed")
        return
    from ui.background import BackgroundOps
    from ui.rep import results_tab
    from ui.rep.page import RepPage

    decades = ["1950s", "1960s", "1970s"] if quick else ["1950s", "1960s", "1970s", "1980s", "1990s", "2000s"]
    samples = 20 if quick else 50
    with tempfile.TemporaryDirectory() as folder:
        project = _project(Path(folder), decades, samples)
        ops = BackgroundOps()
        page = RepPage(ops)
        page.resize(1280, 800)
        page.show()
        page.set_project(project)
        while ops.busy:
            ops.pool.waitForDone(60_000)
            app.processEvents()
        tab = page.results_tab

        def blocked(step) -> float:
            """The longest the GUI thread is busy in one go: the step itself, then each drain of finished work."""
            start = time.perf_counter()
            step()
            longest = time.perf_counter() - start
            while True:
                ops.pool.waitForDone(60_000)
                start = time.perf_counter()
                app.processEvents()
                longest = max(longest, time.perf_counter() - start)
                if not ops.busy:
                    return longest

        def scholar() -> list[float]:
            steps = [lambda: tab.table_choice.setCurrentText("Quadratic trends"),
                     lambda: tab.table_choice.setCurrentText("Tests across decades"),
                     lambda: tab.table_choice.setCurrentText("Quadratic trends"),
                     lambda: tab.choose_chart("rep-trends")]
            steps += [lambda i=i: tab.controls.widget("role").setCurrentIndex(i) for i in (1, 2, 1, 2, 1)]
            steps += [lambda: tab.choose_chart("rep-decade-shares"),
                      lambda: tab.table_choice.setCurrentText("Shares with 95% intervals")]
            return [blocked(step) for step in steps]

        now = scholar()

        # before: every change recomputed its table and chart on the GUI thread
        original_show, original_redraw = results_tab.ResultsTab.show_table, results_tab.ResultsTab.redraw

        def show_table_then(self):
            self._tables = {}
            self._show_table(self.table_choice.currentText(), self._table(self.table_choice.currentText())[1])

        def redraw_then(self):
            name, options = self.chart_name(), self.chart_options()
            own = {k: v for k, v in options.items() if k != "classifier"}
            self._charts = {results_tab.chart_key(name, options): results_tab.chart_frame_of(
                self.project, name, own, self._context())}
            original_redraw(self)

        results_tab.ResultsTab.show_table, results_tab.ResultsTab.redraw = show_table_then, redraw_then
        try:
            then = scholar()
        finally:
            results_tab.ResultsTab.show_table, results_tab.ResultsTab.redraw = original_show, original_redraw
        ops.join()
        page.close()
        project.close()
    ratio = max(then) / max(max(now), 1e-9)
    yield line("rep_results_blocking", ratio, "x", ">= 4 and no step over 150 ms", ratio >= 4 and max(now) < 0.15,
               models=len(decades), samples=samples, now_total_s=round(sum(now), 3), now_worst_s=round(max(now), 3),
               before_total_s=round(sum(then), 3), before_worst_s=round(max(then), 3))
