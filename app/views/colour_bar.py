"""The colour bar under every map: what its colours mean, in the map's own numbers and units.

A map with values of one sign runs a sequential colour map from its smallest value to its largest; a signed map
(evidence for and against a class) runs a diverging one, centred on 0, from -m to +m (m: its largest magnitude).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

DIVERGING = "RdBu_r"  # ColorBrewer's red-blue (colour-blind safe): blue below 0, near-white at 0, red above
STRIP = 52  # the bar's strip height in pixels, under a 448 px map
MARGIN = 16
INK = (26, 26, 26)


def number(value: float) -> str:
    """A tick's number: three significant digits."""
    return "0" if value == 0 else f"{value:.3g}"


@dataclass(frozen=True)
class Scale:
    """What a map's colours stand for: its values from `low` to `high`, in `unit`; `signed`: centred on 0."""

    low: float
    high: float
    unit: str
    signed: bool = False

    @classmethod
    def of(cls, values: np.ndarray, unit: str, signed: bool = False) -> Scale:
        values = np.asarray(values, dtype=np.float64)
        if signed:
            peak = float(np.abs(values).max())
            return cls(-peak, peak, unit, True)
        return cls(float(values.min()), float(values.max()), unit)

    def ticks(self) -> tuple[str, str, str]:
        """The numbers under the bar's left end, middle and right end."""
        low, middle, high = (number(v) for v in (self.low, (self.low + self.high) / 2, self.high))
        return (f"{low} against", middle, f"for {high}") if self.signed else (low, middle, high)

    def words(self) -> str:
        """The scale in a sentence, for the caption and the text alternative."""
        if self.signed:
            return (
                f"Colour scale: blue {number(self.low)} (against the class), white 0, red {number(self.high)} "
                f"(for it); {self.unit}"
            )
        return f"Colour scale: {number(self.low)} to {number(self.high)}, {self.unit}"


@lru_cache(maxsize=4)
def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


def with_colour_bar(image: np.ndarray, scale: Scale, table: np.ndarray) -> np.ndarray:
    """`image` (H, W, 3) uint8 with a white strip under it: the colour `table` (256, 3) as a bar, its low, middle
    and high values as numbers under the bar's ends and middle, and the unit."""
    height, width = image.shape[:2]
    strip = Image.new("RGB", (width, STRIP), "white")
    draw = ImageDraw.Draw(strip)
    left, right, top, bottom = MARGIN, width - MARGIN, 6, 18
    columns = np.linspace(0, 255, right - left).round().astype(int)
    strip.paste(Image.fromarray(np.repeat(table[columns][None], bottom - top, axis=0)), (left, top))
    draw.rectangle((left - 1, top - 1, right, bottom), outline=INK)
    font = _font(12)
    for tick, x, anchor in zip(scale.ticks(), (left, width // 2, right), ("la", "ma", "ra")):
        draw.line((x, bottom, x, bottom + 3), fill=INK)
        draw.text((x, bottom + 5), tick, fill=INK, font=font, anchor=anchor)
    size = 12
    while size > 8 and draw.textlength(scale.unit, font=_font(size)) > right - left:
        size -= 1
    draw.text((width // 2, bottom + 20), scale.unit, fill=INK, font=_font(size), anchor="ma")
    return np.concatenate([image, np.asarray(strip)], axis=0)
