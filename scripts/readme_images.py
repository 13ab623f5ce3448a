"""Refresh the README's screenshots (docs/*.jpg) from the browser tests' screenshots in test-output/.

Run the tests first (`bash scripts/test.sh`), then:  python scripts/readme_images.py [--from DIR]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Shot:
    """One README image: the test screenshot it comes from, how much of its top to keep, its width."""

    source: str
    target: str
    top_px: int | None = None  # keep the screenshot's first top_px rows (None: all of it)
    width: int | None = None  # scale to this width (None: as taken)


SHOTS = (
    Shot("app.png", "screenshot.jpg"),
    Shot("alternet.png", "alternet.jpg", width=960),
    Shot("streamlit.png", "streamlit.jpg"),
    Shot("dataset-curves.png", "dataset-curves.jpg"),
    Shot("paper.png", "paper.jpg", top_px=2300, width=960),  # the first two figures
)


def render(shot: Shot, source_dir: Path, docs: Path) -> Path:
    """Crop and scale one screenshot and save it as a JPEG under docs/."""
    image = Image.open(source_dir / shot.source).convert("RGB")
    if shot.top_px is not None:
        image = image.crop((0, 0, image.width, min(shot.top_px, image.height)))
    if shot.width is not None and shot.width != image.width:
        image = image.resize((shot.width, round(image.height * shot.width / image.width)), Image.LANCZOS)
    target = docs / shot.target
    image.save(target, quality=80, optimize=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, default=ROOT / "test-output")
    args = parser.parse_args()
    missing = [shot.source for shot in SHOTS if not (args.source / shot.source).exists()]
    if missing:
        raise SystemExit(f"{args.source} lacks {', '.join(missing)}: run the browser tests first")
    for shot in SHOTS:
        target = render(shot, args.source, ROOT / "docs")
        print(f"{shot.source} -> {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
