"""The guided tour: verdicts that follow the numbers (made-up results where a claim holds and where it
fails), every step on real runs, deep links, back/next and the tour handout in both front ends, and a
walk through the whole tour in a real browser with a screenshot per step."""

from __future__ import annotations

import itertools
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from gradio_client import handle_file
from streamlit.testing.v1 import AppTest

from app.backend.service import Service
from app.tabs.compare import CompareTab, Look
from app.tabs.tour import KEYS, TourTab, index_of, tour_html
from app.views.attention import ViewOptions
from app.views.evidence import Verdict, better_verdict, distance_verdict, headline, unit_verdict
from app.views.texts import NUMBERS, TOUR_INTACT
from app.views.tour import LABEL_PX, buildup_figure, distance_figure, labelled_row
from engine.paper.buildup import alternet_verdict
from engine.paper.claims import FAILS, HOLDS, NO_DIFFERENCE, NOT_TESTED
from engine.paper.claims import Verdict as Claim
from engine.paper.findings import STORE, outdated
from engine.paper.verdicts import corruption as corruption_verdicts
from engine.paper.verdicts import figure_verdicts
from engine.results import AttentionLayer, AttentionResult
from tests.conftest import ROOT, streamlit_settled, streamlit_upload
from tests.helpers.claims import KINDS, result
from tests.helpers.gradio_http import gradio_client
from tests.helpers.pages import CIFAR, analyze_here


def test_the_compare_tabs_counts_end_in_the_tours_verdict():
    """Figs 8 and 9's counts under the Compare tab end in the line that heads the tour's step on the same results."""
    from app.views.evidence import high_frequency_here, variance_here

    holds = result(KINDS, [1, 0.5, 2, 1, 3, 5, 4], [0, -1, 1, 0, 2, 3, 1])
    fails = result(KINDS, [1, 2, 1, 3, 2, 1, 5], [0, 1, 0, 1, 0, 0, 2])
    for counted, value in ((variance_here, "variance"), (high_frequency_here, "high_freq")):
        for results in ([holds], [fails], [holds, fails]):
            last = counted(results).splitlines()[-1]
            head = unit_verdict(results, value).text.split(":")[0]
            assert last.startswith(head) and last.endswith("."), (last, head)
    assert variance_here([holds]).endswith(
        "✅ **Holds here**: MSAs lower the feature-map variance (3 of 3 units over "
        "1 model); Convs raise the feature-map variance (2 of 2 units over 1 model)."
    )


def test_unit_verdicts_follow_the_counts():
    holds = result(KINDS, [1, 0.5, 2, 1, 3, 5, 4], [0, -1, 1, 0, 2, 3, 1])
    fails = result(KINDS, [1, 2, 1, 3, 2, 1, 5], [0, 1, 0, 1, 0, 0, 2])
    assert unit_verdict([holds], "variance").holds is True
    said = unit_verdict([holds], "variance").text  # per claim: the paper, here (per model), the verdict and its rule
    assert (
        "**Here**: MSA units lower it in: Toy 3 of 3" in said
        and "**Here**: MLP units raise it in: Toy 2 of 2" in said  # named by what the model has
    )
    convs = result([k.replace("mlp", "conv") for k in KINDS], [1, 0.5, 2, 1, 3, 5, 4], [0, -1, 1, 0, 2, 3, 1])
    assert "**Here**: Conv units raise it in: Toy 2 of 2" in unit_verdict([convs], "variance").text
    assert (
        "**Here**: Conv/MLP units raise it in: Toy 2 of 2; Toy 2 of 2" in unit_verdict([holds, convs], "variance").text
    )
    assert "Rule: in every trained model, most MSA units lower it (image mean)" in said
    assert (
        unit_verdict([fails], "high_freq").holds is False
        and "Does not hold here" in unit_verdict([fails], "high_freq").text
    )
    assert unit_verdict([holds, fails], "variance").holds is False  # every model must show it


def test_a_claim_whose_parts_disagree_says_which_part_holds():
    """Fig 8 on a model whose MSAs lower the high frequencies and whose MLPs lower them too: the headline says that
    half the claim holds and names each part, never "does not hold" over a part that holds."""
    half = result(KINDS, [1, 2, 3, 4, 5, 6, 7], [0, -1, -2, -3, -4, -5, -6])
    shown = unit_verdict([half], "high_freq")
    head = shown.text.split("\n")[0]
    assert head.startswith("◐ **Half holds here**: MSAs are low-pass filters ✅, Convs are high-pass filters ❌")
    assert shown.holds is False and "Does not hold here" not in shown.text


@pytest.mark.parametrize("outcomes", list(itertools.product([HOLDS, FAILS, NO_DIFFERENCE, NOT_TESTED], repeat=2)))
def test_every_headline_agrees_with_each_of_its_parts(outcomes):
    """Over every pair of part outcomes: the headline holds only where every tested part holds, and where a part
    holds and another fails it names both with their marks."""
    parts = [Claim(f"part {i}", "Fig 8", "", "", "", o, "") for i, o in enumerate(outcomes)]
    holds, head = headline(parts)
    tested = [o for o in outcomes if o != NOT_TESTED]
    assert holds is (True if tested and set(tested) == {HOLDS} else None if FAILS not in tested else False)
    if HOLDS in tested and FAILS in tested:
        assert all(
            f"part {i} {'✅' if o == HOLDS else '❌'}" in head for i, o in enumerate(outcomes) if o in (HOLDS, FAILS)
        )
    else:
        assert "✅" in head if holds else "✅" not in head


def test_distance_and_comparison_verdicts_follow_the_numbers():
    toy = result(KINDS, [1] * 7, [0] * 7)
    maps = np.zeros((1, 2, 2, 2))
    toy.attention = AttentionResult(
        "global", [AttentionLayer("a", 1, maps, [20.0, 40.0]), AttentionLayer("b", 3, maps, [90, 110])]
    )
    assert (
        distance_verdict([toy]).holds is True
        and "30 px in the first layer, 100 px in the last" in distance_verdict([toy]).text
    )
    toy.attention = AttentionResult(
        "global", [AttentionLayer("a", 1, maps, [90.0, 90.0]), AttentionLayer("b", 3, maps, [60, 60])]
    )
    assert distance_verdict([toy]).holds is False
    assert distance_verdict([result(KINDS, [1] * 7, [0] * 7)]).holds is None  # no attention: nothing to hold
    assert (
        better_verdict("acc", ("A", 80.0), ("B", 70.0)).holds
        and not better_verdict("acc", ("A", 6.0), ("B", 7.0)).holds
    )


@pytest.fixture(scope="module")
def analysis(one_thread, sample_photo):
    service = Service()
    runs = CompareTab(service).analyze(str(sample_photo), ["vit_cifar", "preact_resnet"], "", "random", Look()).runs
    return service, runs


@pytest.fixture(scope="module")
def steps(analysis):
    service, runs = analysis
    return [run.result for run in runs], TourTab(service).steps(runs)


def test_the_tour_reads_the_intact_models_and_says_so_while_a_lesion_is_on(analysis, steps):
    service, runs = analysis
    lesioned = CompareTab(service).lesion(runs, 0, [1], Look()).runs
    assert lesioned[0].lesion == (1,) and lesioned[0].result.blocks != runs[0].result.blocks
    _, intact = steps
    for step, seen in zip(intact, TourTab(service).steps(lesioned)):
        if step.key in ("alternet", "robustness"):  # the bundled family's stored results, not the Compare tab's
            assert seen.verdict == step.verdict
        else:
            assert seen.verdict == Verdict(
                step.verdict.holds, f"{step.verdict.text}\n\n{TOUR_INTACT}", step.verdict.numbers
            )


STATISTICS = re.compile(r"p [=<]|Welch|McNemar|\[[−+\d.]+, [−+\d.]+\]|points \[")


def test_statistics_come_a_click_after_a_sentence_in_words(steps):
    """The build-up step says who scores what and whether a difference can be told from chance, in words; its
    intervals and p-values are under 'The numbers', on screen and in the handout."""
    _, steps = steps
    step = next(s for s in steps if s.key == "alternet")
    assert "no difference we can detect" in step.verdict.text or "ahead, by more than chance" in step.verdict.text
    assert not STATISTICS.search(step.verdict.text), step.verdict.text
    assert "Welch" in step.verdict.numbers and re.search(r"p = [\d.]+", step.verdict.numbers)
    for verdict in [
        alternet_verdict(),
        *corruption_verdicts(json.loads(Path(STORE).read_text())["findings"]["corruption"]),
    ]:
        shown = verdict.markdown()
        assert verdict.words in shown and not STATISTICS.search(shown), shown
        inline = verdict.inline()  # a figure's caption: the words, then the numbers
        assert inline.index(verdict.words) < inline.index(verdict.here), inline
    page = tour_html([step], {}, "cat.jpg")
    assert f"<details><summary>{NUMBERS}</summary>" in page and "Welch" in page.split("<details>")[1]


def test_every_step_has_the_papers_claim_a_picture_and_a_verdict_from_the_screen(steps):
    results, steps = steps
    assert [s.key for s in steps] == list(KEYS) and [s.number for s in steps] == list(range(1, 9))
    assert all(s.statement and s.try_this and s.verdict.text and (s.figure or s.image is not None) for s in steps)
    assert "8 x 8 = 64 patches of 4 px" in steps[0].verdict.text and steps[0].image.shape == (448, 448, 3)
    assert steps[2].verdict == unit_verdict(results, "high_freq") and steps[3].verdict == unit_verdict(
        results, "variance"
    )
    stored = json.loads(Path(STORE).read_text())["findings"]["noise"]["models"]
    drop = {
        k: 100 * np.mean([d for f, d in zip(r["result"]["frequencies"], r["result"]["accuracy_drop"]) if f >= 0.5])
        for k, r in stored.items()
    }
    robustness = next(s for s in steps if s.key == "robustness").verdict
    assert robustness.holds is bool(drop["step0"] > drop["vit"]) and f"{drop['vit']:.1f} points" in robustness.text
    noise = json.loads(Path(STORE).read_text())["findings"]["noise"]
    assert ("Older checkpoints" in robustness.text) is bool(outdated(noise))  # flagged while the family is retrained
    alternet, decided = steps[5].verdict, alternet_verdict()  # Fig 12a: the engine's verdict over the seeds
    assert decided.words in alternet.text and "**Verdict**: " in alternet.text and alternet.holds is decided.holds
    assert decided.here in alternet.numbers  # its statistics, a click away


def test_the_last_step_checks_each_models_first_map_on_the_photo_and_says_which_methods_pass(analysis, steps):
    service, runs = analysis
    _, steps = steps
    trust = next(s for s in steps if s.key == "trust")
    for run in runs:  # the map the Compare tab shows first: the ViT's attention, the ResNet's Grad-CAM
        options = ViewOptions()
        found = run.checks[options.check_key(run)]
        assert found.method == options.method_for(run) and found.line() in trust.verdict.text
    assert trust.verdict.text.count("random weights, this score tells nothing") == len(runs)
    assert [trace.y for trace in trust.figure.data[1::2]] == [
        tuple(run.checks[ViewOptions().check_key(run)].random.deletion.probabilities) for run in runs
    ]
    stored = figure_verdicts("maps", json.loads(Path(STORE).read_text())["findings"]["maps"])
    assert all(f"{v.outcome}** ({v.number}). {v.words}" in trust.verdict.text for v in stored) and len(stored) >= 5
    passes = service.forward_passes
    again = TourTab(service).step(runs, "trust")  # checked once: kept on the run
    assert again.verdict == trust.verdict and service.forward_passes == passes


def test_buildup_figure_draws_a_line_per_training_length_with_room_for_its_labels():
    figure = buildup_figure({0: (0.854, 15), 1: (0.848, 15), 4: (0.582, 2), 6: (0.840, 15)})
    longest, shorter = figure.data
    assert (longest.name, list(longest.x)) == ("15 epochs", [0, 1, 2, 3, 4, 5, 6])
    assert list(longest.text) == ["85.4%", "84.8%", "", "", "", "", "84.0%"] and not longest.connectgaps
    assert list(longest.y)[2:6] == [None] * 4  # steps 1 and 6 are not joined across the 2-epoch step
    assert (shorter.name, list(shorter.x), shorter.line.dash) == ("2 epochs", [4], "dot")
    low, high = figure.layout.yaxis.range
    assert low < 58.2 and high > 85.4 + 5  # the top label sits inside the plot, not on its edge
    assert not buildup_figure({}).data
    assert buildup_figure({0: (0.854, 15)}).layout.showlegend  # one line still says its training length


def test_step_names_and_numbers_both_address_a_step():
    assert index_of("variance") == 3 and index_of("4") == 3 and index_of(7) == 6
    assert index_of("nope") == 0 and index_of(None) == 0 and index_of("99") == 7


def test_gradio_tour_deep_link_walk_and_handout(page, server_url: str, sample_photo: Path, output_dir: Path):
    client = gradio_client(server_url)
    page.goto(f"{server_url}/?step=variance")
    progress = page.locator("#tour-progress")
    progress.get_by_text("Step 4 of 8").wait_for(timeout=120_000)  # the deep link opened the tour at step 4
    assert "Analyze a photo in the Compare tab first" in page.locator("#tour-verdict").inner_text()
    page.get_by_role("tab", name="Compare models").click()
    analyze_here(page, sample_photo)  # the trained CIFAR models, as offline
    page.get_by_role("tab", name="Guided tour").click()
    progress.get_by_text("Step 4 of 8").wait_for(timeout=120_000)
    for number in (3, 2, 1):  # one step per click, each shown before the next
        page.locator("#tour-back").click()
        progress.get_by_text(f"Step {number} of 8").wait_for(timeout=120_000)
    for number in range(1, 9):
        progress.get_by_text(f"Step {number} of 8").wait_for(timeout=120_000)
        verdict = page.locator("#tour-verdict").inner_text()
        assert re.search(r"Holds here|Does not hold here|Here|Not comparable yet", verdict), verdict
        page.screenshot(path=str(output_dir / f"tour-gradio-{number}.png"), full_page=True)
        if number < 8:
            page.locator("#tour-next").click()
    assert page.locator("#tour-next").is_disabled()
    client.predict(handle_file(str(sample_photo)), list(CIFAR), "auto", "inferno", 0.6, True, api_name="/run")
    with zipfile.ZipFile(client.predict(sample_photo.name, api_name="/tour_export")) as archive:  # the photo shown
        html = archive.read("tour.html").decode()
        assert html.count("<section>") == 8 and "Step 3 of 8" in html and "figures/tour-variance.png" in html
        assert "figures/tour-variance.png" in archive.namelist() and "pictures/tour-patches.png" in archive.namelist()
        assert archive.read("tour.pdf").startswith(b"%PDF")  # its print: a page per step (tests/test_handout_pdf.py)
        assert "Try this" not in html  # the handout leaves the app's controls out
        assert f"On {sample_photo.name}, analyzed by " in html  # the photo and models the handout reads


def test_streamlit_tour_deep_link_back_and_next(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    at = AppTest.from_file(str(ROOT / "app" / "streamlit_app.py"), default_timeout=300)
    at.query_params["step"] = "answer"
    at.run()
    assert at.session_state["tour_step"] == 4 and not at.exception
    at.button(key="tour_next").click().run()
    assert at.session_state["tour_step"] == 5 and at.query_params["step"] == "alternet"
    assert any("AlterNet (step 6, MSAs at the end of stages)" in m.value for m in at.markdown)  # the tour's step 6
    numbers = next(e for e in at.expander if e.label == NUMBERS)  # its statistics, a click away
    assert "Welch" in numbers.markdown[0].value
    at.button(key="tour_back").click().run()
    at.button(key="tour_back").click().run()
    assert at.session_state["tour_step"] == 3 and at.query_params["step"] == "variance"
    assert any("Analyze a photo in the Compare tab first" in m.value for m in at.markdown)


def test_streamlit_tour_in_the_browser_deep_link_and_every_step(
    page,
    streamlit_url: str,  # noqa: F811
    sample_photo: Path,
    output_dir: Path,
):
    page.goto(f"{streamlit_url}/?step=variance")
    page.get_by_text("Step 4 of 8").wait_for(timeout=300_000)  # the deep link opened the tour at step 4
    tour = page.get_by_role("tabpanel").filter(has=page.get_by_role("button", name="Next →"))
    assert "Analyze a photo in the Compare tab first" in tour.inner_text()
    streamlit_upload(page, sample_photo)
    page.get_by_role("button", name="Analyze").click()
    # the analysis done (its status line, above the tabs): a click made while it runs would start a new run in its
    # place, and a fresh-clone CI clicked Back before it had begun (the models' names were shown already, in the picker)
    analyzed = page.locator("[data-testid=stExpander] summary").filter(has_text=re.compile(r"Analyzed \d+ models"))
    analyzed.first.wait_for(timeout=600_000)
    page.locator("[data-testid=stStatusWidget]").first.wait_for(state="detached", timeout=600_000)
    streamlit_settled(page)
    page.get_by_role("tab", name="Guided tour").click()
    for number in (3, 2, 1):  # one step per click, each shown before the next
        tour.get_by_role("button", name="← Back").click()
        tour.get_by_text(f"Step {number} of 8").wait_for(timeout=300_000)
        streamlit_settled(page)
    for number in range(1, 9):
        tour.get_by_text(f"Step {number} of 8").wait_for(timeout=300_000)
        streamlit_settled(page)
        shown = tour.inner_text()
        assert re.search(r"Holds here|Does not hold here|Here|Not comparable yet", shown), shown
        assert "Analyze a photo in the Compare tab first" not in shown and "Traceback" not in shown
        page.screenshot(path=str(output_dir / f"tour-streamlit-{number}.png"), full_page=True)
        if number < 8:
            tour.get_by_role("button", name="Next →").click()
    assert tour.get_by_role("button", name="Next →").is_disabled()


# Whether the tour step's heading lies within the screen, in sight (not under Streamlit's header), and its top in px.
HEADING_SHOWN = """(selector) => {
    const heading = [...document.querySelectorAll(selector)].find((e) => e.getClientRects().length > 0);
    if (!heading) return [false, null];
    const box = heading.getBoundingClientRect();
    const seen = document.elementFromPoint(box.left + Math.min(20, box.width / 2), box.top + box.height / 2);
    return [box.top >= 0 && box.bottom <= window.innerHeight && !!seen && heading.contains(seen), box.top];
}"""
SCREENS = [(390, 844), (1440, 900)]  # a phone's, a laptop's


def heading_in_sight(page, address: str, heading: str, size: tuple[int, int]) -> None:
    """`address` (a deep link to step 3) opened on a screen of `size` shows its step's heading, and still does
    once the page above it has been drawn."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    try:
        page.goto(address)
        page.get_by_text("Step 3 of 8").first.wait_for(timeout=300_000)
        page.wait_for_function(f"() => ({HEADING_SHOWN})({json.dumps(heading)})[0]", timeout=30_000)
        page.wait_for_timeout(2000)  # the photos and plots above it drawn meanwhile have not pushed it away
        shown, top = page.evaluate(HEADING_SHOWN, heading)
        assert shown, f"the step's heading is {top} px down a {size[1]} px screen"
    finally:
        page.set_viewport_size({"width": 1440, "height": 1000})


@pytest.mark.parametrize("size", SCREENS)
def test_a_deep_link_shows_its_step_on_the_first_screen_in_gradio(page, server_url: str, size):
    heading_in_sight(page, f"{server_url}/?step=frequency", "#tour-statement h3", size)


@pytest.mark.parametrize("size", SCREENS)
def test_a_deep_link_shows_its_step_on_the_first_screen_in_streamlit(page, streamlit_url: str, size):  # noqa: F811
    heading_in_sight(page, f"{streamlit_url}/?step=frequency", ".st-key-tour_step_heading h3", size)


def test_the_maps_of_the_where_step_carry_their_models_names():
    maps = [np.full((40, 30, 3), 90, np.uint8), np.full((40, 50, 3), 200, np.uint8)]
    row = labelled_row(maps, ["ViT/4", "AlterNet"])
    assert row.shape == (40 + 2 * LABEL_PX, 80, 3)
    assert (row[2 * LABEL_PX :, :30] == 90).all() and (row[2 * LABEL_PX :, 30:] == 200).all()  # the maps unchanged
    band = row[: 2 * LABEL_PX]
    assert (band[:, :30] < 128).any() and (band[:, 30:] < 128).any()  # dark text over each map's white band


def test_the_distance_figure_draws_attention_spread_evenly_as_a_yardstick():
    toy = result(KINDS, [1] * 7, [0] * 7)
    maps = np.zeros((1, 2, 2, 2))
    distances = [("a", 1, [14.0, 16.0]), ("b", 3, [15, 15])]
    layers = [AttentionLayer(name, i, maps, d, even_distance=16.5) for name, i, d in distances]
    toy.attention = AttentionResult("global", layers)
    fig = distance_figure([toy])
    assert list(fig.data[0].y) == [15.0, 15.0] and "spread evenly" in fig.data[1].name
    assert list(fig.data[1].y) == [16.5, 16.5]


def test_the_tour_handout_names_a_photo_as_text():
    from app.tabs.tour import tour_html

    page = tour_html([], {}, "<b>x</b>.jpg", ["ViT/4 (CIFAR, 1.6 M params)"])
    assert "On &lt;b&gt;x&lt;/b&gt;.jpg, analyzed by ViT/4 (CIFAR, 1.6 M params)." in page and "<b>x" not in page
