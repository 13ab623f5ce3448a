"""A map's expected time is said before and while it runs, and one over the request's time budget is refused at
once: the estimate from the footprint's timed forward pass (engine.analyses.budget.check_time), on a real timm model."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.backend.service import Service
from engine.analyses.attributions import BACKWARD_RATIO, IntegratedGradients, Occlusion, estimate
from engine.analyses.budget import TooLarge, check_time, footprint
from engine.models.registry import create_model


def test_time_check_counts_the_passes_at_the_timed_forward_and_refuses_past_the_limit() -> None:
    model = create_model("resnet18", weights="random")
    need = footprint(model)
    ig = IntegratedGradients(model, steps=8)
    cost = ig.cost()
    expected = check_time(ig, need, allowed=10**6)
    assert expected.seconds == pytest.approx(need.seconds * (cost.forward + BACKWARD_RATIO * cost.backward))
    assert estimate(ig).seconds == expected.seconds  # the same estimate the page shows
    with pytest.raises(TooLarge, match=rf"Integrated Gradients on a 12 M-parameter model at 224 px .*\({cost.passes} "):
        check_time(ig, need, allowed=expected.seconds / 2)
    occlusion = Occlusion(model)  # forward passes only
    assert check_time(occlusion, need, allowed=10**6).seconds == pytest.approx(need.seconds * occlusion.cost().forward)


def test_the_maps_progress_says_how_long_it_will_take_in_all(sample_photo: Path) -> None:
    service = Service(device="cpu")
    (run,) = service.analyze(sample_photo, ["vit_cifar"], "random")
    said: list[str] = []
    service.attribution(run, "Occlusion", 0, report=lambda fraction, text: said.append(text))
    assert said and all("passes, " in text and text.endswith(" in all") for text in said), said
    assert any(word in said[0] for word in ("under a second", "about")), said
