"""Every map has a colour bar with numbers: the map's own values (an attention weight, a logit's gradient, an
attribution in logit units) under the bar's ends, said again in the caption (and so in the text alternative);
signed maps (Integrated Gradients, Occlusion) are drawn centred on 0 with a diverging, colour-blind-safe map."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from plotly.colors import get_colorscale, hex_to_rgb, unlabel_rgb

from app.backend.service import AUTO, MapKey, ModelRun, Service
from app.exports import export
from app.views import alt_text
from app.views.attention import ATTENTION, DISPLAY_SIZE, MEAN, UNITS, ViewOptions, lookup_table, overlay, render
from app.views.colour_bar import DIVERGING, MARGIN, STRIP, TYPE_PX, Scale, _font, _tick_rows, number, with_colour_bar


@pytest.fixture(scope="module")
def runs(one_thread, sample_photo: Path) -> list[ModelRun]:
    """The CIFAR ViT (attention) and PreAct ResNet (Grad-CAM), bundled weights, on the cat photo."""
    return Service.start().analyze(str(sample_photo), ["vit_cifar", "preact_resnet"], AUTO)


def rgb(colour: str) -> np.ndarray:
    return np.array(hex_to_rgb(colour) if colour.startswith("#") else unlabel_rgb(colour), dtype=float)


def ends(colormap: str) -> tuple[np.ndarray, np.ndarray]:
    """The first and last colours of a plotly colour scale ('_r': reversed), read from plotly's own table."""
    scale = get_colorscale(colormap.removesuffix("_r"))
    first, last = rgb(scale[0][1]), rgb(scale[-1][1])
    return (last, first) if colormap.endswith("_r") else (first, last)


def bar_row(image: np.ndarray) -> np.ndarray:
    """The middle row of the colour bar in the strip under the map."""
    return image[DISPLAY_SIZE + 12].astype(float)


@pytest.mark.parametrize("colormap", ["inferno", "viridis", "greys_r"])
def test_an_attention_maps_bar_runs_its_colour_map_between_its_smallest_and_largest_weight(runs, colormap: str):
    vit = runs[0]
    image, caption = render(vit, ViewOptions(head=MEAN), colormap, 0.6)
    assert image.shape == (DISPLAY_SIZE + STRIP, DISPLAY_SIZE, 3)
    low_colour, high_colour = ends(colormap)
    row = bar_row(image)
    assert np.abs(row[MARGIN] - low_colour).max() <= 3 and np.abs(row[-MARGIN - 1] - high_colour).max() <= 3
    weights = vit.result.attention.layers[-1].maps[0].mean(axis=0)  # the last layer, mean of heads
    scale = f"Colour scale: {number(float(weights.min()))} to {number(float(weights.max()))}, attention weight"
    assert scale in caption
    assert scale in alt_text.map_of("Where it looks", caption)  # a screen reader hears the numbers too


def test_grad_cam_of_a_cnn_has_its_activations_on_the_bar(runs):
    resnet = runs[1]
    image, caption = render(resnet, ViewOptions(), "inferno", 0.6)
    assert image.shape[0] == DISPLAY_SIZE + STRIP
    cam = resnet.gradcam
    assert f"Colour scale: {number(float(cam.min()))} to {number(float(cam.max()))}, Grad-CAM activation" in caption


def test_a_signed_map_is_centred_on_zero_blue_against_red_for():
    grey = np.full((4, 6, 3), 128, np.uint8)
    heat = np.array([[-2.0, -2.0, 0.0, 0.0, 1.0, 1.0]], np.float32).repeat(4, axis=0)  # against, 0, for (half)
    drawn = overlay(grey, heat, opacity=1.0, signed=True).astype(float)
    blue, red = ends(DIVERGING)
    assert np.abs(drawn[1, 0] - blue).max() <= 3  # the strongest magnitude is the scale's end
    assert drawn[1, 2, 2] > 200 and drawn[1, 2, 0] > 200  # 0 is near white, whatever the map's range
    assert drawn[1, 5, 0] > drawn[1, 5, 2] + 40 and np.abs(drawn[1, 5] - red).max() > 40  # red, not the end
    assert drawn[1, 0, 2] > drawn[1, 0, 0] + 40


def test_integrated_gradients_is_drawn_signed_with_its_attributions_on_the_bar(runs):
    service, resnet = Service.start(), runs[1]
    target = resnet.result.predictions[0][0].index
    key = MapKey.of("Integrated Gradients", target, 8)
    resnet.keep(key, service.attribution(resnet, "Integrated Gradients", target, 8))
    image, caption = render(resnet, ViewOptions(method="Integrated Gradients", steps=8), "inferno", 0.6)
    raw = resnet.maps[key].raw
    peak = number(float(np.abs(raw).max()))
    assert f"Colour scale: blue -{peak} (against the class), white 0, red {peak} (for it)" in caption
    blue, red = ends(DIVERGING)
    row = bar_row(image)
    assert np.abs(row[MARGIN] - blue).max() <= 3 and np.abs(row[-MARGIN - 1] - red).max() <= 3
    assert (raw < 0).any() and (raw > 0).any()  # a real signed map: both colours are in use


def test_a_bar_in_type_for_paper_keeps_its_numbers_apart_and_its_unit_whole():
    """At the handout's type (export.BAR_PX, for a map printed 40 mm wide), a signed scale whose ends would run into
    its middle puts 'against' and 'for' in a row under the numbers, and a unit too long for a line takes two; on
    screen the strip is as it was."""
    grey, table = np.full((DISPLAY_SIZE, DISPLAY_SIZE, 3), 128, np.uint8), lookup_table(DIVERGING)
    signed = Scale(-0.00123, 0.00123, UNITS["Integrated Gradients"], signed=True)
    plain = Scale(0.0, 0.00123, UNITS["Integrated Gradients"])
    assert with_colour_bar(grey, signed, table).shape[0] == DISPLAY_SIZE + STRIP  # on screen: as before
    assert _tick_rows(signed, _font(TYPE_PX), DISPLAY_SIZE, 4) == [signed.ticks()]
    big = export.BAR_PX
    assert _tick_rows(signed, _font(big), DISPLAY_SIZE, 4) == [("-0.00123", "0", "0.00123"), ("against", "", "for")]
    row = round(15 * big / TYPE_PX)  # a row of ticks at that size
    heights = [with_colour_bar(grey, scale, table, big).shape[0] for scale in (signed, plain)]
    assert heights[0] == heights[1] + row > DISPLAY_SIZE + STRIP
    long, short = (Scale(0.0, 1.0, UNITS[m]) for m in (ATTENTION, "Grad-CAM"))  # two lines, one
    assert with_colour_bar(grey, long, table, big).shape[0] - with_colour_bar(grey, short, table, big).shape[0] == (
        round(14 * big / TYPE_PX)
    )
