"""Which map methods can be trusted, over a set of images: each method's deletion and insertion beside random pixel
orders (engine.analyses.faithfulness), and the model-parameter randomization test (Adebayo et al. 2018, "Sanity
checks for saliency maps").

    checks = MapChecks(model, randomized=100)                 # every method that applies; ROAD and blur fills
    found = checks.attribute(images, labels, progress)        # MapChecksResult: per method, per image
    found.to_json()                                           # as stored in assets/paper_figures.json ("maps")

Each map explains the image's class in `labels`. Deletion and insertion run under each of `fills` (default: ROAD's
noisy linear imputation and the blur). The randomization test re-initializes the model's weights from the output down,
part by part (`parts`: the head, each block, the embedding; a copy of the model, never the model itself), as Quantus's
MPRT does (each layer's own `reset_parameters`: PyTorch's default initialization, batch norm statistics included; a
bare parameter, a ViT's position embedding, from N(0, 0.02) as timm starts it), and after each of `STEPS` cumulative
stages compares every map with the trained model's map of the same image and class: the Spearman rank correlation of
their pixels (scipy.stats) and their SSIM (`ssim`). A map that stays alike when the weights it should explain are gone
shows the image, not the model. Maps are compared as drawn: the signed attribution for Integrated Gradients and
Occlusion, the map otherwise.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..errors import EngineError
from ..models.registry import LoadedModel
from ..results import AttributionMap
from .attributions import METHODS, unsupported
from .base import Images, Labels, ModelAnalysis, Progress
from .faithfulness import ORDERS, Curve, DeletionInsertion, RandomOrders
from .faithfulness import STEPS as CURVE_STEPS

STEPS = (0.25, 0.5, 0.75, 1.0)  # after the head alone, the top quarter, half, three quarters and all of the parts
SSIM_SIGMA = 1.5  # the Gaussian window of SSIM (Wang et al. 2004), as scikit-image's gaussian_weights
RANDOMIZED = 100  # images of the randomization test by default
FILLS = ("road", "blur")  # ROAD for its most- against least-relevant-first test, blur against random order


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    """The structural similarity of two (h, w) maps, each min-max scaled to [0, 1] first (a constant map: zeros):
    Gaussian-weighted local means, variances and covariance (sigma 1.5, truncated at 3.5 sigma, population
    statistics), C1 = 0.01², C2 = 0.03², the mean over the pixels whose window lies inside the map."""
    x, y = (torch.from_numpy(_scaled(m)).double()[None, None] for m in (a, b))
    radius = int(3.5 * SSIM_SIGMA + 0.5)
    t = torch.arange(-radius, radius + 1, dtype=torch.float64)
    g = torch.exp(-(t**2) / (2 * SSIM_SIGMA**2))
    g = g / g.sum()
    window = (g[:, None] * g[None, :])[None, None]
    if min(x.shape[-2:]) < window.shape[-1]:
        raise EngineError(f"SSIM needs maps of at least {window.shape[-1]} x {window.shape[-1]}, not {a.shape}")

    def local(v: torch.Tensor) -> torch.Tensor:
        return F.conv2d(v, window)

    mx, my = local(x), local(y)
    vx, vy, cxy = local(x * x) - mx**2, local(y * y) - my**2, local(x * y) - mx * my
    c1, c2 = 0.01**2, 0.03**2
    s = ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx**2 + my**2 + c1) * (vx + vy + c2))
    return float(s.mean())


def _scaled(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    low, high = float(m.min()), float(m.max())
    return (m - low) / (high - low) if high > low else np.zeros_like(m)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """The Spearman rank correlation of two maps' pixels; 0 where one is constant (it ranks nothing)."""
    a, b = np.ravel(a), np.ravel(b)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    from scipy import stats  # here: scipy.stats takes half a second to import, and most runs check no map

    return float(stats.spearmanr(a, b).statistic)


def drawn(found: AttributionMap) -> np.ndarray:
    """A map as the page draws and ranks it: signed where the method is, else the map."""
    return found.raw if found.raw is not None and found.method in ("Integrated Gradients", "Occlusion") else found.map


def stack(module: nn.Module) -> bool:
    """Whether `module` is a stack of blocks: a Sequential or ModuleList whose members with weights are each made of
    layers (a stage, a ViT's blocks; not a head of a norm and a linear layer)."""
    if not isinstance(module, (nn.Sequential, nn.ModuleList)):
        return False
    weighted = [m for m in module if any(True for _ in m.parameters())]
    return bool(weighted) and all(any(True for _ in m.children()) for m in weighted)


def parts(module: nn.Module) -> list[tuple[str, list[nn.Module], list[nn.Parameter]]]:
    """The model's weights in parts from the input to the output: a block of a stage (`stages.2.1`), a transformer
    block (`blocks.3`), any other top-level part (`stem`, `norm`, `head`), a bare parameter (`pos_embed`); each with
    its modules and its bare parameters. A stack of blocks (`stack`) is split into its members."""
    found: dict[str, tuple[list[nn.Module], list[nn.Parameter]]] = {}
    for name, parameter in module.named_parameters():
        path, owner = name.split(".")[:-1], module
        key: list[str] = []
        for step in path:
            owner = getattr(owner, step)
            key.append(step)
            if not stack(owner):
                break
        modules, bare = found.setdefault(".".join(key) or name, ([], []))
        if not key:
            bare.append(parameter)
        elif owner not in modules:
            modules.append(owner)
    return [(key, modules, bare) for key, (modules, bare) in found.items()]


def randomize(part: tuple[str, list[nn.Module], list[nn.Parameter]], seed: int) -> None:
    """Re-initialize one part (`parts`) in place, seeded."""
    _, modules, bare = part
    torch.manual_seed(seed)
    with torch.no_grad():
        for owner in modules:
            for layer in owner.modules():
                if hasattr(layer, "reset_parameters"):
                    layer.reset_parameters()
        for parameter in bare:
            nn.init.trunc_normal_(parameter, std=0.02)


def cascade(count: int) -> list[int]:
    """How many parts, from the top, are randomized at each stage: the head alone, then `STEPS` of them."""
    return sorted({1, *(max(1, math.ceil(q * count)) for q in STEPS)})


@dataclass(frozen=True)
class Scores:
    """Deletion and insertion under one fill on the images: the area under each image's curve, and the curves' mean
    (the class's probability at each fraction)."""

    deletion: list[float]
    insertion: list[float]
    deletion_curve: list[float]
    insertion_curve: list[float]


class _Scoring:
    """Collects one map kind's curves (a method's under a fill, or the random orders') image by image."""

    def __init__(self) -> None:
        self.deletion: list[Curve] = []
        self.insertion: list[Curve] = []

    def add(self, deletion: Curve, insertion: Curve) -> None:
        self.deletion.append(deletion)
        self.insertion.append(insertion)

    def scores(self) -> Scores:
        def mean(curves: list[Curve]) -> list[float]:
            return np.mean([c.probabilities for c in curves], axis=0).tolist() if curves else []

        areas = [[c.area for c in curves] for curves in (self.deletion, self.insertion)]
        return Scores(*areas, mean(self.deletion), mean(self.insertion))


@dataclass(frozen=True)
class MethodChecks:
    """One method's checks on the images: per fill its deletion and insertion, and per cascade stage the similarity
    of its maps on the randomized model with the trained model's (on the `randomized` images)."""

    method: str
    fills: dict[str, Scores]
    spearman: list[list[float]]  # [stage][image]
    ssim: list[list[float]]


@dataclass(frozen=True)
class MapChecksResult:
    """Every method's checks on one model, beside random pixel orders' on the same images and classes."""

    model: str
    images: int
    randomized: int
    orders: int
    fills: list[str]  # blur against random order, ROAD for its own test (engine.paper.map_verdicts)
    fractions: list[float]
    random: dict[str, Scores]  # per fill
    stages: list[str]  # what each cascade stage has randomized: "down to head", ..., "every weight"
    methods: dict[str, MethodChecks]
    unsupported: dict[str, str]  # method: why it does not apply

    def to_json(self) -> dict:
        def rounded(value):
            if isinstance(value, dict):
                return {key: rounded(v) for key, v in value.items()}
            if isinstance(value, list):
                return [rounded(v) for v in value]
            return round(value, 4) if isinstance(value, float) else value

        return rounded(dataclasses.asdict(self))


class MapChecks(ModelAnalysis):
    """Deletion and insertion under each of `fills` (`orders` random orders each), and the randomization test on
    `randomized` of the images (spread evenly), for each of `methods` (default: every method that applies)."""

    method = "Map checks"

    def __init__(
        self,
        model: LoadedModel,
        methods: tuple[str, ...] | list[str] | None = None,
        randomized: int = RANDOMIZED,
        fills: tuple[str, ...] | list[str] = FILLS,
        orders: int = ORDERS,
    ) -> None:
        super().__init__(model, batch_size=16)
        methods = list(METHODS) if methods is None else list(methods)
        for name in methods:
            unsupported(name, model)  # an unknown name is named
        if randomized < 0:
            raise EngineError(f"the randomization test needs 0 or more images, not {randomized}")
        if not fills:
            raise EngineError("the map checks need at least one fill")
        for fill in fills:
            DeletionInsertion(model, fill=fill, orders=orders)  # a bad fill or count is named before any work
        self.methods, self.randomized, self.fills, self.orders = methods, randomized, list(fills), orders

    def attribute(
        self, images: Images, labels: Labels | None = None, progress: Progress | None = None
    ) -> MapChecksResult:
        """The checks of every method on `images`, each map explaining the image's class in `labels`."""
        x = self.inputs(images)
        y = self.targets(labels, len(x))
        self.check_labels(y, len(self.model.spec.labels()))
        why = {name: reason for name in self.methods if (reason := unsupported(name, self.model))}
        methods = [name for name in self.methods if name not in why]
        randomized = min(self.randomized, len(x))
        shown = np.linspace(0, len(x) - 1, randomized).round().astype(int) if randomized else np.array([], int)
        stages = cascade(len(parts(self.model.module)))
        total, done = len(x) * len(methods) + len(stages) * randomized * len(methods), 0

        def tick() -> None:
            nonlocal done
            done += 1
            if progress:
                progress(done, total)

        trained: dict[str, list[np.ndarray]] = {name: [] for name in methods}
        scoring = {name: {fill: _Scoring() for fill in self.fills} for name in methods}
        random = {fill: _Scoring() for fill in self.fills}
        for k in range(len(x)):
            image, target = x[k : k + 1], int(y[k])
            first: dict[str, RandomOrders] = {}  # per fill, the random orders' curves of this image and class
            for name in methods:
                found = drawn(METHODS[name](self.model).attribute(image, target))
                trained[name].append(found)
                for fill in self.fills:
                    check = DeletionInsertion(self.model, fill=fill, orders=self.orders, random=first.get(fill))
                    checked = check.attribute(image, target, heat=found, method=name)
                    first[fill] = checked.random
                    scoring[name][fill].add(checked.deletion, checked.insertion)
                tick()
            for fill, orders in first.items():
                random[fill].add(orders.deletion, orders.insertion)
        similarity, names = self._randomized(x, y, shown, methods, trained, stages, tick)
        if progress:
            progress(total, total)
        return MapChecksResult(
            self.model.name,
            len(x),
            randomized,
            self.orders,
            self.fills,
            [k / CURVE_STEPS for k in range(CURVE_STEPS + 1)],
            {fill: scored.scores() for fill, scored in random.items()},
            names,
            {
                name: MethodChecks(
                    name,
                    {fill: scored.scores() for fill, scored in scoring[name].items()},
                    similarity[name]["spearman"],
                    similarity[name]["ssim"],
                )
                for name in methods
            },
            why,
        )

    def _randomized(self, x, y, shown, methods, trained, stages, tick) -> tuple[dict, list[str]]:
        """Per method, the Spearman and SSIM of each randomized stage's map with the trained map, on images `shown`;
        and each stage's name."""
        copied = copy.deepcopy(self.model.module).eval()
        model = dataclasses.replace(self.model, module=copied, forward_passes=0)
        pieces = parts(copied)[::-1]  # from the output down
        similarity = {name: {"spearman": [], "ssim": []} for name in methods}
        names, randomized = [], 0
        for count in stages:
            while randomized < count:
                randomize(pieces[randomized], seed=randomized)
                randomized += 1
            names.append("every weight" if count == len(pieces) else f"down to {pieces[count - 1][0]}")
            rho = {name: [] for name in methods}
            structure = {name: [] for name in methods}
            for k in shown:
                for name in methods:
                    found = drawn(METHODS[name](model).attribute(x[k : k + 1], int(y[k])))
                    rho[name].append(spearman(trained[name][k], found))
                    structure[name].append(ssim(trained[name][k], found))
                    tick()
            for name in methods:
                similarity[name]["spearman"].append(rho[name])
                similarity[name]["ssim"].append(structure[name])
        self.model.forward_passes += model.forward_passes
        return similarity, names


def headline(result: dict) -> str:
    """One model's checks in a line: random order's mean deletion area and each method's (the blur fill's where it
    was measured, as on the page), and its maps' mean Spearman ρ with the trained maps once every weight is random."""
    fill = "blur" if "blur" in result["fills"] else result["fills"][0]
    said = [f"random order {np.mean(result['random'][fill]['deletion']):.2f}"]
    for name, checks in result["methods"].items():
        line = f"{name} {np.mean(checks['fills'][fill]['deletion']):.2f}"
        if checks["spearman"] and checks["spearman"][-1]:
            line += f" (ρ {np.mean(checks['spearman'][-1]):.2f})"
        said.append(line)
    return f"deletion area, {fill} fill: " + "; ".join(said) + "; ρ: randomized against trained maps"
