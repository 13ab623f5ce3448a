"""A ViT for CIFAR: timm's VisionTransformer at 32x32, sized to train on a 2-core CPU.

The paper's ViT-Ti/2 (embed 192, depth 12, 3 heads, 256 patch tokens) trains at about 10 images/s on
such a CPU; the default here, patch 4 (64 tokens plus CLS), embed 128, depth 8, 4 heads, trains at
about 94 images/s, like the width-16 AlterNet family. `patch_size=2, embed_dim=192, depth=12,
num_heads=3` builds the paper's model.
"""

from __future__ import annotations

from timm.models.vision_transformer import VisionTransformer

DEFAULTS = {"patch_size": 4, "embed_dim": 128, "depth": 8, "num_heads": 4}


def vit_cifar(
    num_classes: int = 10,
    drop_path_rate: float = 0.0,
    patch_size: int = DEFAULTS["patch_size"],
    embed_dim: int = DEFAULTS["embed_dim"],
    depth: int = DEFAULTS["depth"],
    num_heads: int = DEFAULTS["num_heads"],
) -> VisionTransformer:
    return VisionTransformer(
        img_size=32,
        patch_size=patch_size,
        embed_dim=embed_dim,
        depth=depth,
        num_heads=num_heads,
        num_classes=num_classes,
        drop_path_rate=drop_path_rate,
    )
