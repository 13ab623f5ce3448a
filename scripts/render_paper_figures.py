"""Render the Paper figures tab's stored figures, and Fig 12a from the bundled checkpoints, for the README:
docs/paper/<figure>.png.

python scripts/render_paper_figures.py      # after `python -m engine findings --json assets/paper_figures.json`
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.exports import export  # noqa: E402
from app.exports.paper_findings import for_slides, sections  # noqa: E402
from app.views.tour import buildup_figure, buildup_points  # noqa: E402
from engine.paper.buildup import buildup_runs  # noqa: E402

OUT = REPO / "docs" / "paper"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    figures = {**for_slides(sections({})), "paper-buildup": buildup_figure(*buildup_points(buildup_runs()))}
    for name, data in zip(figures, export.images_of(list(figures.values()), "png")):
        image = Image.open(io.BytesIO(data)).convert("RGB")
        image = image.resize((image.width // 2, image.height // 2), Image.LANCZOS)  # 1x is enough on a page
        path = OUT / f"{name}.png"
        image.save(path, optimize=True)
        print(f"{path.relative_to(REPO)}: {image.width}x{image.height}, {path.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
