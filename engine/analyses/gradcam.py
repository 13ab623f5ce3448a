"""Grad-CAM (Selvaraju et al., 2017) for models without recorded attention, on any latent layout.

The map is relu(sum over channels of mean-gradient-weighted activations) of one latent, brought to
(B, C, H, W) as the measurements are (measure.to_bchw), upsampled bilinearly onto the input: the
value of captum's LayerGradCam on a convolutional block.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..errors import EngineError
from ..models.blocks import BlockSpec
from ..models.registry import LoadedModel
from ..results import AttributionMap
from .base import Images, Labels, ModelAnalysis, Progress
from .block_measures import watch_latents
from .measure import to_bchw


def cam_block(specs: list[BlockSpec]) -> BlockSpec:
    """The latent Grad-CAM reads: the last block's output; for token models with a class token, the last
    block's input, since the head reads only the class token and the last block's patch tokens get no
    gradient (pytorch-grad-cam takes ViTs' last norm1 alike)."""
    outputs = [s for s in specs if s.residual_parent is None and s.layout != "tuple_bchw"]
    last = outputs[-1]
    return outputs[-2] if last.layout == "bnc" and last.prefix_tokens else last


class GradCam(ModelAnalysis):
    """Where a model looks: Grad-CAM of the top-1 (or a given) class on its last block (`cam_block`)."""

    method = "Grad-CAM"

    @classmethod
    def unsupported(cls, model: LoadedModel) -> str | None:
        return None  # every family's last block has a spatial latent

    def __init__(self, model: LoadedModel) -> None:
        super().__init__(model, batch_size=1)
        self.block = cam_block(model.spec.blocks(model.module))

    def attribute(
        self, images: Images, labels: Labels | None = None, progress: Progress | None = None
    ) -> AttributionMap:
        """The map of one image (`images`: one file/PIL/array or a one-image list) for class `labels`
        (one index; None: the top-1 class)."""
        if not isinstance(images, (list, tuple, torch.Tensor)):
            images = [images]
        x = self.inputs(images)
        if len(x) != 1:
            raise EngineError(f"Grad-CAM explains one image at a time, not {len(x)}")
        listed = [labels] if isinstance(labels, int) else labels
        target = None if labels is None else int(self.targets(listed, 1)[0])
        latents: list[torch.Tensor] = []
        handles = watch_latents([self.block], lambda index, latent: latents.append(latent))
        try:
            with torch.enable_grad():  # one pass gives the top-1 class and its gradient
                logits = self.forward(x)[0]
                target = int(logits.argmax()) if target is None else target
                if target >= len(logits):
                    raise EngineError(f"class {target} is out of range: {self.model.name} has {len(logits)} classes")
                (grad,) = torch.autograd.grad(logits[target], latents[0])
        finally:
            for handle in handles:
                handle.remove()
        activations, grads = to_bchw(latents[0].detach(), self.block), to_bchw(grad, self.block)
        cam = (grads.mean(dim=(2, 3), keepdim=True) * activations).sum(dim=1, keepdim=True).relu()
        cam = F.interpolate(cam.float(), size=tuple(x.shape[-2:]), mode="bilinear")[0, 0].cpu()
        peak = float(cam.max())
        labels_of = self.model.spec.labels()
        label = labels_of[target] if target < len(labels_of) else str(target)
        return AttributionMap(self.method, target, label, (cam / peak if peak > 0 else cam).numpy(), cam.numpy())
