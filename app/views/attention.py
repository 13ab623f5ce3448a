"""Where a model looks: pick an attention, Grad-CAM or other attribution map and blend it, coloured, over
the image.

Everything here works on results already computed (attribution maps are computed by the service and kept
on the run); nothing runs a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image
from plotly.colors import sample_colorscale, unlabel_rgb

from app.backend.service import IG_DEFAULT_STEPS, CheckKey, MapKey, ModelRun
from app.views.colour_bar import DIVERGING, TYPE_PX, Scale, with_colour_bar
from engine.results import AttributionMap

COLORMAPS = ("inferno", "viridis", "turbo", "jet", "hot", "greys_r")
MEAN = "mean"
ATTENTION = "Attention"  # the recorded attention (layer, head or rollout), for models that have it
LENS = "Logit lens"  # the final class's logit of each patch token after a chosen block (token models)
PER_LAYER = (ATTENTION, LENS)  # the methods drawn per layer, from the run's stored results
DISPLAY_SIZE = 448  # the longer side of a rendered overlay, whatever the model's input size
ENLARGED_NOTE = 4.0  # a photo enlarged this many times or more to the model's input gets a note
SIGNED = ("Integrated Gradients", "Occlusion")  # maps with evidence for (> 0) and against (< 0) the class
UNITS = {  # what a map's numbers are, under its colour bar
    ATTENTION: "attention weight (a share of the CLS token's attention)",
    LENS: "logit of the class",
    "Grad-CAM": "Grad-CAM activation",
    "Saliency": "|gradient| of the class logit",
    "SmoothGrad": "|gradient| of the class logit, mean over noisy copies",
    "Integrated Gradients": "attribution, in class-logit units",
    "Occlusion": "drop of the class logit when blacked out",
    "Gradient x attention": "relevance (gradient x attention)",
}
EMPTY_MAP = (
    "This map is empty: every position has the same value ({value:.3g}), so there is nothing to show and the "
    "photo is drawn without it (with random weights, blacking out a patch often changes nothing)"
)


@dataclass(frozen=True)
class ViewOptions:
    """What to show: for the recorded attention a layer (1-based) and head, or the rollout; or another
    attribution method's map for class `target` (None: the top-1 class)."""

    layer: int | None = None  # None: the last layer
    head: str = MEAN  # "mean" or a 1-based head number as text
    rollout: bool = False
    method: str = ""  # "" : the default, the attention where recorded, else Grad-CAM of the top-1 class
    target: int | None = None
    steps: int = IG_DEFAULT_STEPS  # Integrated Gradients' steps

    def method_for(self, run: ModelRun) -> str:
        """The method this view shows for `run`."""
        return self.method or (ATTENTION if run.result.attention is not None else "Grad-CAM")

    def uses_steps(self, run: ModelRun) -> bool:
        """Whether the map depends on the number of steps (Integrated Gradients')."""
        return self.method_for(run) == "Integrated Gradients"

    def key(self, run: ModelRun) -> MapKey:
        """The attribution map's key on the run (method, class, IG steps)."""
        target = run.result.predictions[0][0].index if self.target is None else int(self.target)
        return MapKey.of(self.method_for(run), target, self.steps)

    def map_id(self, run: ModelRun) -> tuple | MapKey:
        """What identifies the map shown for `run`, whatever controls do not apply to it: an attribution's key, the
        attention's layer, head and rollout, the logit lens's layer."""
        method = self.method_for(run)
        if method == ATTENTION:
            return (ATTENTION, None, MEAN, True) if self.rollout else (ATTENTION, self.layer, self.head, False)
        if method == LENS:
            return (LENS, self.layer)
        return self.key(run)

    def check_key(self, run: ModelRun) -> CheckKey:
        """The key of the check of the map shown for `run`: the map's id and its class."""
        return CheckKey(self.map_id(run), self.key(run).target)

    def computed(self, run: ModelRun) -> bool:
        """Whether the map is there to draw without running the model."""
        key = self.key(run)
        if key.method in PER_LAYER:
            return True
        if key.method == "Grad-CAM" and run.gradcam is not None and key.target == run.result.predictions[0][0].index:
            return True
        return key in run.maps


@dataclass(frozen=True)
class SelectedMap:
    """A map the options asked for, in its own units, with a one-line caption saying what it is."""

    values: np.ndarray  # (h, w)
    caption: str
    unit: str
    signed: bool = False  # centred on 0: drawn with the diverging colour map

    def scale(self) -> Scale:
        return Scale.of(self.values, self.unit, self.signed)


@lru_cache(maxsize=None)
def lookup_table(colormap: str) -> np.ndarray:
    """(256, 3) uint8 colours of a plotly colorscale ("_r" suffix reverses it)."""
    colors = sample_colorscale(colormap, np.linspace(0, 1, 256).tolist())
    return np.array([unlabel_rgb(c) for c in colors]).round().astype(np.uint8)


def normalize(heat: np.ndarray) -> np.ndarray:
    """Min-max scaled to [0, 1]; a constant map becomes zeros."""
    heat = np.asarray(heat, dtype=np.float32)
    low, high = float(heat.min()), float(heat.max())
    return (heat - low) / (high - low) if high > low else np.zeros_like(heat)


def upsample(heat: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """A (h, w) map bilinearly resized to `size` = (H, W)."""
    resized = Image.fromarray(np.asarray(heat, dtype=np.float32), mode="F").resize(size[::-1], Image.BILINEAR)
    return np.asarray(resized)


def centred(heat: np.ndarray) -> np.ndarray:
    """A signed map scaled to [0, 1] with 0 at 0.5 and its largest magnitude at an end."""
    heat = np.asarray(heat, dtype=np.float32)
    peak = float(np.abs(heat).max())
    return 0.5 + 0.5 * heat / peak if peak > 0 else np.full_like(heat, 0.5)


def overlay(
    image: np.ndarray, heat: np.ndarray, colormap: str = "inferno", opacity: float = 0.6, signed: bool = False
) -> np.ndarray:
    """`heat` upsampled onto `image` (H, W, 3) uint8, coloured and alpha-blended: min-max normalized through
    `colormap`, or, `signed`, centred on 0 through the diverging colour map."""
    if signed:
        values, table = np.clip(centred(upsample(heat, image.shape[:2])), 0, 1), lookup_table(DIVERGING)
    else:
        values, table = normalize(upsample(normalize(heat), image.shape[:2])), lookup_table(colormap)
    colored = table[np.round(values * 255).astype(np.uint8)].astype(np.float32)
    blended = (1 - opacity) * image.astype(np.float32) + opacity * colored
    return blended.round().clip(0, 255).astype(np.uint8)


def attention_layers(run: ModelRun) -> int:
    return len(run.result.attention.layers) if run.result.attention else 0


def head_choices(run: ModelRun) -> list[str]:
    """'mean', then head numbers up to the largest head count of any layer."""
    attention = run.result.attention
    heads = max((layer.heads for layer in attention.layers), default=0) if attention else 0
    return [MEAN] + [str(h) for h in range(1, heads + 1)]


def lens_units(run: ModelRun) -> list[int]:
    """Per attention layer, the logit lens unit that ends its block (the MLP after the MSA), when every
    one of them has a per-patch map (token models); else []."""
    if run.lens is None or run.result.attention is None:
        return []
    names = [block.name for block in run.lens.blocks]
    units = []
    for layer in run.result.attention.layers:
        block = layer.name.rsplit(".", 1)[0] + "."
        ending = [i for i, name in enumerate(names) if name.startswith(block)]
        if not ending or run.lens.patch_logits[ending[-1]] is None:
            return []
        units.append(ending[-1])
    return units


def _layer_index(options: ViewOptions, last: int) -> int:
    return last - 1 if options.layer is None else min(max(options.layer, 1), last) - 1


def _class_name(run: ModelRun, target: int) -> str:
    top = run.result.predictions[0]
    rank = next((i for i, p in enumerate(top) if p.index == target), None)
    label = top[rank].label if rank is not None else str(target)
    return f"the top-1 class ({label})" if rank == 0 else f"class {label}" + (f" (top {rank + 1})" if rank else "")


def select_map(run: ModelRun, options: ViewOptions) -> SelectedMap:
    """The (h, w) map the options ask for, in its own units (an attribution's values before scaling), with a
    caption saying what it is."""
    attention = run.result.attention
    key = options.key(run)
    method, target, steps = key.method, key.target, key.steps
    units = lens_units(run) if method == LENS else []
    if units:
        index = _layer_index(options, len(units))
        unit = run.lens.blocks[units[index]]
        return SelectedMap(
            run.lens.patch_logits[units[index]],
            f"Logit lens: each patch token's logit for {run.lens.final_label} (the model's top-1), read through "
            f"the final norm and head after block {index + 1}/{len(units)} ({unit.name})",
            UNITS[LENS],
        )
    if method != ATTENTION or attention is None:
        explained = _class_name(run, target)
        if method == "Grad-CAM" and run.gradcam is not None and target == run.result.predictions[0][0].index:
            return SelectedMap(run.gradcam, f"Grad-CAM of {explained} on the last stage", UNITS[method])
        found = run.maps[key]
        detail = {"Grad-CAM": " on the last stage", "Integrated Gradients": f", {steps} steps from black"}
        caption = f"{method} of {explained}{detail.get(method, '')}{completeness(found)}"
        values = found.map if found.raw is None else found.raw
        return SelectedMap(values, caption, UNITS.get(method, "relative weight"), method in SIGNED)
    unit = UNITS[ATTENTION]
    if options.rollout and attention.rollout is not None:
        layers = len(attention.layers)
        return SelectedMap(attention.rollout[0], f"Attention rollout through all {layers} layers, CLS row", unit)
    last = len(attention.layers)
    index = _layer_index(options, last)
    layer = attention.layers[index]
    what = "CLS attention to patches" if attention.kind == "global" else "attention received within each window"
    where = f"layer {index + 1}/{len(attention.layers)} ({layer.name})"
    head = int(options.head) if options.head != MEAN else 0
    if attention.kind != "global":
        unit = "attention weight received (the mean over the positions of its window)"
    if 1 <= head <= layer.heads:
        distance = layer.mean_distance[head - 1]
        caption = f"{what}, {where}, head {head}/{layer.heads}; mean distance {distance:.0f} px"
        return SelectedMap(layer.maps[0, head - 1], caption, unit)
    note = f" (this layer has {layer.heads} heads)" if head else ""
    distance = float(np.mean(layer.mean_distance))
    caption = f"{what}, {where}, mean of heads{note}; mean distance {distance:.0f} px"
    return SelectedMap(layer.maps[0].mean(axis=0), caption, unit)


def completeness(found: AttributionMap) -> str:
    """Integrated Gradients' convergence delta in words: how far the map's total is from the change of the class
    score between the black image and the photo (0: exact); '' for methods without one."""
    if found.delta is None:
        return ""
    if found.total is None:
        return f"; completeness error {found.delta:.2g} (the map's total minus the score's rise from black; 0 is exact)"
    rise = found.total - found.delta
    return (
        f"; the map sums to {found.total:.3g} where the class score rises {rise:.3g} from black "
        f"(completeness error {found.delta:.2g}; more steps shrink it)"
    )


def enlargement(run: ModelRun) -> float:
    """How many times the photo's shorter side was enlarged to the model's input (1: not enlarged)."""
    if run.photo_size is None:
        return 1.0
    return max(run.image.shape[0] / max(min(run.photo_size), 1), 1.0)


def size_note(run: ModelRun) -> str:
    """A note for a photo enlarged so much (ENLARGED_NOTE times or more) that the model sees blurred blocks;
    '' otherwise."""
    scale = enlargement(run)
    if scale < ENLARGED_NOTE:
        return ""
    width, height = run.photo_size
    return (
        f"Your photo is only {width}×{height} px: enlarged {scale:.0f}× to the model's {run.image.shape[0]} px "
        "input, it shows the model blurred blocks, not detail"
    )


def enlarge(image: np.ndarray, size: int = DISPLAY_SIZE) -> np.ndarray:
    """`image` (H, W, 3) uint8 resized (bicubic) so that its longer side is `size`."""
    scale = size / max(image.shape[:2])
    width, height = round(image.shape[1] * scale), round(image.shape[0] * scale)
    return np.asarray(Image.fromarray(image).resize((width, height), Image.BICUBIC))


def render(
    run: ModelRun, options: ViewOptions, colormap: str, opacity: float, bar_px: int = TYPE_PX
) -> tuple[np.ndarray, str]:
    """The selected map over the image the model saw (enlarged for display) with its colour bar (its numbers
    `bar_px` high: larger for a map printed small), and its caption, which ends with what the colours mean. An
    empty map (the same value everywhere: nothing to show) leaves the image as it is, and the caption says so."""
    selected = select_map(run, options)
    image, values = enlarge(run.image), np.asarray(selected.values, dtype=np.float32)
    empty = values.size == 0 or float(values.max()) <= float(values.min())
    if empty:
        notes = [EMPTY_MAP.format(value=float(values.max()) if values.size else 0.0), size_note(run)]
        return image, ". ".join([selected.caption, *filter(None, notes)])
    scale = selected.scale()
    drawn = overlay(image, values, colormap, opacity, selected.signed)
    table = lookup_table(DIVERGING if selected.signed else colormap)
    caption = ". ".join(filter(None, [selected.caption, size_note(run), scale.words()]))
    return with_colour_bar(drawn, scale, table, bar_px), caption
