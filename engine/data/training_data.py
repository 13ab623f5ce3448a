"""CIFAR-style training data: an ImageFolder tree (or torchvision's CIFAR-10) decoded once into uint8 tensors,
the bundled test subset as the same kind of split, and the augmentation and normalization applied on the device."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from torch import nn

from ..errors import EngineError
from ..models import checkpoint as ckpt
from ..models.cifar_family import CIFAR10_CLASSES, CIFAR10_MEAN, CIFAR10_STD
from .cifar_subset import subset

SHARED_DATA_NOTE = "JPEG-q75 re-encoding"


@dataclass
class Split:
    """Images as uint8 (N, 3, H, W) and their labels as int64 (N,)."""

    images: torch.Tensor
    labels: torch.Tensor


@dataclass
class Data:
    train: Split
    test: Split
    classes: tuple[str, ...]
    description: str


def _subset(count: int, limit: int | None, seed: int) -> torch.Tensor:
    """Indices of a seeded random subset of `limit` items (all, in order, without a limit)."""
    if limit is None or limit >= count:
        return torch.arange(count)
    return torch.randperm(count, generator=torch.Generator().manual_seed(seed))[:limit].sort().values


def _decode(path: str, size: int) -> np.ndarray:
    with Image.open(path) as image:
        image = image.convert("RGB")
        if image.size != (size, size):
            image = image.resize((size, size), Image.BICUBIC)
        return np.asarray(image)


def load_image_folder(
    root: Path, limit: int | None, seed: int, classes: tuple[str, ...] | None = None, size: int = 32
) -> tuple[Split, tuple[str, ...]]:
    """Decode an ImageFolder tree (root/<class>/*) once into memory."""
    from torchvision.datasets import ImageFolder

    if not root.is_dir():
        raise EngineError(f"dataset folder {root} does not exist")
    folder = ImageFolder(str(root))
    if classes is not None and tuple(folder.classes) != classes:
        raise EngineError(f"{root} has classes {folder.classes}, the training set has {list(classes)}")
    picked = [folder.samples[i] for i in _subset(len(folder.samples), limit, seed).tolist()]
    with ThreadPoolExecutor(8) as pool:
        arrays = list(pool.map(lambda sample: _decode(sample[0], size), picked))
    images = torch.from_numpy(np.stack(arrays)).permute(0, 3, 1, 2).contiguous()
    labels = torch.tensor([label for _, label in picked], dtype=torch.int64)
    return Split(images, labels), tuple(folder.classes)


def load_data(source: str, limit_train: int | None, limit_test: int | None, seed: int) -> Data:
    """`cifar10` (torchvision's download into .data/) or an ImageFolder directory with train/ and test/."""
    if source == "cifar10":
        from torchvision.datasets import CIFAR10

        root = ckpt.REPO / ".data"
        splits = []
        for train, limit in ((True, limit_train), (False, limit_test)):
            ds = CIFAR10(str(root), train=train, download=True)
            idx = _subset(len(ds.targets), limit, seed)
            images = torch.from_numpy(ds.data).permute(0, 3, 1, 2)[idx].contiguous()
            splits.append(Split(images, torch.tensor(ds.targets, dtype=torch.int64)[idx]))
        return Data(splits[0], splits[1], tuple(ds.classes), "CIFAR-10 (torchvision)")
    root = Path(source)
    train, classes = load_image_folder(root / "train", limit_train, seed)
    test, _ = load_image_folder(root / "test", limit_test, seed, classes)
    jpeg = next((root / "train").rglob("*.jpg"), None) is not None
    cifar = f"CIFAR-10, {SHARED_DATA_NOTE}, " if jpeg and classes == CIFAR10_CLASSES else ""
    description = f"{cifar}ImageFolder {root.name}"
    return Data(train, test, classes, description)


class Normalize(nn.Module):
    """uint8 images -> normalized float images, on the device."""

    def __init__(self, device: torch.device):
        super().__init__()
        self.mean = torch.tensor(CIFAR10_MEAN, device=device).view(1, 3, 1, 1) * 255
        self.std = torch.tensor(CIFAR10_STD, device=device).view(1, 3, 1, 1) * 255

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x.float() - self.mean) / self.std


def crop_flip(x: torch.Tensor, generator: torch.Generator, pad: int = 4) -> torch.Tensor:
    """Per image: a random crop of the zero-padded batch (pad 4) and a random horizontal flip."""
    b, _, h, w = x.shape
    offsets = torch.randint(0, 2 * pad + 1, (2, b), generator=generator).to(x.device)
    flips = torch.rand(b, generator=generator).to(x.device) < 0.5
    padded = F.pad(x, (pad, pad, pad, pad))
    rows = offsets[0, :, None] + torch.arange(h, device=x.device)
    cols = offsets[1, :, None] + torch.arange(w, device=x.device)
    cols = torch.where(flips[:, None], cols.flip(1), cols)
    batch = torch.arange(b, device=x.device)[:, None, None]
    return padded.permute(0, 2, 3, 1)[batch, rows[:, :, None], cols[:, None, :]].permute(0, 3, 1, 2)


def subset_split() -> Split:
    """The bundled CIFAR-10 test subset (engine.data.cifar_subset) as a Split."""
    images, labels = subset()
    return Split(torch.from_numpy(images).permute(0, 3, 1, 2).contiguous(), torch.from_numpy(labels).long())
