"""Role-specific elicitation prompts (REPs): which demographic a model gives the person in a role.

- ``setfile`` / ``sets``: the REP and EEP sets (TOML data in ``resources/rep/``), versioned in the project;
- ``kinds``: its kinds of run, declared once; ``run``: N completions per role stem and model; ``judge``, ``lexical``, ``parser``: labelling them;
- ``classify``: every completion with its label and category; ``stats``: shares, tests, trends, spread;
- ``validation``: human validation of the judge; ``entities``: entity overlap with books (EEPs);
- ``finetune``: decade fine-tuning data; ``charts``: the figures.
"""

from workbench.parts import PageSpec, Part

PART = Part(
    "rep",
    commands=("workbench.probes.rep.commands",),
    exports=("workbench.probes.rep.charts",),
    run_kinds=("workbench.probes.rep.kinds",),
    methods=("workbench.probes.rep.methods",),
    migrations="workbench.probes.rep.migrations",
    pages=(PageSpec("rep", "Bias (REP)", "ui.rep.page:RepPage"),),
)
