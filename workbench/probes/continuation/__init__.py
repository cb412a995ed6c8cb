"""The verbatim continuation probe (after Carlini et al. 2023, as used in the leakage literature): give a model
the first tokens of a passage of a book and see whether its greedy continuation is the book's own text.

Modules, in the order of the work:

- ``tokens``     how a passage is cut into tokens: the local model's own tokenizer, or words for an API;
- ``passages``   a seeded sample of passages spread over each book (``continuation_passages``: offsets into the
                 book's text and the true continuation's tokens);
- ``kinds``      the run kind ``continuation``, declared once (config, how it is continued, its words);
- ``run``        runs on any model through the job runner (local models in batches; APIs by completion, or a
                 chat prompt where the model is a chat model);
- ``score``      pure scoring functions: exact-match prefix, longest common substring, edit similarity;
- ``results``    per-passage scores and the per-book table with its Wilson intervals and the unseen-books
                 baseline;
- ``charts``     the table and charts registered in the export registry;
- ``methods``    its part of the methods text; ``evidence`` its evidence for the exposure report.
"""

from workbench.parts import PageSpec, Part

PART = Part(
    "continuation",
    commands=("workbench.probes.continuation.commands",),
    exports=("workbench.probes.continuation.charts",),
    run_kinds=("workbench.probes.continuation.kinds",),
    methods=("workbench.probes.continuation.methods",),
    evidence=("workbench.probes.continuation.evidence",),
    migrations="workbench.probes.continuation.migrations",
    pages=(PageSpec("continuation", "Continuation", "ui.continuation.page:ContinuationPage"),),
)
