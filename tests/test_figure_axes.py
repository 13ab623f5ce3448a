"""Fig 9's log axis is labelled with values a reader can read at every span: plotly's own minor labels
(2, 3, ... 9 as bare digits) never show."""

from __future__ import annotations

import math

import plotly.io as pio
import pytest

from app.views import figures
from tests.helpers.claims import KINDS, result


def ticks(variances: list[float]) -> tuple[list[float], list[str], str | None]:
    axis = figures.variance([result(KINDS, variances, [0] * 7)], log_y=True).layout.yaxis
    return list(axis.tickvals or []), list(axis.ticktext or []), axis.tickformat


def test_under_a_decade_values_are_printed():
    values, _, fmt = ticks([1, 1.2, 1.5, 2, 2.5, 3, 4])
    assert fmt == ".3~g" and not values


def test_one_to_three_decades_get_1_2_5_with_their_values():
    values, text, _ = ticks([0.05, 0.1, 0.3, 1, 2, 4, 6])
    assert {0.05, 0.1, 0.2, 0.5, 1, 2, 5} <= set(round(v, 6) for v in values)
    assert text[values.index(0.5)] == "0.5" and text[values.index(5)] == "5"


def test_many_decades_get_the_powers_of_ten():
    values, text, _ = ticks([1e-3, 1e-2, 1e-1, 1, 10, 100, 1000])
    assert all(math.log10(v).is_integer() for v in values) and "0.001" in text and "1e+03" in text


@pytest.mark.parametrize("default_before", ["plotly_white", "plotly"])  # "plotly": as another library sets its own
def test_every_figure_has_the_white_template(default_before, monkeypatch):
    """Plotly's default (app/views/figures.py), not named per figure: each figure still carries it, even after
    another library (Streamlit, on import) made its own template the default."""
    monkeypatch.setattr(pio.templates, "default", default_before)
    white = pio.templates["plotly_white"].to_plotly_json()
    shown = [result(KINDS, [1, 2, 3, 4, 5, 6, 7], [0] * 7)]
    for fig in (figures.variance(shown, log_y=True), figures.fourier_spectrum(shown[0]), figures.high_frequency(shown)):
        assert fig.to_plotly_json()["layout"]["template"] == white
