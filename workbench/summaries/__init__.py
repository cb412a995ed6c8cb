"""Scene summaries and distorted summaries written by a model, for the summary-validity annotation task.

- ``runs``: the summary and distortion runs (bounded retries, resumable) and the items they make;
- ``plans``: what a summary job will ask for, and at what cost, before it starts.
"""

from workbench.parts import Part

PART = Part("summaries", run_kinds=("workbench.summaries.runs",),
            methods=("workbench.summaries.methods",))
