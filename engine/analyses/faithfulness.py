"""Can a map be trusted? Deletion and insertion (Petsiuk et al. 2018, "RISE"): take the input's pixels away in the
map's order, most important first, and follow the class's probability (a map of what the model uses makes it fall
fast); or start from the image with every pixel taken away and put them back in that order (it should rise fast).
Each is set against the same done in random orders (the mean of `orders` seeded orders, the same for every map of
an image), so that a map's score reads "better than random by X".

    check = DeletionInsertion(model)               # 10 steps, blur fill, 3 random orders
    found = check.attribute(image, target, heat=heat)  # Faithfulness: four curves and their areas
    found.verdict.text()  # "On this photo, this map beats random order, in deletion and insertion"
    found.line()  # that, then "removing the top 20% of this map's pixels takes 'cat' from 91% to 12%; in random ..."

On one photo, a map beats random order in deletion (or insertion) when its curve's area is better than the random
orders' mean by more than the spread of the random orders' own areas (the largest minus the smallest; at least
MIN_MARGIN), does worse when it is worse by more than that, and does no better otherwise (`compared`).

A pixel "taken away" is replaced by the fill: the image blurred (a Gaussian of sigma 1/28 of its side, as RISE's
insertion starts from), its mean colour, or ROAD's noisy linear imputation (Rong et al. 2022: each pixel taken away
becomes the mean of its neighbours, solved for all of them at once, plus a little noise), which keeps the image
closest to the ones the model was trained on; the blur and the mean colour put it off them (ROAD solves a sparse
system per curve point: about 0.25 s per point at 224 px, so the page uses the blur). The map is ranked as given
(signed maps: the most positive first; equal values in a seeded random order); a map on a coarser grid is resized
to the input's first (bilinear).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torchvision.transforms.functional import gaussian_blur

from ..errors import EngineError
from ..models.registry import LoadedModel
from .attributions import Cost, learn_seconds
from .base import Images, Labels, ModelAnalysis, Progress

STEPS = 10  # the curve's points past 0: fractions 0, 0.1, ..., 1
ORDERS = 3  # random orders averaged for the baseline
SHOWN_FRACTION = 0.2  # the fraction the page's line reads off the curves
MIN_MARGIN = 0.01  # a map's area must differ from random orders' by at least this to beat them or do worse
OUTCOMES = {"better": "beats", "no better": "does no better than", "worse": "does worse than"}  # against random order


def blur(x: torch.Tensor) -> torch.Tensor:
    """`x` (B, 3, H, W) under a Gaussian blur of sigma H/28 (8 px at 224, a little over 1 px at 32)."""
    sigma = x.shape[-1] / 28
    kernel = min(2 * math.ceil(3 * sigma) + 1, (x.shape[-1] // 2) * 2 - 1)
    return gaussian_blur(x, [kernel, kernel], [sigma, sigma])


def mean_colour(x: torch.Tensor) -> torch.Tensor:
    """Every pixel of `x` (B, 3, H, W) replaced by the image's mean colour."""
    return x.mean(dim=(2, 3), keepdim=True).expand_as(x)


Fill = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def replaced_by(whole: Callable[[torch.Tensor], torch.Tensor]) -> Fill:
    """A fill that puts one image made from the input (`whole(x)`) where pixels are taken away."""

    def fill(x: torch.Tensor, kept: torch.Tensor) -> torch.Tensor:
        return x * kept + whole(x) * (1 - kept)

    return fill


NEIGHBOURS = [(dy, dx, 1 / 6 if dy == 0 or dx == 0 else 1 / 12) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx]
ROAD_NOISE = 0.01  # the standard deviation of the noise added to each imputed value (ROAD's default)


def impute(x: torch.Tensor, kept: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """ROAD's noisy linear imputation (Rong et al. 2022): each pixel taken away of `x` (1, 3, H, W) where `kept`
    (B, 1, H, W) is 0 becomes the weighted mean of its 8 neighbours (1/6 beside, 1/12 across a corner, renormalized
    at the border), taken away or not: one sparse linear system per mask and channel (scipy.sparse), then Gaussian
    noise of sd ROAD_NOISE on the imputed values. A mask that keeps nothing has no solution: the image's mean colour."""
    from scipy.sparse import coo_matrix, identity
    from scipy.sparse.linalg import spsolve

    image = x[0].detach().double().cpu().numpy()  # (3, H, W)
    channels, h, w = image.shape
    out = []
    for mask in kept[:, 0].detach().cpu().numpy() > 0.5:
        removed = ~mask
        if not removed.any():
            out.append(image.copy())
            continue
        if mask.sum() == 0:
            out.append(np.broadcast_to(image.mean(axis=(1, 2), keepdims=True), image.shape).copy())
            continue
        index = np.full((h, w), -1)
        ys, xs = np.nonzero(removed)
        index[ys, xs] = np.arange(len(ys))
        total = np.zeros(len(ys))
        rows, cols, values, known = [], [], [], np.zeros((len(ys), channels))
        for dy, dx, weight in NEIGHBOURS:
            ny, nx = ys + dy, xs + dx
            inside = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
            total[inside] += weight
            at, ny, nx = np.flatnonzero(inside), ny[inside], nx[inside]
            unknown = removed[ny, nx]
            rows.append(at[unknown])
            cols.append(index[ny[unknown], nx[unknown]])
            values.append(np.full(unknown.sum(), weight))
            np.add.at(known, at[~unknown], weight * image[:, ny[~unknown], nx[~unknown]].T)
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        values = np.concatenate(values) / total[rows]
        system = identity(len(ys), format="csc") - coo_matrix((values, (rows, cols)), (len(ys), len(ys))).tocsc()
        solved = spsolve(system, known / total[:, None]).reshape(len(ys), channels)
        filled = image.copy()
        filled[:, ys, xs] = solved.T
        out.append(filled)
    result = torch.from_numpy(np.stack(out)).to(x.dtype)
    generator = generator or torch.Generator().manual_seed(0)
    noise = torch.randn(result.shape, generator=generator, dtype=x.dtype) * ROAD_NOISE
    return (result + noise * (1 - kept.cpu())).to(x.device)


FILLS: dict[str, Fill] = {"blur": replaced_by(blur), "mean": replaced_by(mean_colour), "road": impute}


@dataclass(frozen=True)
class Curve:
    """The class's probability after each fraction of the pixels was taken away (deletion) or put back (insertion)."""

    fractions: list[float]
    probabilities: list[float]

    @property
    def area(self) -> float:
        """The area under the curve (trapezoids), 0 to 1."""
        return float(np.trapezoid(self.probabilities, self.fractions))

    def at(self, fraction: float) -> float:
        return float(np.interp(fraction, self.fractions, self.probabilities))

    def to_json(self) -> dict:
        return {"fractions": self.fractions, "probabilities": [round(p, 5) for p in self.probabilities]}


@dataclass(frozen=True)
class RandomOrders:
    """The deletion and insertion curves of one image and class in random pixel orders (their mean): a map's
    baseline, the same for every map of that image and class."""

    deletion: Curve
    insertion: Curve
    orders: int
    fill: str
    deletion_areas: tuple[float, ...] = ()  # each order's own area: their spread
    insertion_areas: tuple[float, ...] = ()


def compared(gain: float, areas: tuple[float, ...]) -> str:
    """'better', 'no better' or 'worse': a map whose area is better than the random orders' mean by `gain`, against
    the spread of the random orders' own `areas` (largest minus smallest, at least MIN_MARGIN)."""
    margin = max(max(areas) - min(areas) if len(areas) > 1 else 0.0, MIN_MARGIN)
    return "better" if gain > margin else "worse" if gain < -margin else "no better"


@dataclass(frozen=True)
class PhotoVerdict:
    """How a map did against random order on one photo, in deletion and in insertion ('better', 'no better' or
    'worse'; `compared`)."""

    deletion: str
    insertion: str

    def text(self) -> str:
        """'On this photo, this map beats random order, in deletion and insertion' and the like."""
        if self.deletion == self.insertion:
            return f"On this photo, this map {OUTCOMES[self.deletion]} random order, in deletion and insertion"
        return (
            f"On this photo, this map {OUTCOMES[self.deletion]} random order in deletion and "
            f"{OUTCOMES[self.insertion]} it in insertion"
        )

    def to_json(self) -> dict:
        return {"deletion": self.deletion, "insertion": self.insertion, "text": self.text()}


@dataclass(frozen=True)
class Faithfulness:
    """A map's deletion and insertion curves beside those of random orders."""

    method: str
    target: int
    label: str
    deletion: Curve
    insertion: Curve
    random: RandomOrders

    @property
    def deletion_gain(self) -> float:
        """How much less area the map's deletion curve has than random orders' (above 0: better than random)."""
        return self.random.deletion.area - self.deletion.area

    @property
    def insertion_gain(self) -> float:
        """How much more area the map's insertion curve has than random orders' (above 0: better than random)."""
        return self.insertion.area - self.random.insertion.area

    @property
    def verdict(self) -> PhotoVerdict:
        """How the map did against random order on this photo (`compared`)."""
        return PhotoVerdict(
            compared(self.deletion_gain, self.random.deletion_areas),
            compared(self.insertion_gain, self.random.insertion_areas),
        )

    def line(self, fraction: float = SHOWN_FRACTION) -> str:
        """The page's line under the map, in words: the verdict on this photo, then what it rests on."""
        start, mapped, shuffled = self.deletion.at(0), self.deletion.at(fraction), self.random.deletion.at(fraction)
        return (
            f"{self.verdict.text()}: removing the top {fraction:.0%} of this map's pixels takes '{self.label}' from "
            f"{start:.0%} to {mapped:.0%}; in random order, to {shuffled:.0%}"
        )

    def to_json(self) -> dict:
        return {
            "method": self.method,
            "target": self.target,
            "label": self.label,
            "fill": self.random.fill,
            "random_orders": self.random.orders,
            "deletion": {**self.deletion.to_json(), "area": round(self.deletion.area, 5)},
            "insertion": {**self.insertion.to_json(), "area": round(self.insertion.area, 5)},
            "random_deletion": {**self.random.deletion.to_json(), "area": round(self.random.deletion.area, 5)},
            "random_insertion": {**self.random.insertion.to_json(), "area": round(self.random.insertion.area, 5)},
            "deletion_gain": round(self.deletion_gain, 5),
            "insertion_gain": round(self.insertion_gain, 5),
            "random_deletion_areas": [round(area, 5) for area in self.random.deletion_areas],
            "random_insertion_areas": [round(area, 5) for area in self.random.insertion_areas],
            "verdict": self.verdict.to_json(),
            "line": self.line(),
        }


class DeletionInsertion(ModelAnalysis):
    """Deletion and insertion of one map on one image, for one class, against `orders` random orders, `steps`
    points past 0 each, pixels taken away to `fill` ("blur", "mean" or "road"), `batch_size` images per pass; `random`:
    the random orders' curves already measured on that image and class (else measured with the map)."""

    method = "Deletion and insertion"

    def __init__(
        self,
        model: LoadedModel,
        steps: int = STEPS,
        fill: str = "blur",
        orders: int = ORDERS,
        batch_size: int = 16,
        random: RandomOrders | None = None,
    ) -> None:
        if steps < 2:
            raise EngineError(f"deletion and insertion need at least 2 steps, not {steps}")
        if fill not in FILLS:
            raise EngineError(f"unknown fill {fill!r}: one of {', '.join(FILLS)}")
        if orders < 1:
            raise EngineError(f"the random baseline needs at least 1 order, not {orders}")
        if random is not None and (random.fill != fill or random.orders != orders):
            raise EngineError(f"the random baseline was measured with {random.fill} fill, {random.orders} orders")
        super().__init__(model, batch_size)
        self.steps, self.fill, self.orders, self.random = steps, fill, orders, random

    def cost(self) -> Cost:
        """The forward passes: two curves of `steps` + 1 images for the map, and for each random order unless its
        curves are known."""
        curves = 2 * (1 + self.orders * (self.random is None))
        return Cost(curves * (self.steps + 1), 0, curves * math.ceil((self.steps + 1) / self.batch_size))

    def attribute(
        self,
        images: Images,
        labels: Labels | int | None = None,
        progress: Progress | None = None,
        *,
        heat: np.ndarray | None = None,
        label: str = "",
        method: str = "",
    ) -> Faithfulness:
        """The curves of map `heat` ((h, w), any grid) on one image (file/PIL/array, a one-image list or a
        (1, 3, H, W) batch) for class `labels` (an index; None: the model's top-1), the class named `label` (the
        model's own name by default) and the map's `method` in the result."""
        if not isinstance(images, (list, tuple, torch.Tensor)):
            images = [images]
        x = self.inputs(images)
        if len(x) != 1:
            raise EngineError(f"{self.method} checks one image at a time, not {len(x)}")
        if heat is None:
            raise EngineError(f"{self.method} checks a map: give it as heat=")
        if labels is None:
            with torch.inference_mode():
                target = int(self.forward(x)[0].argmax())
        else:
            target = int(self.targets([labels] if isinstance(labels, (int, np.integer)) else labels, 1)[0])
        classes = len(self.model.spec.labels())
        if not 0 <= target < classes:
            raise EngineError(f"class {target} is out of range: {self.model.spec.label} has {classes} classes")
        heat = np.asarray(heat, dtype=np.float32)
        if heat.ndim != 2 or heat.size == 0 or not np.isfinite(heat).all():
            raise EngineError(f"a map is a finite (h, w) array, not shape {heat.shape}")
        random, fill = self.random, FILLS[self.fill]
        side = x.shape[-2:]
        ranked = F.interpolate(torch.from_numpy(heat)[None, None], size=side, mode="bilinear")[0, 0]
        generator = torch.Generator().manual_seed(0)
        ties = torch.randperm(
            ranked.numel(), generator=generator
        )  # equal values in a seeded random order, not by place
        order = ties[torch.argsort(ranked.flatten()[ties], descending=True, stable=True)]
        shuffled = [torch.randperm(order.numel(), generator=generator) for _ in range(self.orders * (random is None))]
        curves = 2 * (1 + len(shuffled))
        passes = curves * math.ceil((self.steps + 1) / self.batch_size)
        done = 0

        def report() -> None:
            if progress:
                progress(done, passes)

        def curve(ranking: torch.Tensor, insertion: bool) -> list[float]:
            nonlocal done
            counts = [round(k / self.steps * ranking.numel()) for k in range(self.steps + 1)]
            probabilities = []
            for start in range(0, len(counts), self.batch_size):
                masks = torch.zeros(len(counts[start : start + self.batch_size]), ranking.numel())
                for row, count in enumerate(counts[start : start + self.batch_size]):
                    masks[row, ranking[:count]] = 1.0
                masks = masks.reshape(-1, 1, *side)
                kept = masks if insertion else 1 - masks
                batch = fill(x, kept)
                report()
                with torch.inference_mode():
                    logits = self.forward(batch).float()
                probabilities += logits.softmax(dim=-1)[:, int(target)].cpu().tolist()
                done += 1
            return probabilities

        def mean(runs: list[list[float]]) -> Curve:
            return Curve(fractions, np.mean(runs, axis=0).tolist())

        def areas(runs: list[list[float]]) -> tuple[float, ...]:
            return tuple(Curve(fractions, run).area for run in runs)

        started = time.perf_counter()
        fractions = [k / self.steps for k in range(self.steps + 1)]
        deletion, insertion = Curve(fractions, curve(order, False)), Curve(fractions, curve(order, True))
        if random is None:
            deleted, inserted = [curve(r, False) for r in shuffled], [curve(r, True) for r in shuffled]
            spread = {"deletion_areas": areas(deleted), "insertion_areas": areas(inserted)}
            random = RandomOrders(mean(deleted), mean(inserted), self.orders, self.fill, **spread)
        measured = Cost(2 * (1 + len(shuffled)) * (self.steps + 1), 0, passes)
        learn_seconds(self.model, measured, time.perf_counter() - started)
        report()
        label = label or self.model.spec.labels()[int(target)]
        return Faithfulness(method, int(target), label, deletion, insertion, random)
