"""Model backends (transformers, llama.cpp, OpenAI-compatible), the model registry and the response cache."""

from workbench.parts import PageSpec, Part

PART = Part(
    "models",
    commands=("workbench.models.commands",),
    pages=(PageSpec("models", "Models", "ui.models.page:ModelsPage"),),
)
