"""AlterNet (Park & Kim 2022, Sec 4, Fig 11, Appendix E) on a pre-activation ResNet, for CIFAR.

Layout, after the paper's official code (github.com/xxxnell/how-do-vits-work, models/alternet.py):
- stem: 3x3 conv, stride 1 (patch 1), BN, ReLU.
- stages of widths w, 2w, 4w, 8w (outputs 4x that), strides 1, 2, 2, 2; the first block of every
  stage is a pre-activation bottleneck with a projection shortcut, which subsamples in stages 2..4.
- Conv block: BN-ReLU-conv1x1, BN-ReLU-conv3x3(stride), BN-ReLU-conv1x1 (expansion 4).
- MSA block: BN-ReLU-conv1x1 down to the stage width, BN, then local windowed multi-head
  self-attention (window 4, heads 3/6/12/24, head dim w) with a learned relative position bias
  per head (Swin's table; no shifted windows), whose output projection goes back up to the stage's
  output width; the residual is added. As in the official code the block has no MLP: it takes a
  bottleneck's place at about the same cost.
- head: BN, ReLU, global average pool, linear.
Every block ends its residual branch in `branch_out` (an nn.Identity, before the add), so a forward
hook there can switch the block off (a lesion). Each attention's `attn_probs` sees the softmax,
shaped (B * windows, heads, N, N) with N = window ** 2, windows in row-major order over the map.
"""

from __future__ import annotations

import torch
from timm.layers import DropPath, trunc_normal_
from torch import nn

from .blocks import BlockSpec
from .placement import PAPER_PLACEMENT, Placement

EXPANSION = 4
HEADS = (3, 6, 12, 24)


def _preact(channels: int) -> nn.Sequential:
    return nn.Sequential(nn.BatchNorm2d(channels), nn.ReLU(inplace=True))


class Bottleneck(nn.Module):
    """Pre-activation bottleneck; a projection shortcut on the activated input when shape changes."""

    def __init__(self, dim_in: int, width: int, stride: int = 1, drop_path: float = 0.0):
        super().__init__()
        dim_out = width * EXPANSION
        self.pre = _preact(dim_in)
        self.shortcut = (
            nn.Conv2d(dim_in, dim_out, 1, stride=stride, bias=False) if stride != 1 or dim_in != dim_out else None
        )
        self.conv1 = nn.Conv2d(dim_in, width, 1, bias=False)
        self.act2 = _preact(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.act3 = _preact(width)
        self.conv3 = nn.Conv2d(width, dim_out, 1, bias=False)
        self.drop_path = DropPath(drop_path) if drop_path > 0 else nn.Identity()
        self.branch_out = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pre = self.pre(x)
        skip = x if self.shortcut is None else self.shortcut(pre)
        out = self.conv3(self.act3(self.conv2(self.act2(self.conv1(pre)))))
        return skip + self.branch_out(self.drop_path(out))


class WindowAttention(nn.Module):
    """Multi-head self-attention within non-overlapping windows of a (B, C, H, W) map."""

    def __init__(self, dim_in: int, dim_out: int, heads: int, dim_head: int, window_size: int):
        super().__init__()
        self.heads, self.dim_head, self.window_size = heads, dim_head, window_size
        self.scale = dim_head**-0.5
        inner = heads * dim_head
        self.qkv = nn.Conv2d(dim_in, inner * 3, 1, bias=False)
        self.proj = nn.Conv2d(inner, dim_out, 1)
        self.relative_position_bias_table = nn.Parameter(torch.zeros((2 * window_size - 1) ** 2, heads))
        trunc_normal_(self.relative_position_bias_table, std=0.02)
        self.register_buffer("relative_position_index", _relative_index(window_size), persistent=False)
        self.attn_probs = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, _, h, w = x.shape
        p, heads, d = self.window_size, self.heads, self.dim_head
        if h % p or w % p:
            raise ValueError(f"a {h}x{w} feature map does not split into {p}x{p} attention windows")
        n1, n2 = h // p, w // p
        qkv = self.qkv(x).reshape(b, 3, heads, d, n1, p, n2, p)
        q, k, v = qkv.permute(1, 0, 4, 6, 2, 5, 7, 3).reshape(3, b * n1 * n2, heads, p * p, d).unbind(0)
        bias = self.relative_position_bias_table[self.relative_position_index].permute(2, 0, 1)
        attn = self.attn_probs(((q * self.scale) @ k.transpose(-2, -1) + bias).softmax(dim=-1))
        out = (attn @ v).reshape(b, n1, n2, heads, p, p, d).permute(0, 3, 6, 1, 4, 2, 5)
        return self.proj(out.reshape(b, heads * d, h, w))


def _relative_index(window: int) -> torch.Tensor:
    """Swin's index into the (2w-1)^2 bias table for every (query, key) pair of a w x w window."""
    coords = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")).flatten(1)
    rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + window - 1
    return rel[..., 0] * (2 * window - 1) + rel[..., 1]


class MSABlock(nn.Module):
    """Pre-activation MSA block: BN-ReLU-conv1x1 to `width`, BN, windowed MSA to width * 4, residual."""

    def __init__(self, dim: int, width: int, heads: int, dim_head: int, window_size: int, drop_path: float = 0.0):
        super().__init__()
        self.pre = _preact(dim)
        self.conv = nn.Conv2d(dim, width, 1, bias=False)
        self.norm = nn.BatchNorm2d(width)
        self.attn = WindowAttention(width, width * EXPANSION, heads, dim_head, window_size)
        self.drop_path = DropPath(drop_path) if drop_path > 0 else nn.Identity()
        self.branch_out = nn.Identity()

    @property
    def window_size(self) -> tuple[int, int]:
        """The attention window, as timm's Swin blocks give it (their attention code reads it)."""
        return (self.attn.window_size, self.attn.window_size)

    @property
    def shift_size(self) -> tuple[int, int]:
        """No shifted windows (Appendix E), as timm's Swin blocks would say it."""
        return (0, 0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.attn(self.norm(self.conv(self.pre(x))))
        return x + self.branch_out(self.drop_path(out))


class AlterNet(nn.Module):
    """Pre-activation ResNet whose blocks named by `placement` are MSA blocks (none: plain ResNet)."""

    def __init__(
        self,
        placement: Placement = PAPER_PLACEMENT,
        width: int = 64,
        num_classes: int = 10,
        heads: tuple[int, ...] = HEADS,
        dim_head: int | None = None,
        window_size: int = 4,
        drop_path_rate: float = 0.0,
    ):
        super().__init__()
        if len(heads) < len(placement.depths):
            raise ValueError(f"{len(placement.depths)} stages need as many head counts, got {heads}")
        self.placement = placement
        self.widths = tuple(width * 2**s * EXPANSION for s in range(len(placement.depths)))
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False), *_preact(width))
        rates = torch.linspace(0, drop_path_rate, sum(placement.depths)).tolist()
        dim, stages = width, []
        for s, mask in enumerate(placement.masks()):
            stage_width = width * 2**s
            blocks = []
            for b, is_msa in enumerate(mask):
                rate = rates.pop(0)
                if is_msa:
                    blocks.append(MSABlock(dim, stage_width, heads[s], dim_head or width, window_size, rate))
                else:
                    blocks.append(Bottleneck(dim, stage_width, 2 if s > 0 and b == 0 else 1, rate))
                dim = stage_width * EXPANSION
            stages.append(nn.Sequential(*blocks))
        self.stages = nn.ModuleList(stages)
        self.head = nn.Sequential(*_preact(dim), nn.AdaptiveAvgPool2d(1), nn.Flatten(1), nn.Linear(dim, num_classes))
        self.apply(_init)

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.forward_features(x))


def _init(module: nn.Module) -> None:
    if isinstance(module, nn.Conv2d):
        nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.BatchNorm2d):
        nn.init.ones_(module.weight)
        nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Linear):
        trunc_normal_(module.weight, std=0.02)
        nn.init.zeros_(module.bias)


def alternet_blocks(model: AlterNet) -> list[BlockSpec]:
    """Stem (embed), then every block: 'msa', 'conv', or 'pool' for the subsampling first block of
    stages 2.. (no branch: it cannot be switched off)."""
    specs = [BlockSpec("stem", "embed", model.stem)]
    for s, stage in enumerate(model.stages):
        for b, block in enumerate(stage):
            name = f"stages.{s}.{b}"
            if isinstance(block, MSABlock):
                specs.append(BlockSpec(name, "msa", block, branch=block.branch_out))
            elif s > 0 and b == 0:
                specs.append(BlockSpec(name, "pool", block))
            else:
                specs.append(BlockSpec(name, "conv", block, branch=block.branch_out))
    return specs


def attention_modules(model: AlterNet) -> list[tuple[str, WindowAttention]]:
    """(block name, attention) of every MSA block; hook `attention.attn_probs` for its softmax."""
    return [
        (f"stages.{s}.{b}", block.attn)
        for s, stage in enumerate(model.stages)
        for b, block in enumerate(stage)
        if isinstance(block, MSABlock)
    ]
