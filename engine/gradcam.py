"""Grad-CAM (Selvaraju et al., 2017) for models without recorded attention, on any latent layout.

The map is relu(sum over channels of mean-gradient-weighted activations) of one latent, brought to
(B, C, H, W) as the measurements are (measure.to_bchw), upsampled bilinearly onto the input: the
value of captum's LayerGradCam on a convolutional block.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .analysis import watch_latents
from .blocks import BlockSpec
from .images import ImageInput, load_image
from .measure import to_bchw
from .registry import LoadedModel


def cam_block(specs: list[BlockSpec]) -> BlockSpec:
    """The latent Grad-CAM reads: the last block's output; for token models with a class token, the last
    block's input, since the head reads only the class token and the last block's patch tokens get no
    gradient (pytorch-grad-cam takes ViTs' last norm1 alike)."""
    outputs = [s for s in specs if s.residual_parent is None and s.layout != "tuple_bchw"]
    last = outputs[-1]
    return outputs[-2] if last.layout == "bnc" and last.prefix_tokens else last


class GradCam:
    """Where a model looks: Grad-CAM of the top-1 (or a given) class on its last block (`cam_block`)."""

    def __init__(self, model: LoadedModel) -> None:
        self.model = model
        self.block = cam_block(model.spec.blocks(model.module))

    def attribute(self, image: ImageInput, target: int | None = None) -> np.ndarray:
        """An (H, W) map in [0, 1] at the model's input resolution."""
        x = self.model.transform(load_image(image)).unsqueeze(0).to(self.model.device)
        latents: list[torch.Tensor] = []
        handles = watch_latents([self.block], lambda index, latent: latents.append(latent))
        try:
            with torch.enable_grad():  # one pass gives the top-1 class and its gradient
                logits = self.model.module(x)[0]
                target = int(logits.argmax()) if target is None else target
                (grad,) = torch.autograd.grad(logits[target], latents[0])
        finally:
            for handle in handles:
                handle.remove()
        self.model.forward_passes += 1
        activations, grads = to_bchw(latents[0].detach(), self.block), to_bchw(grad, self.block)
        cam = (grads.mean(dim=(2, 3), keepdim=True) * activations).sum(dim=1, keepdim=True).relu()
        cam = F.interpolate(cam.float(), size=tuple(x.shape[-2:]), mode="bilinear")[0, 0].cpu()
        peak = float(cam.max())
        return (cam / peak if peak > 0 else cam).numpy()
