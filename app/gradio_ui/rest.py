"""The Gradio server's REST routes that are not a page event: /analyze (the engine CLI's JSON) and /forward_passes.

gr.api(Rest(tab).analyze, api_name="analyze")
"""

from __future__ import annotations

from dataclasses import dataclass

from app.gradio_ui.errors import user_facing
from app.tabs.compare import CompareTab


@dataclass(frozen=True)
class Rest:
    """The routes over one Compare tab's page model."""

    tab: CompareTab

    @user_facing
    def analyze(
        self,
        image: dict,
        models: list[str],
        weights: str = "",
        method: str = "",
        target: int | None = None,
        faithfulness: bool = False,
    ) -> dict:
        """The engine CLI's JSON for one image (a file) and a list of model names; weights 'auto' (or empty:
        the trained weights where they can be had, else random), 'pretrained', 'random', or the name of a
        bundled checkpoint (never a path). An attribution `method` (Grad-CAM, Saliency, SmoothGrad, Integrated
        Gradients, Occlusion, Gradient x attention) adds each model's map for class `target` (default: top-1);
        `faithfulness` adds the map's deletion and insertion beside random pixel orders."""
        return self.tab.analysis_json(image, models, weights, method or None, target, bool(faithfulness))

    def forward_passes(self) -> int:
        """Forward passes the loaded models have made since the server started."""
        return self.tab.service.forward_passes
