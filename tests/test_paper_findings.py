"""The paper's other analyses end to end: the stored results and how they were made, the CLI subcommands,
the Paper figures tab over the real Gradio server and in Chromium, and in Streamlit."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gradio_client import Client, handle_file
from streamlit.testing.v1 import AppTest

from app.exports.paper_findings import ORDER, PAIRS, caption, panels, stored
from engine.analyses.noise import FrequencyNoise
from engine.paper.claims import FAILS, HOLDS, NO_DIFFERENCE
from engine.paper.findings import (
    FIGURE_MEMBERS,
    FINDINGS,
    corruption_correct,
    load_member,
    member_label,
    members,
    outdated,
    pack_bits,
)
from engine.paper.verdicts import corrupted_differences, figure_verdicts
from tests.conftest import ROOT

TIMEOUT_MS = 300_000


def plotted(plot: dict) -> list[dict]:
    return json.loads(plot["plot"])["data"]


def test_every_analysis_is_stored_for_every_figure_model_with_the_command_that_made_it():
    findings = stored()["findings"]
    assert set(findings) == {*FINDINGS, "trajectory"}
    for name, finding in FINDINGS.items():
        section = findings[name]
        expected = {*FIGURE_MEMBERS, *(f"{a}:{b}" for a, b in PAIRS if name == "similarity")}
        assert expected <= set(section["models"]) <= expected | set(members()), name  # Fig 12b: the whole family
        assert section["command"].startswith("python -m engine findings") and section["options"] == finding.options
        assert not any(run["random_weights"] for run in section["models"].values())
        assert all(run["weights"].startswith("trained here") for run in section["models"].values())
    for key in FIGURE_MEMBERS:
        trajectory = findings["trajectory"]["models"][key]["result"]
        assert trajectory["r"][0] == pytest.approx(1) and trajectory["theta_deg"][0] == pytest.approx(0, abs=1e-6)


def test_a_stored_result_is_what_the_engine_computes_now_or_the_tab_says_it_is_older():
    """A stored Fig 10a heat map (the ViT's, else another member's still bundled), recomputed on the stored
    images with the stored settings. While the family is retrained, a member whose checkpoint has been
    replaced since the store was made is named in the caption instead."""
    section = stored()["findings"]["similarity"]
    changed = outdated(section)
    current = [key for key in ("vit", "step0", "step6") if member_label(key) not in changed]
    for key in FIGURE_MEMBERS:
        if member_label(key) in changed:
            assert member_label(key) + " measured at" in caption("similarity", section)
    if current:
        again = FINDINGS["similarity"].run(load_member(current[0], device="cpu"), section["images"])
        np.testing.assert_allclose(again["cka"], section["models"][current[0]]["result"]["cka"], atol=1e-4)


def test_a_result_measured_with_replaced_weights_is_flagged_and_a_random_one_is_not():
    section = copy.deepcopy(stored()["findings"]["hessian"])
    section["models"]["step6"] |= {
        "weights": "trained here: 2 epochs, 58.0% CIFAR-10 test accuracy (a.safetensors)",
        "checkpoint": "2 epochs, finished 2026-11-01T00:00:00+00:00",
    }
    section["models"]["vit"] |= {"weights": "random weights (seed 0)", "random_weights": True}
    assert "AlterNet step 6" in outdated(section) and "ViT" not in outdated(section)
    text = caption("hessian", section)
    assert "AlterNet step 6 measured at 2 epochs, 58.0% CIFAR-10 test accuracy, bundled now: " in text
    assert "press **Recompute**" in text and "ViT measured" not in text
    trajectory = copy.deepcopy(stored()["findings"]["trajectory"])
    trajectory["models"]["step0"] |= {
        "weights": "trained here: 2 epochs, 59.1% CIFAR-10 test accuracy",
        "checkpoint": "2 epochs, finished 2026-11-01T00:00:00+00:00",
    }
    assert "scripts/record_trajectories.py` stores the new checkpoints' trajectories" in caption(
        "trajectory", trajectory
    )


def test_fig_12b_verdict_carries_each_members_paired_difference_to_the_cnn():
    """Under Fig 12b: every member against the CNN on the same corrupted images (here each member's bits on 10
    images under two corruptions at two severities, made with its bundled weights), with the 95% interval over the
    test images and McNemar's p; each difference is the mean accuracies' difference, the verdict step 6's."""
    section = copy.deepcopy(stored()["findings"]["corruption"])
    plan = {"images": 10, "models": {"": {"result": {"corruptions": ["fog", "contrast"], "severities": [1, 5]}}}}
    bits = corruption_correct({key: load_member(key, device="cpu") for key in section["models"]}, plan)
    section["images"] = 10
    for key, run in section["models"].items():
        run["result"] |= {**plan["models"][""]["result"], "mean_accuracy": float(bits[key].mean())}
        run["correct"] = pack_bits(bits[key])
    text = caption("corruption", section)
    differences = corrupted_differences(section)
    assert set(differences) == set(section["models"]) - {"step0"}
    for key, d in differences.items():
        assert f"{member_label(key)} {d.numbers()}" in text and d.sources == 10 and d.images == 40
        assert d.difference == pytest.approx(100 * (bits[key].mean() - bits["step0"].mean()))
        assert d.low <= d.difference <= d.high and 0 < d.p <= 1
    (verdict,) = figure_verdicts("corruption", section)
    step6 = differences["step6"]
    signed = r"[−+]?\d+\.\d"
    assert verdict.number == step6.numbers()
    assert re.fullmatch(rf"{signed} points \[{signed}, {signed}\], p (= [\d.e-]+|< 0\.001)", step6.numbers())
    assert verdict.outcome == (NO_DIFFERENCE if step6.p >= 0.05 else HOLDS if step6.difference > 0 else FAILS)
    assert f"**Verdict: {verdict.outcome}** ({step6.numbers()}" in text and "40 corrupted copies" in text


def test_cli_subcommand_prints_each_model_and_merges_into_the_json(tmp_path: Path):
    out = tmp_path / "figures.json"
    command = [
        sys.executable,
        "-m",
        "engine",
        "noise",
        "--model",
        "step0",
        "--model",
        "vit",
        "--images",
        "20",
        "--json",
        str(out),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "Fig 2b noise, ResNet (step 0): clean accuracy" in done.stdout and "Fig 2b noise, ViT:" in done.stdout
    section = json.loads(out.read_text())["findings"]["noise"]
    assert set(section["models"]) == {"step0", "vit"} and section["images"] == 20
    assert section["command"] == "python -m engine " + " ".join(command[3:])
    bad = subprocess.run([*command[:3], "hessian", "--model", "step9"], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error: unknown family member 'step9'")


def test_recompute_over_http_draws_what_the_engine_measures(client: Client):
    plot, caption = client.predict(20, api_name="/paper_noise")
    assert "recomputed in this session" in caption and "20 images" in caption
    lines = {trace["name"]: trace["y"] for trace in plotted(plot)}
    model = load_member("step0", device="cpu")
    images, labels = FINDINGS["noise"].data(20)
    expected = FrequencyNoise(model).attribute(list(images), labels).accuracy_drop
    np.testing.assert_allclose(lines["ResNet (step 0)"], 100 * np.array(expected), atol=1e-6)
    with pytest.raises(Exception, match="greater than maximum value 1000"):  # the slider checks it
        client.predict(5000, api_name="/paper_noise")
    caption = client.predict(10, api_name="/paper_similarity")[-1]  # a bold name per map, and the verdict's three
    assert caption.count("**") == 2 * (len(FIGURE_MEMBERS) + len(PAIRS) + 3) and "**The paper**" in caption


def test_photo_noise_gives_each_models_top1_probability_drop(client: Client, sample_photo: Path):
    answer = client.predict(handle_file(str(sample_photo)), api_name="/paper_noise_photo")
    assert answer["visible"]  # the plot shows up once there is something to show
    traces = plotted(answer["value"])
    assert len(traces) == len(FIGURE_MEMBERS) and all(len(t["y"]) == 11 for t in traces)


def test_paper_figures_tab_in_the_browser(page, server_url: str, output_dir: Path):
    page.goto(server_url)
    page.get_by_role("tab", name="Paper figures").click()
    for name in ORDER:
        for i in range(panels(name)):
            page.locator(f"#paper-{name}-{i} .js-plotly-plot").wait_for(timeout=TIMEOUT_MS)
    assert "Fig 1a" in page.locator("#paper-landscape-0 .gtitle").first.text_content()
    hessian = page.locator("#paper-hessian-caption").inner_text()  # an NEP per model, and 3 in the NEP verdict
    assert hessian.count("NEP") == len(FIGURE_MEMBERS) + 3 and "Verdict" in hessian
    page.screenshot(path=str(output_dir / "paper.png"), full_page=True)


def test_streamlit_paper_tab_shows_the_stored_figures_and_recomputes():
    at = AppTest.from_file(str(ROOT / "app" / "streamlit_app.py"), default_timeout=600)
    at.session_state["tab"] = "Paper figures"  # only the open tab is drawn
    at.run()
    assert not at.exception
    charts = len(at.get("plotly_chart"))
    assert charts >= sum(panels(name) for name in ORDER)
    at.slider(key="paper_lesion_images").set_value(10)
    at.button(key="paper_lesion_recompute").click().run()
    assert not at.exception and at.session_state["recomputed"]["lesion"]["images"] == 10
    assert any("recomputed in this session" in c.value for c in at.caption)
