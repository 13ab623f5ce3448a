"""Block split: how each model family is read as an ordered list of measured latents.

MEASUREMENTS.md section 1. A `BlockSpec` names the module whose output is the latent and how
that output is laid out; with `residual_parent` the latent is that block's input plus the
module's output (the first residual unit of a transformer block, `x + attn(norm1(x))`).
`branch` is the module whose output is the unit's residual branch: zeroing it switches the unit
off with its shortcut kept (a lesion, Fig 10b); embed and pool blocks have none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from torch import nn

Kind = Literal["embed", "conv", "msa", "mlp", "pool"]
Layout = Literal["bchw", "bhwc", "bnc", "bcpn", "tuple_bchw"]


@dataclass(frozen=True)
class BlockSpec:
    """One measured latent: `module`'s output (plus `parent`'s input when `residual`)."""

    name: str
    kind: Kind
    module: nn.Module
    layout: Layout = "bchw"
    residual_parent: nn.Module | None = None
    prefix_tokens: int = 0
    branch: nn.Module | None = None

    @property
    def can_lesion(self) -> bool:
        return self.branch is not None


def resnet_blocks(model: nn.Module) -> list[BlockSpec]:
    """timm ResNet: the stem, then every bottleneck; the first block of layer2..4 subsamples."""
    specs = [BlockSpec("stem", "embed", model.maxpool)]
    for s, stage in enumerate([model.layer1, model.layer2, model.layer3, model.layer4], start=1):
        for b, block in enumerate(stage):
            if b == 0 and s > 1:
                specs.append(BlockSpec(f"layer{s}.{b}", "pool", block))
            else:
                specs.append(BlockSpec(f"layer{s}.{b}", "conv", block, branch=block.bn3))
    return specs


def transformer_units(block: nn.Module, name: str, layout: Layout, prefix: int) -> list[BlockSpec]:
    """The two residual units of a pre-norm transformer block: msa, then mlp."""
    return [
        BlockSpec(f"{name}.msa", "msa", block.drop_path1, layout, block, prefix, branch=block.drop_path1),
        BlockSpec(f"{name}.mlp", "mlp", block, layout, prefix_tokens=prefix, branch=block.drop_path2),
    ]


def vit_blocks(model: nn.Module) -> list[BlockSpec]:
    """timm VisionTransformer / DeiT: embed (tokens + pos_embed), then msa/mlp units per block."""
    prefix = model.num_prefix_tokens
    specs = [BlockSpec("embed", "embed", model.norm_pre, "bnc", prefix_tokens=prefix)]
    for i, block in enumerate(model.blocks):
        specs += transformer_units(block, f"blocks.{i}", "bnc", prefix)
    return specs


def swin_blocks(model: nn.Module) -> list[BlockSpec]:
    """timm Swin: embed, then per stage an optional patch merging (pool) and msa/mlp units."""
    specs = [BlockSpec("patch_embed", "embed", model.patch_embed, "bhwc")]
    for s, stage in enumerate(model.layers):
        if not isinstance(stage.downsample, nn.Identity):
            specs.append(BlockSpec(f"layers.{s}.downsample", "pool", stage.downsample, "bhwc"))
        for b, block in enumerate(stage.blocks):
            specs += transformer_units(block, f"layers.{s}.blocks.{b}", "bhwc", 0)
    return specs


def pit_blocks(model: nn.Module) -> list[BlockSpec]:
    """timm PiT: embed (conv patches + pos_embed), then per stage a pooling layer and msa/mlp units."""
    prefix = model.cls_token.shape[1]
    specs = [BlockSpec("embed", "embed", model.pos_drop)]
    for s, stage in enumerate(model.transformers):
        if stage.pool is not None:
            specs.append(BlockSpec(f"transformers.{s}.pool", "pool", stage.pool, "tuple_bchw"))
        for b, block in enumerate(stage.blocks):
            specs += transformer_units(block, f"transformers.{s}.blocks.{b}", "bnc", prefix)
    return specs
