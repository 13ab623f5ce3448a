"""The model families stay apart for every reader: their colours under simulated deuteranopia, protanopia and
tritanopia (colorspacious, Machado et al. 2009 at full severity), and a marker and a dash of their own on every
line plot, so that a line is told apart without its colour."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
from colorspacious import cspace_convert, deltaE

from app.views import figures
from app.views.figures import MODEL_COLORS
from tests.helpers.claims import KINDS, result

DEFICIENCIES = ("deuteranomaly", "protanomaly", "tritanomaly")
APART = 10.0  # CAM02-UCS colour difference: about 1 is just noticeable; 10 is plainly another colour


def rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255


def closest(colours: tuple[str, ...], deficiency: str) -> float:
    """The smallest colour difference between any two of `colours` as a reader with `deficiency` sees them."""
    seen = [
        np.clip(cspace_convert(rgb(c), {"name": "sRGB1+CVD", "cvd_type": deficiency, "severity": 100}, "sRGB1"), 0, 1)
        for c in colours
    ]
    return min(deltaE(a, b, input_space="sRGB1") for a, b in itertools.combinations(seen, 2))


@pytest.mark.parametrize("deficiency", DEFICIENCIES)
def test_the_families_colours_stay_apart_under_each_colour_blindness(deficiency: str):
    assert closest(MODEL_COLORS, deficiency) >= APART


def test_the_old_red_and_green_were_not_apart_under_deuteranopia():
    """The check tells: plotly's red and green (ViT and AlterNet before) became two olives (#8B7C1F, #96883A)."""
    assert closest(("#d62728", "#2ca02c"), "deuteranomaly") < APART


def test_every_line_of_figs_8_and_9_has_its_familys_marker_and_dash():
    names = ("preact_resnet", "vit_cifar", "alternet")
    results = [replace(result(KINDS, [1, 2, 3, 4, 5, 6, 7], [0] * 7), name=n, label=n) for n in names]
    for fig in (figures.high_frequency(results), figures.variance(results, log_y=True)):
        lines = [t for t in fig.data if t.mode and "lines" in t.mode and t.name in names]
        assert sorted(t.name for t in lines) == sorted(names)
        looks = {(t.line.color, t.line.dash, t.marker.symbol) for t in lines}
        assert len({look[1] for look in looks}) == 3 and len({look[2] for look in looks}) == 3, looks
        assert {look[0] for look in looks} == set(MODEL_COLORS[:3])


@pytest.mark.parametrize("deficiency", DEFICIENCIES)
def test_a_signed_maps_for_and_against_stay_apart_under_each_colour_blindness(deficiency: str):
    """The diverging colour map of signed maps: a value and its negative are two colours for every reader."""
    from plotly.colors import sample_colorscale, unlabel_rgb

    from app.views.colour_bar import DIVERGING

    for low, high in ((0.0, 1.0), (0.2, 0.8), (0.35, 0.65)):
        sampled = sample_colorscale(DIVERGING, [low, high])
        pair = ["#%02x%02x%02x" % tuple(round(v) for v in unlabel_rgb(c)) for c in sampled]
        assert closest(tuple(pair), deficiency) >= APART, (low, high, pair)
