"""The CIFAR-10 models of the paper, registered in engine.models.registry: AlterNet, pre-activation ResNet, ViT.

Their pretrained weights are checkpoints bundled in assets/checkpoints/ (see engine.models.checkpoint);
a placement with no bundled checkpoint raises WeightsUnavailableError rather than going random.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from PIL import Image
from torch import nn

from ..errors import WeightsUnavailableError
from . import blocks as B
from .alternet import AlterNet, alternet_blocks
from .cifar_vit import DEFAULTS as VIT_DEFAULTS
from .cifar_vit import vit_cifar
from .member_accuracy import trained_summary
from .placement import PAPER_DEPTHS, Placement, buildup_sequence, parse
from .registry import ASSETS, ModelSpec, Transform, get_spec, load_checkpoint, register_model
from .weights_choice import Weights

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
CIFAR10_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR10_STD = (0.2470, 0.2435, 0.2616)
CHECKPOINTS = ASSETS / "checkpoints"
DEFAULT_WIDTH = 16  # the width of the bundled family (the paper's ResNet-50 is 64)


def cifar10_labels() -> tuple[str, ...]:
    return CIFAR10_CLASSES


def square_crop(image: Image.Image) -> Image.Image:
    """The centered square of the image's shorter side."""
    from torchvision.transforms import functional as TF

    return TF.center_crop(image, [min(image.size)] * 2)


def cifar_transform(model: nn.Module | None = None) -> Transform:
    """PIL image -> normalized (3, 32, 32) tensor: center crop to a square, bicubic resize to 32x32."""
    from torchvision import transforms as T

    return T.Compose(
        [
            square_crop,
            T.Resize((32, 32), interpolation=T.InterpolationMode.BICUBIC, antialias=True),
            T.ToTensor(),
            T.Normalize(CIFAR10_MEAN, CIFAR10_STD),
        ]
    )


def resolve_placement(msa: str | Placement | None, depths: Sequence[int]) -> Placement:
    """`msa` as a Placement for `depths`; None is the end of the build-up (the paper's model)."""
    return buildup_sequence(tuple(depths))[-1] if msa is None else parse(msa, tuple(depths))


def build_alternet(
    msa: str | Placement | None = None,
    depths: Sequence[int] = PAPER_DEPTHS,
    width: int = DEFAULT_WIDTH,
    num_classes: int = 10,
    drop_path_rate: float = 0.0,
) -> AlterNet:
    return AlterNet(resolve_placement(msa, depths), width, num_classes, drop_path_rate=drop_path_rate)


def build_preact_resnet(
    depths: Sequence[int] = PAPER_DEPTHS, width: int = DEFAULT_WIDTH, num_classes: int = 10, drop_path_rate: float = 0.0
) -> AlterNet:
    return AlterNet(Placement.none(tuple(depths)), width, num_classes, drop_path_rate=drop_path_rate)


def checkpoint_stem(name: str, options: dict) -> str:
    """The bundled checkpoint's file stem for a model built with `options`:
    `name[-placement tag][-d<depths>][-w<width>]` (ViT: `vit_cifar[-p<patch>][-d<dim>][-l<depth>][-h<heads>]`),
    defaults left out. An AlterNet without MSA blocks shares the PreAct ResNet's checkpoint."""
    parts = [name]
    if name in ("alternet", "preact_resnet"):
        depths = tuple(options.get("depths") or PAPER_DEPTHS)
        placement = resolve_placement(options.get("msa"), depths) if name == "alternet" else None
        if placement is not None and placement.total == 0:  # an AlterNet without MSAs is the PreAct ResNet
            parts = ["preact_resnet"]
        elif placement is not None:
            parts.append(placement.tag)
        if depths != PAPER_DEPTHS:
            parts.append("d" + "_".join(map(str, depths)))
        if options.get("width", DEFAULT_WIDTH) != DEFAULT_WIDTH:
            parts.append(f"w{options['width']}")
    if name == "vit_cifar":
        short = {"patch_size": "p", "embed_dim": "d", "depth": "l", "num_heads": "h"}
        parts += [f"{short[k]}{options[k]}" for k in short if options.get(k, VIT_DEFAULTS[k]) != VIT_DEFAULTS[k]]
    return "-".join(parts)


def bundled_path(name: str, options: dict | None = None) -> Path | None:
    """The bundled checkpoint of CIFAR model `name` built with `options`, or None if none is bundled."""
    path = CHECKPOINTS / f"{checkpoint_stem(name, options or {})}.safetensors"
    return path if path.is_file() else None


def auto_weights(name: str, online: bool, seed: int = 0, **options) -> Weights:
    """What weights 'auto' means for model `name`: pretrained where trained weights can be had (a CIFAR
    model's bundled checkpoint; a timm model's hub weights when the hub answers), else random with `seed`
    (and labelled so)."""
    if get_spec(name).dataset == "cifar10":  # their trained weights are bundled, not on the hub
        trained = bundled_path(name, options) is not None
    else:
        trained = online
    return Weights.pretrained() if trained else Weights.random(seed)


def bundled_names() -> list[str]:
    """The names (file stems) of the bundled checkpoints, e.g. 'alternet-s4b4', 'vit_cifar'."""
    return sorted(path.stem for path in CHECKPOINTS.glob("*.safetensors"))


def bundled(stem: str, what: str) -> tuple[nn.Module, str]:
    """The bundled checkpoint assets/checkpoints/<stem>.safetensors, with a one-line description."""
    path = CHECKPOINTS / f"{stem}.safetensors"
    if not path.is_file():
        raise WeightsUnavailableError(
            f"no trained checkpoint is bundled for {what} (looked for assets/checkpoints/{path.name}); "
            "use weights 'random', a checkpoint path, or train one with `python -m engine.training.train`"
        )
    module, _ = load_checkpoint(path)
    return module, f"{trained_summary(path)} ({path.name})"


def pretrained_alternet(
    msa: str | Placement | None = None, depths: Sequence[int] = PAPER_DEPTHS, width: int = DEFAULT_WIDTH
) -> tuple[nn.Module, str]:
    placement = resolve_placement(msa, depths)
    stem = checkpoint_stem("alternet", {"msa": placement, "depths": depths, "width": width})
    return bundled(stem, f"AlterNet with MSA placement '{placement}'")


def pretrained_preact_resnet(depths: Sequence[int] = PAPER_DEPTHS, width: int = DEFAULT_WIDTH) -> tuple[nn.Module, str]:
    stem = checkpoint_stem("preact_resnet", {"depths": depths, "width": width})
    return bundled(stem, "the pre-activation ResNet")


def pretrained_vit_cifar(**options) -> tuple[nn.Module, str]:
    return bundled(checkpoint_stem("vit_cifar", options), "the CIFAR ViT")


def _cifar_spec(
    name: str, label: str, family: str, build: Callable, blocks: Callable, attention, pretrained
) -> ModelSpec:
    return ModelSpec(
        name=name,
        label=label,
        family=family,
        build=build,
        blocks=blocks,
        attention=attention,
        dataset="cifar10",
        labels=cifar10_labels,
        transform=cifar_transform,
        pretrained=pretrained,
        tags=("cifar10",),
    )


register_model(
    _cifar_spec(
        "alternet",
        "AlterNet (CIFAR, ~2 M params)",
        "alternet",
        build_alternet,
        alternet_blocks,
        "window",
        pretrained_alternet,
    )
)
register_model(
    _cifar_spec(
        "preact_resnet",
        "PreAct ResNet (CIFAR, 1.8 M params)",
        "resnet",
        build_preact_resnet,
        alternet_blocks,
        None,
        pretrained_preact_resnet,
    )
)
register_model(
    _cifar_spec(
        "vit_cifar", "ViT/4 (CIFAR, 1.6 M params)", "vit", vit_cifar, B.vit_blocks, "global", pretrained_vit_cifar
    )
)
