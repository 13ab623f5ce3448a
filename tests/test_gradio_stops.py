"""The Gradio front end's Stop, at the level of its handlers, for what a browser cannot time: a Stop pressed while
the page-wide redraw of the Integrated Gradients maps still waits in the server's queue (behind other visitors')."""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from app.backend.service import MAX_MODELS, Service
from app.gradio_ui.maps import DRAWN, Maps
from app.tabs.compare import CompareTab, Look
from app.views.attention import MEAN

STEPS = 8  # a CIFAR model's map in a second


def steps_inputs(runs: list, steps: int) -> list:
    """redraw_steps' inputs for `runs`, every column showing Integrated Gradients."""
    controls = [1, MEAN, False, "Integrated Gradients", None] * MAX_MODELS  # layer, head, rollout, method, class
    return [runs, {}, "inferno", 0.6, steps, *controls]


def test_a_stop_pressed_while_the_steps_redraw_waits_in_the_queue_stops_its_column(sample_photo: Path):
    maps = Maps(CompareTab(Service()))
    runs = maps.tab.analyze(str(sample_photo), ["preact_resnet", "vit_cifar"], None, "random", Look()).runs
    inputs, progress = steps_inputs(runs, STEPS), gr.Progress()

    request = gr.Request(session_hash="stopped-while-queued")
    maps.stop_buttons(request, *inputs)  # the steps changed: the browser's quick listener runs at once
    maps.hide_stop(0)(request)  # column 0's Stop, pressed before the redraw's turn in the queue came
    *drawn, views = maps.redraw_steps()(request, progress, *inputs)  # its turn
    first, second = drawn[:DRAWN], drawn[DRAWN : 2 * DRAWN]  # each column's map, caption and check's parts
    assert all(part == gr.skip() for part in first), "the stopped column was computed anyway"
    assert isinstance(second[0], gr.Image) and f"{STEPS} steps" in second[1]  # the other column is drawn
    assert second[2].visible is True and second[3].visible is False  # not checked yet: its Check offered
    assert set(views) == {1}

    other = gr.Request(session_hash="not-stopped")  # the same without the Stop: both drawn
    maps.stop_buttons(other, *inputs)
    *drawn, views = maps.redraw_steps()(other, progress, *inputs)
    assert all(isinstance(image, gr.Image) for image in drawn[0 : 2 * DRAWN : DRAWN]) and set(views) == {0, 1}
