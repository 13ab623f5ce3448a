"""The attribution methods in the app: each column's method and class pickers in both front ends, computed
once per photo, model and lesion, the methods that do not apply left out with the reason, and /analyze."""

from __future__ import annotations

import time
from concurrent.futures import CancelledError
from pathlib import Path

import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError
from streamlit.testing.v1 import AppTest

from app.streamlit_ui.resources import service
from engine.analyses.attributions import Occlusion
from tests.conftest import ROOT
from tests.helpers.streamlit_apptest import ckey

MODELS = ["resnet50", "vit_tiny_patch16_224"]


def test_a_method_is_computed_once_per_run_and_its_caption_names_method_and_class(client: Client, sample_photo: Path):
    out = client.predict(handle_file(str(sample_photo)), MODELS, "random", "inferno", 0.6, True, api_name="/run")
    methods = [o for o in out if isinstance(o, dict) and "Gradient x attention" in str(o.get("choices", ""))]
    assert methods, "the ViT's column offers gradient x attention"
    passes = client.predict(api_name="/forward_passes")
    _, caption = client.predict(method="Integrated Gradients", steps=16, api_name="/view_1")
    assert caption.startswith("Integrated Gradients of the top-1 class") and "16 steps" in caption
    computed = client.predict(api_name="/forward_passes")
    assert computed > passes  # the path's passes
    client.predict(method="Integrated Gradients", steps=16, colormap="viridis", api_name="/view_1")
    assert client.predict(api_name="/forward_passes") == computed  # kept on the run: a redraw
    _, caption = client.predict(method="Occlusion", target=None, api_name="/view_0")
    assert caption.startswith("Occlusion of the top-1 class")


def test_a_method_not_offered_for_a_model_is_refused(client: Client, sample_photo: Path):
    client.predict(handle_file(str(sample_photo)), MODELS, "random", "inferno", 0.6, True, api_name="/run")
    passes = client.predict(api_name="/forward_passes")
    with pytest.raises(AppError, match="Gradient x attention is not in the list of choices"):  # not offered
        client.predict(method="Gradient x attention", api_name="/view_0")
    assert client.predict(api_name="/forward_passes") == passes  # the server keeps serving, and ran no model


def settled_passes(client: Client) -> int:
    """The server's forward-pass count once it has stopped changing (work stops at its next batch)."""
    passes = -1
    while passes != (passes := client.predict(api_name="/forward_passes")):
        time.sleep(5)
    return passes


def test_stop_ends_a_slow_map_at_its_next_batch_and_leaves_nothing_half_made(client: Client, sample_photo: Path):
    import engine

    full = Occlusion(engine.create_model("resnet50", weights="random"))._calls()  # every occluded batch
    client.predict(handle_file(str(sample_photo)), MODELS, "random", "inferno", 0.6, True, api_name="/run")
    before = client.predict(api_name="/forward_passes")
    job = client.submit(method="Occlusion", target=None, api_name="/view_0")
    while client.predict(api_name="/forward_passes") == before:  # the first occluded batch has run
        time.sleep(0.2)
    client.predict(api_name="/stop_0")
    try:
        shown = job.result()  # stopped at your request: updates that leave the page as it was
    except CancelledError:  # or cancelled before it had started
        shown = None
    caption = shown[1] if shown else None
    assert not isinstance(caption, str) or not caption.startswith("Occlusion"), shown  # no half-made map
    stopped = settled_passes(client)
    assert 0 < stopped - before < full
    _, caption = client.predict(method="Occlusion", target=None, api_name="/view_0")  # asked again: made whole
    assert caption.startswith("Occlusion of the top-1 class")
    assert client.predict(api_name="/forward_passes") - stopped == full


def test_a_columns_stop_stops_its_own_map_and_no_other(client: Client, sample_photo: Path):
    client.predict(handle_file(str(sample_photo)), MODELS, "random", "inferno", 0.6, True, api_name="/run")
    before = client.predict(api_name="/forward_passes")
    job = client.submit(method="Occlusion", target=None, api_name="/view_1")  # the ViT's column
    while client.predict(api_name="/forward_passes") == before:  # its first occluded batch has run
        time.sleep(0.2)
    client.predict(api_name="/stop_0")  # the ResNet's Stop
    _, caption = job.result()
    assert caption.startswith("Occlusion of the top-1 class"), caption  # made whole


def test_analyze_api_takes_the_method(client: Client, sample_photo: Path):
    out = client.predict(handle_file(str(sample_photo)), MODELS, "random", "Gradient x attention", api_name="/analyze")
    resnet, vit = out["models"]
    (resnet_map,), (vit_map,) = resnet["maps"], vit["maps"]
    assert "global attention" in resnet_map["unsupported"] and resnet_map["image"] == sample_photo.name
    assert vit_map["method"] == "Gradient x attention" and len(vit_map["map"]) == 224
    assert vit_map["target"] == vit["predictions"][0][0]["index"] and vit_map["image"] == sample_photo.name


def test_streamlit_offers_the_methods_per_column_and_redraws_with_the_chosen_one(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    at = AppTest.from_file(str(ROOT / "app" / "streamlit_app.py"), default_timeout=300).run()
    at.multiselect(key="models").set_value(MODELS)
    at.radio(key="weights").set_value("random")
    at.button(key="analyze").click().run()
    assert "Gradient x attention" not in at.selectbox(key=ckey(at, "method", 0)).options
    assert "Gradient x attention" in at.selectbox(key=ckey(at, "method", 1)).options
    assert any("Not offered for this model" in c.value and "Gradient x attention" in c.value for c in at.caption)
    passes = service().forward_passes
    second = at.session_state["runs"][1].result.predictions[0][1].index  # the ViT's second class
    at.selectbox(key=ckey(at, "target", 1)).set_value(second)
    at.selectbox(key=ckey(at, "method", 1)).set_value("Saliency").run()
    assert not at.exception and service().forward_passes > passes
    run = at.session_state["runs"][1]
    assert [key.method for key in run.maps] == ["Saliency"]
    assert run.maps[next(iter(run.maps))].target == run.result.predictions[0][1].index  # the chosen class
