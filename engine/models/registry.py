"""Model registry in timm's manner: `register_model(ModelSpec(...))`, `list_models()`, `create_model()`.

A spec says how to build the architecture, how to split it into measured blocks (blocks.py),
which attention it has, how to preprocess an image for it and what its classes are. Any other timm
model of a supported family (timm_blocks.py) gets its spec on the fly, labelled with its timm name.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from pathlib import Path
from typing import Callable

import torch
from PIL import Image
from torch import nn

from ..errors import CheckpointError, UnknownModelError, WeightsUnavailableError, shown
from . import blocks as B
from .checkpoint import CheckpointMeta, read_meta
from .checkpoint import paths as checkpoint_paths
from .member_accuracy import trained_summary
from .timm_blocks import (
    FAMILIES,
    AttentionKind,
    full_branches,
    supported_families,
    timm_split,
)
from .weights import load_state_dict_strict, read_state_dict, timm_pretrained
from .weights_choice import Source, Weights

ASSETS = Path(__file__).resolve().parents[2] / "assets"
Transform = Callable[[Image.Image], torch.Tensor]


@lru_cache(maxsize=None)
def imagenet_labels() -> tuple[str, ...]:
    """The 1,000 ImageNet-1k class names, bundled in assets/imagenet_classes.txt."""
    return tuple((ASSETS / "imagenet_classes.txt").read_text().splitlines())


@lru_cache(maxsize=None)
def subset_labels(subset: str | None, count: int) -> tuple[str, ...]:
    """Class names of an ImageNet subset timm knows (first synonym each), else 'class 0', 'class 1', ..."""
    from timm.data import ImageNetInfo

    if subset is None:
        return tuple(f"class {i}" for i in range(count))
    info = ImageNetInfo(subset)
    return tuple(info.index_to_description(i).split(",")[0] for i in range(count))


def timm_transform(model: nn.Module) -> Transform:
    """timm's own eval transform for the model (resize, center crop, normalize)."""
    from timm.data import create_transform, resolve_data_config

    return create_transform(**resolve_data_config({}, model=model))


@dataclass(frozen=True)
class ModelSpec:
    """Everything the engine needs to know about one registered model."""

    name: str
    label: str
    family: str
    build: Callable[..., nn.Module]
    blocks: Callable[[nn.Module], list[B.BlockSpec]]
    attention: AttentionKind | None = None
    dataset: str = "imagenet"
    labels: Callable[[], tuple[str, ...]] = imagenet_labels
    transform: Callable[[nn.Module], Transform] = timm_transform
    pretrained: Callable[..., tuple[nn.Module, str]] | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)
    parameters: int = 0  # known without building for any-timm specs (read on the meta device); 0: not counted


@dataclass
class LoadedModel:
    """A built model in eval mode on its device, with what it needs to be analyzed."""

    spec: ModelSpec
    module: nn.Module
    weights: str  # what they are, for labels: 'pretrained (timm, ...)', 'random (seed 0)', 'trained here: ...'
    device: torch.device
    transform: Transform
    choice: Weights = Weights.pretrained()  # the weights asked for
    forward_passes: int = 0

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def random(self) -> bool:
        return self.choice.is_random


_REGISTRY: dict[str, ModelSpec] = {}


def register_model(spec: ModelSpec) -> ModelSpec:
    _REGISTRY[spec.name] = spec
    return spec


def list_models() -> list[str]:
    """The registered (curated) models; `get_spec` also takes any timm model of `supported_families()`."""
    return list(_REGISTRY)


def get_spec(name: str) -> ModelSpec:
    """A registered model's spec, else one made on the fly for a timm model of a supported family."""
    return _REGISTRY.get(name) or _timm_model_spec(name)


@lru_cache(maxsize=256)
def _timm_model_spec(name: str) -> ModelSpec:
    """The spec of any timm model of a supported family, read from the model built on the meta device
    (no memory, no weights): its class gives the family, block split and attention."""
    import timm
    from timm.data import infer_imagenet_subset

    def unknown() -> UnknownModelError:
        close = difflib.get_close_matches(
            name.split(".")[0], list(dict.fromkeys([*_REGISTRY, *timm.list_models()])), n=3, cutoff=0.8
        )
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        return UnknownModelError(
            f"unknown model '{shown(name)}'{hint}: neither a registered model ({', '.join(_REGISTRY)}) nor a timm "
            f"model; any timm model of the supported families works: {'; '.join(supported_families())}"
        )

    if not timm.is_model(name):
        raise unknown()
    try:
        model = timm.create_model(name, pretrained=False, device="meta")
    except (
        RuntimeError,
        ValueError,
        KeyError,
    ):  # e.g. a pretrained tag timm does not know: 'vit_tiny_patch16_224.evil'
        raise unknown() from None
    try:
        family, split, attention = timm_split(model)
    except UnknownModelError as exc:
        raise UnknownModelError(f"timm model '{shown(name)}': {exc}") from None
    if not model.num_classes:
        raise UnknownModelError(f"timm model '{name}' has no classifier head; take a variant fine-tuned to classify")
    labels = imagenet_labels
    if model.num_classes != 1000:
        labels = partial(subset_labels, infer_imagenet_subset(model), model.num_classes)
    trained = model.pretrained_cfg.get("hf_hub_id") or name
    spec = _timm_spec(name, name, family, split, attention, labels, trained)
    return replace(spec, parameters=sum(p.numel() for p in model.parameters()))


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """'auto' is CUDA when present, else CPU."""
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def create_model(
    name: str, weights: Weights | str = "pretrained", seed: int = 0, device: str | torch.device = "auto", **options
) -> LoadedModel:
    """Build a model (registered, or any timm model of a supported family) with `weights`: a Weights, or
    its spelling 'pretrained', 'random' (seeded with `seed`) or a checkpoint path.

    `options` go to the spec's `build` (for example an AlterNet's MSA placement).
    """
    spec, choice = get_spec(name), Weights.parse(weights, seed)
    if choice.source is Source.PRETRAINED:
        if spec.pretrained is None:
            raise WeightsUnavailableError(f"{name}: no pretrained weights are known; use 'random' or a checkpoint")
        module, description = spec.pretrained(**options)
    elif choice.source is Source.RANDOM:
        module, description = _seeded_build(spec, choice.seed, options), f"random (seed {choice.seed})"
    else:
        module, description = _from_checkpoint(spec, choice.path, choice.seed, options)
    target = resolve_device(device)
    module = module.eval().to(target)
    return LoadedModel(spec, module, description, target, spec.transform(module), choice)


def _seeded_build(spec: ModelSpec, seed: int, options: dict) -> nn.Module:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return spec.build(**options)


def load_checkpoint(path: str | Path, **build_options) -> tuple[nn.Module, CheckpointMeta]:
    """Rebuild the model a checkpoint's sidecar names (plus `build_options`, e.g. drop_path_rate) and load
    its weights strictly (a CheckpointError names the differing keys); in eval mode on the CPU, in fp32."""
    weights = checkpoint_paths(path)[0]
    meta = read_meta(path)
    with torch.random.fork_rng(devices=[]):
        module = get_spec(meta.architecture).build(**meta.options, **build_options)
    state = {k: v.float() if v.is_floating_point() else v for k, v in read_state_dict(weights).items()}
    load_state_dict_strict(module, state, str(weights))
    return module.eval(), meta


def _from_checkpoint(spec: ModelSpec, path: Path, seed: int, options: dict) -> tuple[nn.Module, str]:
    """Weights from `path` and their label; a checkpoint with a JSON sidecar rebuilds the architecture
    it names and is labelled with how it was trained."""
    if not checkpoint_paths(path)[1].is_file():
        module = _seeded_build(spec, seed, options)
        load_state_dict_strict(module, read_state_dict(path), str(path))
        return module, str(path)
    rebuilt, meta = load_checkpoint(path)
    if meta.architecture != spec.name:
        raise CheckpointError(f"checkpoint {Path(path).name} is a {meta.architecture}, not a {spec.name}")
    return rebuilt, f"{trained_summary(path)} ({Path(path).name})"


def _timm_spec(
    name: str,
    label: str,
    family: str,
    split,
    attention=None,
    labels=imagenet_labels,
    trained: str = "timm, ImageNet-1k",
) -> ModelSpec:
    import timm

    options = FAMILIES[family].random_options  # every branch randomly initialised (timm_blocks.Family)
    return ModelSpec(
        name=name,
        label=label,
        family=family,
        build=lambda: full_branches(timm.create_model(name, pretrained=False, **options)),
        blocks=split,
        attention=attention,
        labels=labels,
        pretrained=lambda: (timm_pretrained(name), f"pretrained ({trained})"),
    )


for _args in (
    ("resnet50", "ResNet-50", "resnet", B.resnet_blocks, None),
    ("vit_tiny_patch16_224", "ViT-Ti/16", "vit", B.vit_blocks, "global"),
    ("vit_small_patch16_224", "ViT-S/16", "vit", B.vit_blocks, "global"),
    ("deit_small_patch16_224", "DeiT-S", "vit", B.vit_blocks, "global"),
    ("swin_tiny_patch4_window7_224", "Swin-T", "swin", B.swin_blocks, "window"),
    ("pit_ti_224", "PiT-Ti", "pit", B.pit_blocks, "global"),
):
    register_model(_timm_spec(*_args))
