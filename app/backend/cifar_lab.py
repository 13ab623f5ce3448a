"""The AlterNet panel's back end: an AlterNet with a chosen MSA placement next to the CIFAR ResNet and
ViT, on one photo or on the bundled CIFAR-10 test subset, and what the placement costs.

    lab = CifarLab(service)
    run = lab.analyze_photo("cat.jpg", parse("s4:4"))
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from PIL import Image

import engine
from engine.data.cifar_subset import balanced, subset
from engine.data.images import ImageInput
from engine.models.cifar_family import bundled_path
from engine.models.cost import params_and_flops
from engine.models.member_accuracy import member_accuracy
from engine.models.placement import PAPER_DEPTHS, Placement, buildup_sequence
from engine.results import ModelResult

from .service import Report, Service, on_model_thread, on_this_process

BASELINES = ("preact_resnet", "vit_cifar")
STEPS = buildup_sequence(PAPER_DEPTHS)


def step_of(placement: Placement) -> int | None:
    """The placement's build-up step (Fig 12a), or None for a placement off the sequence."""
    return STEPS.index(placement) if placement in STEPS else None


def alternet_label(placement: Placement) -> str:
    step = step_of(placement)
    where = f"step {step}" if step is not None else "custom"
    return f"AlterNet, {where} ({placement.total} MSA{'s' * (placement.total != 1)})"


def has_checkpoint(name: str, options: dict) -> bool:
    return bundled_path(name, options) is not None


@dataclass(frozen=True)
class Cost:
    """What a placement costs per 32x32 image: parameters and FLOPs (2 per multiply-add)."""

    params: int
    flops: int


@dataclass
class LabRun:
    """The three models' results (AlterNet first) on a photo or on `images` subset images, and the
    (first) 32x32 input as they saw it."""

    results: list[ModelResult]
    images: int
    seen: np.ndarray
    accuracy: list[float] | None = None  # top-1 on the subset, per model
    random: list[bool] = field(default_factory=list)
    quoted: list[str | None] = field(default_factory=list)  # each model's one accuracy to quote, None untrained


def quoted_accuracy(model: engine.LoadedModel, options: dict) -> str | None:
    """A trained model's one accuracy ('88.1% on the 10,000 CIFAR-10 test images, mean of 3 seeds'), that of the
    checkpoint it loaded (its own file, else the bundled one); None with random weights."""
    path = None if model.random else (model.choice.path or bundled_path(model.name, options))
    accuracy = member_accuracy(path)
    return None if accuracy is None else accuracy.quoted()


@dataclass
class CifarLab:
    """Runs the AlterNet panel's models through the app's service (its model cache and model thread)."""

    service: Service
    _costs: dict[str, Cost] = field(default_factory=dict)

    def models(self, placement: Placement) -> list[engine.LoadedModel]:
        options = {"msa": str(placement)}
        alternet = self.service.load("alternet", self.service.weights_for("alternet", **options), **options)
        return [alternet, *(self.service.load(name, self.service.weights_for(name)) for name in BASELINES)]

    def analyze_photo(self, image: ImageInput, placement: Placement) -> LabRun:
        """The three models on one photo (decoded here, before the models' turn)."""
        return self._analyze_photo(self.service.picture(image), placement)

    @on_model_thread
    def _analyze_photo(self, picture: Image.Image, placement: Placement) -> LabRun:
        models = self.models(placement)
        results = [engine.Analyzer(model).attribute([picture]) for model in models]
        return self._lab_run(results, models, placement, 1, results[0].input_images[0])

    @on_model_thread
    def analyze_subset(self, placement: Placement, count: int, report: Report | None = None) -> LabRun:
        """Every model on `count` balanced subset images: curves averaged, top-1 accuracy; other visitors' jobs go
        between its batches (their hooks act on their own passes only)."""
        report = self.service.boundary(report)
        images, labels = subset()
        chosen = balanced(count)
        pictures, truth = list(images[chosen]), labels[chosen]
        results, accuracy = [], []
        models = self.models(placement)
        for m, model in enumerate(models):

            def progress(done: int, total: int, m: int = m, label: str = model.spec.label) -> None:
                report((m + done / total) / len(models), f"{label}: {done}/{total} images")

            result = engine.Analyzer(model, batch_size=50).attribute(pictures, progress=progress)
            top1 = np.array([p[0].index for p in result.predictions])
            results.append(result)
            accuracy.append(float((top1 == truth).mean()))
        run = self._lab_run(results, models, placement, len(chosen), images[chosen[0]])
        return replace(run, accuracy=accuracy)

    @on_this_process
    def cost(self, placement: Placement) -> Cost:
        """Parameters and FLOPs (cached). Latency is not shown: on a shared CPU five passes of a 2 M-parameter
        model measured anything from 65 to 1,219 ms, machine noise rather than a property of the placement."""
        key = str(placement)
        if key not in self._costs:
            self._costs[key] = Cost(*params_and_flops(self.models(placement)[0].module))
        return self._costs[key]

    @staticmethod
    def _lab_run(
        results: list[ModelResult],
        models: list[engine.LoadedModel],
        placement: Placement,
        images: int,
        seen: np.ndarray,
    ) -> LabRun:
        results = [replace(results[0], label=alternet_label(placement)), *results[1:]]
        options = [{"msa": str(placement)}] + [{}] * (len(models) - 1)  # the AlterNet first, then the baselines
        quoted = [quoted_accuracy(model, built) for model, built in zip(models, options)]
        return LabRun(results, images, seen, random=[model.random for model in models], quoted=quoted)
