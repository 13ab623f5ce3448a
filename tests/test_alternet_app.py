"""The AlterNet tab and lesions on the real app server: over HTTP with gradio_client, and in Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError

from engine.models.cifar_vit import DEFAULTS as VIT_DEFAULTS

PAPER_SPEC = "s2:4,s3:2,s3:4,s3:6,s4:2,s4:4"
PAPER_MSA = [7, 9, 11, 13, 15, 17]  # stem 0, stage 1 at 1-3, stage 2 at 4-7, stage 3 at 8-13, stage 4 at 14-17
POOL = [4, 8, 14]
TIMEOUT_MS = 120_000


def fig8(outputs: list) -> dict:
    """The Fig 8 plot among an event's outputs."""
    return next(o for o in outputs if isinstance(o, dict) and "Fig 8" in str(o.get("plot", "")))


def curves(plot: dict) -> dict[str, list[tuple[float, str]]]:
    """A Fig 8/9 plot's model curves: legend name -> (y, kind) per block."""
    figure = json.loads(plot["plot"])
    return {
        trace["name"]: [(y, kind) for y, (_, kind) in zip(trace["y"], trace["customdata"])]
        for trace in figure["data"]
        if trace.get("customdata")
    }


def kinds_at(blocks: list[tuple[float, str]], kind: str) -> list[int]:
    return [i for i, (_, k) in enumerate(blocks) if k == kind]


def test_buildup_step_6_is_the_papers_model_with_msas_where_fig_11_has_them(client: Client, sample_photo: Path):
    *grid, spec = client.predict(6, api_name="/alternet_step")
    assert spec == PAPER_SPEC and grid == [[], [4], [2, 4, 6], [2, 4]]
    drawing, cost, banner, seen, high_frequency, variance, source, accuracy = client.predict(
        spec, handle_file(str(sample_photo)), api_name="/alternet"
    )
    assert drawing.count('fill="#b8b8b8"') == 6 + 1  # six gray MSA boxes, plus the legend's
    assert "2.14 M** parameters" in cost and "GFLOPs" in cost and "latency" not in cost  # width 16
    assert (
        banner["value"] == "" and not banner["visible"] and "step 6" in source and not accuracy
    )  # all three models are trained and bundled
    assert Path(seen["value"]).stat().st_size > 0 and "32×32" in seen["alt_text"]  # the input, and what it shows
    for plot in (high_frequency, variance):
        alternet, resnet, vit = curves(plot).items()
        assert alternet[0] == "AlterNet, step 6 (6 MSAs)"
        assert kinds_at(alternet[1], "msa") == PAPER_MSA and kinds_at(alternet[1], "pool") == POOL
        assert kinds_at(resnet[1], "msa") == [] and kinds_at(resnet[1], "pool") == POOL
        assert kinds_at(vit[1], "msa") == list(range(1, 1 + 2 * VIT_DEFAULTS["depth"], 2))  # embed, then msa/mlp pairs


def test_a_bad_spec_gives_a_readable_error_and_the_next_request_works(client: Client, sample_photo: Path):
    *controls, problem = client.predict("s3:1,s9:2", api_name="/alternet_spec")  # named inline, controls kept
    assert problem["visible"] and "block 1 of stage 3 in 's3:1' cannot be an MSA block" in problem["value"]
    assert "stage 9 in 's9:2' is out of range" in problem["value"]
    with pytest.raises(AppError, match="bad MSA token 'stage4'"):
        client.predict("s4:4,stage4", handle_file(str(sample_photo)), api_name="/alternet")
    *controls, problem = client.predict(" S4:4 ", api_name="/alternet_spec")
    assert controls == ["s4:4", 1, [], [], [], [4]] and not problem["visible"]
    *_, source, _ = client.predict("s4:4", handle_file(str(sample_photo)), api_name="/alternet")
    assert "build-up step 1" in source


def test_subset_average_gives_trained_accuracies_and_chance_level_for_an_untrained_placement(client: Client):
    *_, banner, _, high_frequency, _, source, accuracy = client.predict("none", 100, api_name="/alternet_subset")
    assert (
        "mean over 100 CIFAR-10 test images" in source and banner["value"] == ""
    )  # step 0: the PreAct ResNet's checkpoint
    assert "chance level" not in accuracy
    assert (
        all(float(value) > 25 for value in re.findall(r"\*\*([0-9.]+)%\*\*", accuracy)) and accuracy.count("%**") == 3
    )
    assert kinds_at(next(iter(curves(high_frequency).values())), "msa") == []
    *_, banner, _, _, _, _, accuracy = client.predict("s1:2", 20, api_name="/alternet_subset")  # no checkpoint
    assert (
        accuracy.count("chance level: the weights are random") == 1
        and "AlterNet, custom" in banner["value"]
        and banner["visible"]
    )


def test_a_lesion_changes_the_results_and_clearing_it_restores_them_bit_for_bit(client: Client, sample_photo: Path):
    photo = handle_file(str(sample_photo))
    before = client.predict(photo, ["resnet50"], "random", api_name="/analyze")
    page = client.predict(photo, ["resnet50", "vit_tiny_patch16_224"], "random", "inferno", 0.6, True, api_name="/run")
    predictions, high_frequency = page[3]["value"], fig8(page)  # status, the photo analyzed, the first column, ...
    lesion = next(o for o in page if isinstance(o, dict) and str((o.get("choices") or [[""]])[0][0]).startswith("1 "))
    units = [index for _, index in lesion["choices"]]  # the first column's lesion picker
    assert 4 not in units and 0 not in units and units[:3] == [1, 2, 3]  # no subsampling or stem block

    lesioned = client.predict([5, 6], api_name="/lesion_0")
    assert lesioned[1]["value"] != predictions
    resnet = curves(fig8(lesioned))["ResNet-50 · layer2.1 and layer2.2 switched off (random weights)"]
    assert resnet != curves(high_frequency)["ResNet-50 (random weights)"]
    client.predict(layer=3, head="2", api_name="/view_1")
    vit_lesioned = client.predict([1, 4], api_name="/lesion_1")  # an msa and an mlp unit of ViT-Ti
    assert "blocks.0.msa and blocks.1.mlp switched off" in vit_lesioned[0]
    caption = vit_lesioned[4]  # heading, top-5, known classes, map, its caption: as it was chosen, layer 3, head 2
    assert "layer 3/12" in caption and "head 2/3" in caption, caption
    with pytest.raises(AppError, match="4 .* is not in the list of choices"):  # a subsampling block
        client.predict([4], api_name="/lesion_0")

    client.predict([], api_name="/lesion_1")
    restored = client.predict([], api_name="/lesion_0")
    assert restored[1]["value"] == predictions and fig8(restored) == high_frequency
    assert client.predict(photo, ["resnet50"], "random", api_name="/analyze") == before


def wait_for_drawing(page, spec: str) -> None:
    label = f"AlterNet architecture, MSA blocks {spec}"
    page.wait_for_function(
        "label => document.querySelector('#alternet-svg').getAttribute('aria-label') === label",
        arg=label,
        timeout=TIMEOUT_MS,
    )


def test_alternet_tab_in_the_browser(page, server_url: str, sample_photo: Path, output_dir: Path):
    page.goto(server_url)
    page.locator("input[type=file]").first.set_input_files(str(sample_photo))
    page.get_by_role("tab", name="AlterNet (Section 4)").click()
    svg = page.locator("#alternet-svg")
    svg.wait_for(timeout=TIMEOUT_MS)
    page.locator("#alternet-variance .js-plotly-plot").wait_for(timeout=TIMEOUT_MS)
    assert PAPER_SPEC in svg.get_attribute("aria-label")
    page.locator("#alternet-steps").get_by_text("✓").first.wait_for()
    assert not page.locator("#alternet-banner").is_visible()  # trained models, offline: no (empty) warning strip
    page.screenshot(path=str(output_dir / "alternet.png"), full_page=True)
    legend = page.locator("#alternet-high-frequency .legendtext").evaluate_all("els => els.map(e => e.textContent)")
    assert "AlterNet, step 6 (6 MSAs)" in legend and not any("random" in name for name in legend)

    page.locator("#alternet-step").get_by_label("3", exact=True).check()
    wait_for_drawing(page, "s3:6,s4:2,s4:4")
    page.locator("#alternet-stage-2").get_by_label("block 4").check()  # a custom placement
    wait_for_drawing(page, "s2:4,s3:6,s4:2,s4:4")
    page.wait_for_function(
        "() => document.querySelector('#alternet-source').innerText.includes('custom')", timeout=TIMEOUT_MS
    )
    assert page.locator("#alternet-spec textarea, #alternet-spec input").first.input_value() == "s2:4,s3:6,s4:2,s4:4"
    assert svg.locator('rect[fill="#b8b8b8"]').count() == 4 + 1
    banner = page.locator("#alternet-banner").inner_text()
    assert "random weights" in banner and "custom" in banner and "PreAct" not in banner  # only the AlterNet
    assert page.locator("#alternet-input img").first.get_attribute("src")
    legend = page.locator("#alternet-high-frequency .legendtext").evaluate_all("els => els.map(e => e.textContent)")
    assert "AlterNet, custom (4 MSAs) (random weights)" in legend


def test_the_tabs_figures_export_as_png_svg_and_the_drawing(client: Client, sample_photo: Path):
    import zipfile

    client.predict("s4:4", handle_file(str(sample_photo)), api_name="/alternet")
    with zipfile.ZipFile(client.predict(api_name="/alternet_export")) as archive:
        names = set(archive.namelist())
        assert names == {
            "fig8-high-frequency.png",
            "fig8-high-frequency.svg",
            "fig9-variance.png",
            "fig9-variance.svg",
            "fig11-alternet-s4b4.svg",
        }
        assert b'aria-label="AlterNet architecture, MSA blocks s4:4"' in archive.read("fig11-alternet-s4b4.svg")
