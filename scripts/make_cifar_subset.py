"""Writes assets/cifar10_<split>_subset.npz: the first images per class of a CIFAR-10 ImageFolder tree.

    python scripts/make_cifar_subset.py DIR                          # 100 test images per class
    python scripts/make_cifar_subset.py DIR --split train --per-class 50

DIR has test/<class>/*.jpg and train/<class>/*.jpg (the shared JPEG-q75 copy). The first files of
each class in sorted order; pixels as decoded (uint8, 32x32x3), labels as
class indices in CIFAR-10 order. The test subset serves accuracies and dataset-average curves; the
training subset the loss landscapes and Hessian spectra, which the paper measures on training data.
"""

import argparse
from pathlib import Path

import numpy as np
from PIL import Image

CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


def main(root: Path, split: str, per_class: int) -> None:
    images, labels, names = [], [], []
    for index, name in enumerate(CLASSES):
        for path in sorted((root / split / name).glob("*.jpg"))[:per_class]:
            images.append(np.asarray(Image.open(path).convert("RGB")))
            labels.append(index)
            names.append(f"{split}/{name}/{path.name}")
    out = Path(__file__).resolve().parent.parent / "assets" / f"cifar10_{split}_subset.npz"
    np.savez_compressed(
        out,
        images=np.stack(images),
        labels=np.array(labels, dtype=np.int64),
        files=np.array(names),
        note=np.array(f"CIFAR-10 {split} images, JPEG-q75 re-encoding of CIFAR-10 (not the original release)"),
    )
    print(f"{out}: {len(images)} images, {out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--split", choices=("test", "train"), default="test")
    parser.add_argument("--per-class", type=int, default=100)
    args = parser.parse_args()
    main(args.root, args.split, args.per_class)
