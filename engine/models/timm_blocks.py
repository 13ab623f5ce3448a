"""Block splits read from a timm model's own structure, for every family the paper's question applies to.

`timm_split(model)` dispatches on the model's class. Units follow MEASUREMENTS.md section 1: the
stem is embed; a pre-norm transformer block gives an msa unit (`x + attn(norm1(x))`, layer scale
and drop path inside) and an mlp unit; a conv block is conv; a block or layer that subsamples is
pool (the whole block, as ResNet's first block of a stage).

- vit, eva (VisionTransformer, DeiT, Eva): embed (tokens, class/register tokens, pos_embed), then
  msa and mlp per block. Blocks running attention and MLP in parallel have no such units: refused.
- beit (Beit): the same, the embed read after pos_drop; layer scale (gamma) inside the units.
- resnet (ResNet, with ResNeXt, SE, Res2Net, ResNeSt and SK blocks): stem up to the max-pool, then
  every block conv; the residual branch ends at the block's SE, else its last norm or conv.
- convnext (ConvNeXt): stem embed; each stage's downsampling layer pool; every block conv.
- swin, pit: as the registered Swin-T and PiT-Ti (blocks.swin_blocks, blocks.pit_blocks).
- maxxvit (CoAtNet, MaxViT): stem embed; MBConv and ConvNeXt blocks conv; CoAtNet's transformer
  blocks msa and mlp (channels-first), the first of a stage, which pools its input, one pool unit;
  a MaxViT block gives its MBConv as a conv unit, then msa and mlp for its block (window) attention
  and again for its grid attention (channels-last, as MaxViT runs them); a parallel MaxViT block's
  window and grid attention share one msa unit.
- byobnet (MobileViT, and ByobNet's ResNet-like nets): stem embed; residual conv blocks conv (a block
  without a shortcut too, but it cannot be switched off); BoTNet / HaloNet / LambdaNet self-attention
  bottlenecks msa, whole, as AlterNet's MSA blocks; a MobileViT block gives msa and mlp for every
  transformer layer, measured on the unfolded patches (each pixel position within a patch gives one
  map over the patch grid, the grid the attention runs on), then its output (fold, 1x1 projection,
  fusion conv) as a conv unit that cannot be switched off.

Attention maps are recorded where AttentionRecorder applies: ViT/DeiT/EVA/BEiT with a class token and
timm's attention layers (their softmax read on the explicit path), PiT (global) and Swin (window);
the others get Grad-CAM.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Literal, NamedTuple

import torch
from timm.layers import Attention
from timm.models.beit import Attention as BeitAttention
from timm.models.beit import Beit
from timm.models.byobnet import (
    BasicBlock,
    BottleneckBlock,
    ByobNet,
    DarkBlock,
    EdgeBlock,
    MobileOneBlock,
    RepVggBlock,
    SelfAttnBlock,
)
from timm.models.convnext import ConvNeXt
from timm.models.eva import Eva, EvaAttention
from timm.models.maxxvit import (
    ConvNeXtBlock,
    MaxxVit,
    MaxxVitBlock,
    MbConvBlock,
    ParallelMaxxVitBlock,
    TransformerBlock2d,
)
from timm.models.mobilevit import MobileVitBlock, MobileVitV2Block
from timm.models.pit import PoolingVisionTransformer
from timm.models.resnet import ResNet
from timm.models.swin_transformer import SwinTransformer
from timm.models.vision_transformer import VisionTransformer
from torch import nn

from ..errors import UnknownModelError
from . import blocks as B
from .blocks import BlockSpec, Kind

AttentionKind = Literal["global", "window"]
Split = Callable[[nn.Module], list[BlockSpec]]


def _stride(module: nn.Module) -> int:
    stride = getattr(module, "stride", 1)
    if isinstance(stride, tuple):
        return max(stride)
    return stride if isinstance(stride, int) else 1


def subsamples(module: nn.Module) -> bool:
    """Whether a strided convolution or pooling inside `module` reduces the spatial size."""
    return any(_stride(part) > 1 for part in module.modules())


def conv_unit(name: str, block: nn.Module, branch: nn.Module | None, kind: Kind = "conv") -> BlockSpec:
    """A block measured whole: pool when it subsamples, else `kind`, switched off through `branch`."""
    if subsamples(block):
        return BlockSpec(name, "pool", block)
    return BlockSpec(name, kind, block, branch=branch)


def _check_units(blocks: nn.Module) -> None:
    """Refuse transformer blocks without separate attention and MLP residual units."""
    odd = sorted({type(b).__name__ for b in blocks if not (hasattr(b, "drop_path1") and hasattr(b, "drop_path2"))})
    if odd:
        raise UnknownModelError(f"{', '.join(odd)} blocks have no separate msa and mlp residual units")


def vit_blocks(model: nn.Module) -> list[BlockSpec]:
    """timm VisionTransformer / DeiT / Eva: blocks.vit_blocks, for blocks with msa and mlp units."""
    _check_units(model.blocks)
    return B.vit_blocks(model)


def beit_blocks(model: nn.Module) -> list[BlockSpec]:
    """timm Beit: embed (after pos_drop), then msa/mlp units per block."""
    prefix = model.num_prefix_tokens
    specs = [BlockSpec("embed", "embed", model.pos_drop, "bnc", prefix_tokens=prefix)]
    for i, block in enumerate(model.blocks):
        specs += B.transformer_units(block, f"blocks.{i}", "bnc", prefix)
    return specs


_RESNET_BRANCH_ENDS = ("se", "bn3", "conv3", "bn2", "conv2")


def resnet_blocks(model: nn.Module) -> list[BlockSpec]:
    """timm ResNet, any block type: the stem, then every block; a block that subsamples is pool."""
    specs = [BlockSpec("stem", "embed", model.maxpool)]
    for s in range(1, 5):
        for b, block in enumerate(getattr(model, f"layer{s}")):
            branch = next(getattr(block, n) for n in _RESNET_BRANCH_ENDS if getattr(block, n, None) is not None)
            specs.append(conv_unit(f"layer{s}.{b}", block, branch))
    return specs


def convnext_blocks(model: nn.Module) -> list[BlockSpec]:
    """timm ConvNeXt: the stem, then per stage its downsampling layer (pool) and blocks (conv)."""
    specs = [BlockSpec("stem", "embed", model.stem)]
    for s, stage in enumerate(model.stages):
        if not isinstance(stage.downsample, nn.Identity):
            specs.append(BlockSpec(f"stages.{s}.downsample", "pool", stage.downsample))
        for b, block in enumerate(stage.blocks):
            specs.append(conv_unit(f"stages.{s}.blocks.{b}", block, block.drop_path))
    return specs


def maxxvit_blocks(model: nn.Module) -> list[BlockSpec]:
    """timm MaxxVit (CoAtNet, MaxViT): conv blocks, CoAtNet transformer blocks, MaxViT blocks."""
    specs = [BlockSpec("stem", "embed", model.stem)]
    for s, stage in enumerate(model.stages):
        for b, block in enumerate(stage.blocks):
            name = f"stages.{s}.blocks.{b}"
            if isinstance(block, (MbConvBlock, ConvNeXtBlock)):
                specs.append(conv_unit(name, block, block.drop_path))
            elif isinstance(block, TransformerBlock2d) and subsamples(block):  # pools its input inside
                specs.append(BlockSpec(name, "pool", block))
            elif isinstance(block, TransformerBlock2d):
                specs += B.transformer_units(block, name, "bchw", 0)
            elif isinstance(block, (MaxxVitBlock, ParallelMaxxVitBlock)):
                convs = (
                    {f"{name}.conv.{i}": conv for i, conv in enumerate(block.conv)}
                    if isinstance(block.conv, nn.Sequential)
                    else {f"{name}.conv": block.conv}
                )
                specs += [conv_unit(path, conv, conv.drop_path) for path, conv in convs.items()]
                layout = "bchw" if getattr(block, "nchw_attn", False) else "bhwc"
                for part in ("attn_block", "attn_grid", "attn"):
                    if getattr(block, part, None) is not None:
                        specs += B.transformer_units(getattr(block, part), f"{name}.{part}", layout, 0)
            else:
                raise UnknownModelError(f"MaxxVit block {type(block).__name__} is not known to the block split")
    return specs


_BYOB_CONV = (BasicBlock, BottleneckBlock, DarkBlock, EdgeBlock, RepVggBlock, MobileOneBlock)


def _byob_branch(block: nn.Module) -> nn.Module | None:
    """A ByobNet block's residual branch (its drop path); none for a block without a shortcut."""
    shortcut = getattr(block, "shortcut", getattr(block, "identity", None))
    return block.drop_path if shortcut is not None else None


def _mobilevit_units(block: nn.Module, name: str) -> list[BlockSpec]:
    """A MobileViT block: msa and mlp for each transformer layer on the unfolded patches, then its output."""
    layout = "bnc" if isinstance(block, MobileVitBlock) else "bcpn"
    specs = []
    for i, layer in enumerate(block.transformer):
        specs += B.transformer_units(layer, f"{name}.transformer.{i}", layout, 0)
    return specs + [BlockSpec(name, "conv", block)]


def byobnet_blocks(model: nn.Module) -> list[BlockSpec]:
    """timm ByobNet (MobileViT, ResNet-like ByobNets, BoTNet / HaloNet / LambdaNet): stem, then every block."""
    specs = [BlockSpec("stem", "embed", model.stem)]
    for s, stage in enumerate(model.stages):
        for b, block in enumerate(stage):
            name = f"stages.{s}.{b}"
            if isinstance(block, (MobileVitBlock, MobileVitV2Block)):
                specs += _mobilevit_units(block, name)
            elif isinstance(block, SelfAttnBlock):
                specs.append(conv_unit(name, block, _byob_branch(block), "msa"))
            elif isinstance(block, _BYOB_CONV):
                specs.append(conv_unit(name, block, _byob_branch(block)))
            else:
                raise UnknownModelError(f"ByobNet block {type(block).__name__} is not known to the block split")
    return specs


def _no_attention(model: nn.Module) -> None:
    return None


def _global_where_readable(model: nn.Module) -> AttentionKind | None:
    """'global' where AttentionRecorder can read each block's softmax from its attn_drop on timm's explicit
    path (timm's Attention, EVA's with or without rotary embeddings, BEiT's with its relative position
    bias) and there is a class token to read maps from."""
    readable = all(type(block.attn) in (Attention, EvaAttention, BeitAttention) for block in model.blocks)
    return "global" if readable and getattr(model, "cls_token", None) is not None else None


@dataclass(frozen=True)
class Family:
    """timm classes split alike: their split, the attention recorded on them and random-init options."""

    title: str
    classes: tuple[type[nn.Module], ...]
    split: Split
    attention: Callable[[nn.Module], AttentionKind | None] = _no_attention
    # timm zero-initialises each residual block's last BN where it takes `zero_init_last`, which makes
    # random-weight blocks identities; random weights are for seeing the measurements work, so every
    # branch gets a random init.
    random_options: dict[str, object] = field(default_factory=dict)

    def describe(self) -> str:
        return f"{self.title} ({', '.join(c.__name__ for c in self.classes)})"


FAMILIES: dict[str, Family] = {
    "vit": Family("ViT / DeiT", (VisionTransformer,), vit_blocks, _global_where_readable),
    "beit": Family("BEiT", (Beit,), beit_blocks, _global_where_readable),
    "eva": Family("EVA", (Eva,), vit_blocks, _global_where_readable),
    "resnet": Family("ResNet / ResNeXt", (ResNet,), resnet_blocks, random_options={"zero_init_last": False}),
    "convnext": Family("ConvNeXt", (ConvNeXt,), convnext_blocks),
    "swin": Family("Swin", (SwinTransformer,), B.swin_blocks, lambda model: "window"),
    "pit": Family("PiT", (PoolingVisionTransformer,), B.pit_blocks, lambda model: "global"),
    "maxxvit": Family("CoAtNet / MaxViT", (MaxxVit,), maxxvit_blocks),
    "byobnet": Family(
        "MobileViT and other ByobNets", (ByobNet,), byobnet_blocks, random_options={"zero_init_last": False}
    ),
}


LAYER_SCALES = ("gamma", "gamma_1", "gamma_2")  # timm's LayerScale, ConvNeXt and BEiT layer scales


def full_branches(model: nn.Module) -> nn.Module:
    """A random build with every layer scale still at its constant init (1e-6 in ConvNeXt and DeiT-III,
    0.1 in BEiT) set to 1, so that random residual branches change the feature maps, as a random
    ResNet's do with zero_init_last=False. Trained weights replace these values."""
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.rsplit(".", 1)[-1] in LAYER_SCALES and bool((parameter == parameter.flatten()[0]).all()):
                parameter.fill_(1.0)
    return model


def supported_families() -> list[str]:
    """One line per supported family: its name and timm classes."""
    return [family.describe() for family in FAMILIES.values()]


class TimmSplit(NamedTuple):
    family: str
    split: Split
    attention: AttentionKind | None


def timm_split(model: nn.Module) -> TimmSplit:
    """The family of a timm model (by class), its block split and the attention the engine records on it.

    Raises UnknownModelError for a class of no supported family, or blocks its split does not know.
    """
    for name, family in FAMILIES.items():
        if isinstance(model, family.classes):
            family.split(model)  # refuses blocks the split does not know
            return TimmSplit(name, family.split, family.attention(model))
    raise UnknownModelError(
        f"its class {type(model).__name__} is in none of the supported families: {'; '.join(supported_families())}"
    )
