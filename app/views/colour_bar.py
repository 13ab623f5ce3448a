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
STRIP = 52  # the bar's strip height in pixels, under a 448 px map, at TYPE_PX with a unit of one line
TYPE_PX = 12  # the numbers' size on screen
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


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


def _lines(words: str, font: ImageFont.FreeTypeFont, room: float) -> list[str]:
    """`words` in lines of at most `room` pixels in `font` (a word longer than that on a line of its own)."""
    lines: list[str] = []
    for word in words.split():
        if lines and font.getlength(f"{lines[-1]} {word}") <= room:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines or [""]


def _tick_rows(scale: Scale, font: ImageFont.FreeTypeFont, width: int, gap: float) -> list[tuple[str, str, str]]:
    """The ticks in one row, or, where a signed scale's ends would run into its middle (large type on a narrow
    map), their numbers in one row and 'against' and 'for' in a row under them."""
    ticks = scale.ticks()
    ends = max(font.getlength(ticks[0]), font.getlength(ticks[2]))
    if not scale.signed or ends + font.getlength(ticks[1]) / 2 + gap <= width / 2 - MARGIN:
        return [ticks]
    low, middle, high = (number(v) for v in (scale.low, (scale.low + scale.high) / 2, scale.high))
    return [(low, middle, high), ("against", "", "for")]


def with_colour_bar(image: np.ndarray, scale: Scale, table: np.ndarray, type_px: int = TYPE_PX) -> np.ndarray:
    """`image` (H, W, 3) uint8 with a white strip under it: the colour `table` (256, 3) as a bar, its low, middle
    and high values as numbers under the bar's ends and middle, and the unit. `type_px`: the numbers' size (the bar,
    its margins and the unit's type grow with it; TYPE_PX on screen, larger where a map is printed small); a unit
    too long for one line shrinks to three quarters of that size, then takes more lines."""
    height, width = image.shape[:2]
    k = type_px / TYPE_PX
    left, right, top, bottom = MARGIN, width - MARGIN, round(6 * k), round(18 * k)
    font, step = _font(type_px), round(15 * k)  # a row of ticks
    rows = _tick_rows(scale, font, width, 4 * k)
    size = type_px
    while size > round(type_px * 0.75) and _font(size).getlength(scale.unit) > right - left:
        size -= 1
    unit = _lines(scale.unit, _font(size), right - left)
    unit_top = bottom + round(20 * k) + step * (len(rows) - 1)
    strip = Image.new("RGB", (width, unit_top + round(14 * k) * len(unit)), "white")
    draw = ImageDraw.Draw(strip)
    columns = np.linspace(0, 255, right - left).round().astype(int)
    strip.paste(Image.fromarray(np.repeat(table[columns][None], bottom - top, axis=0)), (left, top))
    draw.rectangle((left - 1, top - 1, right, bottom), outline=INK)
    for x, anchor, *ticks in zip((left, width // 2, right), ("la", "ma", "ra"), *rows):
        draw.line((x, bottom, x, bottom + round(3 * k)), fill=INK)
        for row, tick in enumerate(ticks):
            draw.text((x, bottom + round(5 * k) + step * row), tick, fill=INK, font=font, anchor=anchor)
    for row, line in enumerate(unit):
        draw.text((width // 2, unit_top + round(14 * k) * row), line, fill=INK, font=_font(size), anchor="ma")
    return np.concatenate([image, np.asarray(strip)], axis=0)
