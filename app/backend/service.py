"""The app's back end, free of UI code: offline detection, a model cache and running analyses.

service = Service.start()
runs = service.analyze("cat.jpg", ["resnet50", "vit_small_patch16_224"], "random")
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
import tempfile
import threading
import time
import weakref
import zipfile
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Hashable, Iterator, TypeVar

import numpy as np
import torch
from PIL import Image

import engine
from app.backend.units import switched_off, unit_label, unit_name
from app.server.context import stoppable
from app.server.hosts import runner_for_this_host
from app.server.inputs import model_names
from app.server.refusal import refuse
from app.server.settings import SETTINGS
from app.server.turns import Turns
from app.server.uploads import Uploads
from app.server.work import ModelThread, Runner
from engine.analyses.attributions import METHODS, IntegratedGradients, unsupported
from engine.analyses.budget import (
    Footprint,
    TooLarge,
    amount,
    bytes_at,
    check_plain,
    check_time,
    footprint,
    forward_seconds,
    give_back,
    limit_arenas,
    sized_batch,
)
from engine.analyses.dataset_curves import IMAGE_SUFFIXES, DatasetCurves, image_names
from engine.analyses.faithfulness import Faithfulness, RandomOrders
from engine.analyses.logit_lens import LogitLens, LogitLensResult
from engine.data.images import ImageInput
from engine.data.zip_images import unpack_images
from engine.errors import ImageError, shown
from engine.models.cifar_family import CHECKPOINTS, auto_weights, bundled_names
from engine.models.registry import resolve_device
from engine.models.weights import hub_reachable
from engine.models.weights_choice import Weights
from engine.results import Analysis, AttributionMap, ModelResult

DEFAULT_MODELS = ("resnet50", "vit_small_patch16_224")  # online: the pretrained ImageNet pair
OFFLINE_MODELS = ("preact_resnet", "alternet", "vit_cifar")  # offline: the CIFAR-10 models trained for this app
MAX_MODELS = 4
MAX_DATASET_IMAGES = 500  # per ZIP in the app; `python -m engine curves` has no limit
MAX_DATASET_BYTES = 50 * 2**20
MAX_PARAMETERS = SETTINGS.max_params
MAX_CACHED_BYTES = SETTINGS.bytes(SETTINGS.cache_mb)
MAX_MEGAPIXELS = SETTINGS.max_megapixels
DECODING = engine.PixelBudget(SETTINGS.decode_megapixels * 1e6)  # in flight
DECODED_SIDE = 1024  # a JPEG photo is decoded at the smallest scale keeping its shorter side this long
MAX_UNPACKED_BYTES = SETTINGS.bytes(SETTINGS.zip_mb)
REQUEST_SECONDS = SETTINGS.request_seconds  # a map expected to take longer (from its model's timed pass) is refused
OVERTIME = 2.0  # a map that has computed this many times REQUEST_SECONDS (its estimate was wrong) is stopped
AUTO = "auto"  # pretrained online; offline, bundled checkpoints where they exist, else random
WEIGHT_MODES = (AUTO, "pretrained", "random")
WEIGHT_LABELS = {AUTO: "trained where available", "pretrained": "pretrained only", "random": "random (seeded)"}
SAMPLES = sorted((Path(__file__).resolve().parents[2] / "assets" / "samples").glob("*.jpg"))

IG_DEFAULT_STEPS = inspect.signature(IntegratedGradients).parameters["steps"].default  # the engine's default
TURN_S = 3.0  # a map's internal batch takes about this long, so that other visitors wait about this for a turn
MIN_TURN_BATCH = 4  # ... but holds this many images at least (one at a time runs several times slower per image)
MAX_IG_STEPS = 256  # Integrated Gradients' path points at most (the page's slider ends at 128)
log = logging.getLogger("vit_explorer")
Report = Callable[[float, str], None]
Progress = Callable[[int, int], None]  # an engine analysis's (done, total) passes
Options = tuple[tuple[str, object], ...]
Method = TypeVar("Method", bound=Callable[..., Any])
Loading = tuple[int, engine.LoadedModel, Weights]  # position, loaded model, its weights
Asked = Weights | str | None  # what a caller asks for: Weights, or a mode of WEIGHT_MODES (None, "": auto)


def default_models(online: bool) -> tuple[str, ...]:
    """The models checked on a first visit: online the pretrained ImageNet pair; offline, where ImageNet weights
    cannot be had (their predictions would be random), the trained CIFAR-10 family."""
    return DEFAULT_MODELS if online else OFFLINE_MODELS


def picked_models(checked: list[str], typed: str | None) -> list[str]:
    """The models to compare: those checked, then any timm names typed (comma- or space-separated)."""
    typed_names = [name for name in re.split(r"[,\s]+", typed or "") if name]
    return list(dict.fromkeys([*checked, *typed_names]))


def whole(value: object, what: str) -> int:
    """`value` as an int (an int, or a float or string holding one); Refused naming `what` otherwise."""
    try:
        number = int(value) if isinstance(value, (int, np.integer, str)) else int(float(value))  # type: ignore[arg-type]
        if isinstance(value, float) and number != value:
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise refuse(f"{what} must be a whole number, not '{shown(value, 20)}'", "not a whole number") from None
    return number


def ig_steps(steps: object) -> int:
    """Integrated Gradients' path points, 2 to MAX_IG_STEPS; Refused otherwise."""
    number = whole(steps, "the number of steps")
    if not 2 <= number <= MAX_IG_STEPS:
        raise refuse(
            f"Integrated Gradients takes 2 to {MAX_IG_STEPS} steps, not {shown(number, 20)}", "steps out of range"
        )
    return number


def memory_budget(loaded: engine.LoadedModel) -> int:
    """Bytes a request may use beyond the weights: on a GPU (a ZeroGPU worker has one to itself), half of its memory;
    on the CPU, the server's request budget (VIT_EXPLORER_REQUEST_MB)."""
    if loaded.device.type == "cuda":
        return torch.cuda.get_device_properties(loaded.device).total_memory // 2
    return SETTINGS.bytes(SETTINGS.request_mb)


@dataclass(frozen=True)
class MapKey:
    """A map's key on its run, made here alone (`of`; `checked` for what a request asks): the method, the class it
    explains and Integrated Gradients' steps (0 for every other method, whose map does not depend on them)."""

    method: str
    target: int
    steps: int = 0

    @classmethod
    def of(cls, method: str, target: int, steps: int | None = None) -> MapKey:
        """The key of `method`'s map of class `target` (steps: Integrated Gradients' only; None: its default)."""
        steps = (IG_DEFAULT_STEPS if steps is None else int(steps)) if METHODS.get(method) is IntegratedGradients else 0
        return cls(method, int(target), steps)

    @classmethod
    def checked(cls, method: str, target: object, steps: object = None) -> MapKey:
        """The key of a map a request asks for; refused for an unknown method, a class that is not a whole number
        or steps out of range."""
        if method not in METHODS:
            raise refuse(f"no attribution method '{shown(method)}': one of {', '.join(METHODS)}", "unknown method")
        if METHODS[method] is IntegratedGradients:
            steps = ig_steps(IG_DEFAULT_STEPS if steps is None else steps)
        return cls.of(method, whole(target, "the class"), steps)


@dataclass(frozen=True)
class CheckKey:
    """A check's key on its run, made here alone: what identifies the map checked (app.views.attention's
    `ViewOptions.map_id`: an attribution's MapKey, the attention's layer, head and rollout, the lens's layer) and
    the class whose probability it follows."""

    shown: Hashable
    target: int


def on_model_thread(method: Method) -> Method:
    """Run a method of a Service (or of an object holding one as `.service`) where model work runs (`Service.call`:
    the model thread in visitors' turns, or a ZeroGPU Space's GPU worker), waiting for it. Its arguments and result
    must be plain data (they cross to the worker), and it keeps nothing on them: the caller keeps what it returns."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        service = self if isinstance(self, Service) else self.service
        return service.call(method, self, *args, **kwargs)

    return run  # type: ignore[return-value]


def on_this_process(method: Method) -> Method:
    """Run a method of a Service on this process's own models (its model thread, in turns): a model loaded to read
    its architecture, which a ZeroGPU Space keeps on its CPU rather than ask the GPU worker for."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        service = self if isinstance(self, Service) else self.service
        return service.runner.call_here(method, (self, *args), kwargs)

    return run  # type: ignore[return-value]


@dataclass
class ModelRun:
    """One model's results on one image, plus Grad-CAM for models without attention.

    It keeps what the page shows and the model's input (made from the photo at full size), never the photo: a
    12-megapixel photo is 36 MB, the input of a 224 px model 0.6 MB (a run of ResNet-18 or ViT-Ti/16 keeps about
    0.9 MB: tests/test_session_memory.py). A lesioned run keeps the unlesioned one as `original`, so that clearing
    the lesion restores it. Its maps and checks are what the service's calls returned, kept by the page model
    (`keep`, on the page's own thread); the service only reads them.
    """

    result: ModelResult
    gradcam: np.ndarray | None = None  # (H, W) Grad-CAM activations of the top-1 class, on result.input_images' grid
    inputs: torch.Tensor | None = field(default=None, repr=False)  # (1, 3, H, W): the model's input, for maps
    photo_size: tuple[int, int] | None = None  # the photo's (width, height) as decoded, for the note on enlarged
    # photos (a large JPEG is decoded reduced, never below DECODED_SIDE: such a photo is never enlarged)
    weights: Weights = Weights.random()  # what it was loaded with
    units: tuple[tuple[str, int], ...] = ()  # (label, block index) of the units a lesion may switch off
    lesion: tuple[int, ...] = ()
    original: ModelRun | None = field(default=None, repr=False)
    maps: dict[MapKey, AttributionMap] = field(default_factory=dict, repr=False)  # computed once per run
    checks: dict[CheckKey, Faithfulness] = field(default_factory=dict, repr=False)  # a map's check, by its key
    # (the random orders of a class, measured with its first check, are every later check's baseline)
    lens: LogitLensResult | None = None  # the logit lens: when the answer appears
    device: str = "cpu"  # where it was computed: 'cpu' or 'cuda'
    # the page's latest restyle of this run (when, its look: app.tabs.compare), for a map computed meanwhile
    restyled: tuple[float, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def image(self) -> np.ndarray:
        """The image as the model saw it (after resize and crop), (H, W, 3) uint8."""
        return self.result.input_images[0]

    def bare(self) -> ModelRun:
        """This run without the maps, checks and unlesioned run it keeps: what a map or check of it needs."""
        return replace(self, maps={}, checks={}, original=None, restyled=None)

    def keep(self, key: MapKey | CheckKey, found: AttributionMap | Faithfulness) -> None:
        """Keep a map or a check the service returned for this run (the page model does, on the page's thread,
        where the session holds the run), so that it is drawn again without computing."""
        (self.maps if isinstance(key, MapKey) else self.checks)[key] = found  # type: ignore[index]

    def baseline(self, target: int) -> RandomOrders | None:
        """The random pixel orders measured with this run's first check of class `target` (None before one)."""
        return next((found.random for key, found in self.checks.items() if key.target == target), None)


@dataclass(frozen=True)
class ZipCurves:
    """Figs 2a, 8 and 9 averaged over a ZIP's images, per model, and the members that could not be read."""

    results: list[ModelResult]  # each labelled with its image count
    skipped: list[str]

    @property
    def skipped_note(self) -> str:
        """'2 unreadable skipped (a.jpg, b.png)', the first five named; '' when every member was read."""
        if not self.skipped:
            return ""
        named = ", ".join(shown(name, 40) for name in self.skipped[:5]) + ("…" * (len(self.skipped) > 5))
        return f"{len(self.skipped)} unreadable skipped ({named})"


@dataclass
class Service:
    """Loads models once per (name, weights), runs one job at a time in visitors' turns, counts forward passes.

    Every model call runs where its `runner` puts model work (app/server/work.py): on a model thread holding the
    models' turn (app/server/turns.py), so one computes at a time on the shared, cached models, and a long map hands
    the turn to other visitors' jobs at each batch boundary (its hooks and lesions act on its own passes only); on a
    ZeroGPU Space, in the GPU worker. glibc's malloc arenas are capped at 2 (`limit_arenas`), so that
    memory freed by one thread is reused by the next (one arena per thread grew the server by about 1 GB under 16
    concurrent clients).
    """

    seed: int = 0
    device: str = "auto"
    uploads: Uploads | None = None  # where network files must come from; None: trusted local callers (CLI)
    _online: list[bool] = field(default_factory=list)
    _probe: threading.Thread | None = None
    _models: OrderedDict[tuple[str, Weights, Options], engine.LoadedModel] = field(default_factory=OrderedDict)
    _evicted_passes: int = 0
    _unsupported: dict[tuple[str, str], str | None] = field(default_factory=dict)  # (model, method): reason
    runner: Runner = field(default_factory=ModelThread)
    _footprints: weakref.WeakKeyDictionary[Any, Footprint] = field(default_factory=weakref.WeakKeyDictionary)

    @classmethod
    def start(cls, **kwargs) -> Service:
        """A service whose hub check (at most a few seconds) runs in the background, its model work where this host
        runs it (app.server.hosts.runner_for_this_host; `device` as asked, or that runner's)."""
        limit_arenas()
        if "runner" not in kwargs:
            runner, device = runner_for_this_host()
            asked = kwargs.pop("device", "auto")
            kwargs = {**kwargs, "runner": runner, "device": device if asked == "auto" else asked}
        service = cls(**kwargs)
        service._probe = threading.Thread(target=lambda: service._online.append(hub_reachable()), daemon=True)
        service._probe.start()
        return service

    @property
    def online(self) -> bool:
        """Whether the Hugging Face hub answered at startup (waits for the check to finish)."""
        if self._probe is not None:
            self._probe.join()
        return bool(self._online and self._online[0])

    def weights_for(self, name: str, weights: Asked = None, **options) -> Weights:
        """The weights `name` loads with: as asked ('pretrained', 'random' with the service's seed, or a
        Weights); for 'auto' (or None), the trained weights where they can be had (the hub's when it
        answers; a CIFAR model's bundled checkpoint), else seeded random."""
        if isinstance(weights, Weights):
            return weights
        if weights in (None, "", AUTO):
            return auto_weights(name, self.online, self.seed, **options)
        if weights not in WEIGHT_MODES and self.uploads is not None:  # a path, from the network
            raise refuse(f"weights must be one of {', '.join(WEIGHT_MODES)}, not '{shown(weights)}'", "unknown weights")
        return Weights.parse(weights, self.seed)  # trusted local callers (the CLI) may name a checkpoint file

    @property
    def forward_passes(self) -> int:
        """Forward passes made by every model loaded so far."""
        return self._evicted_passes + sum(model.forward_passes for model in self._models.values())

    @property
    def turns(self) -> Turns:
        """The visitors' turns on this process's models."""
        return getattr(self.runner, "turns", None) or self.runner.fallback.turns

    def call(self, fn: Callable[..., Any], *args, **kwargs) -> Any:
        """`fn(*args, **kwargs)` where model work runs (the runner), the caller waiting; at once when it is there
        already. While it waits, its `report` keyword (if any) is told its place and expected wait, and an abandoned
        request stops waiting."""
        return self.runner.call(fn, args, kwargs)

    def boundary(self, report: Report | None) -> Report:
        """`report` at a block or batch boundary: the work stops here once abandoned (guard.stop_point), then hands
        the turn to another visitor's waiting job, if any, before it goes on."""
        checked = stoppable(report)

        def at_boundary(fraction: float, message: str) -> None:
            checked(fraction, message)
            self.runner.pause()

        return at_boundary

    def models(self) -> list[tuple[str, str]]:
        """(label, name) of every registered model, for pickers."""
        return [(engine.get_spec(name).label, name) for name in engine.list_models()]

    def is_loaded(self, name: str, weights: Weights, **options) -> bool:
        return (name, weights, tuple(sorted(options.items()))) in self._models

    @on_this_process
    def load(self, name: str, weights: Weights, **options) -> engine.LoadedModel:
        """The model built with `options` (an AlterNet's `msa`, ...), loaded once and cached."""
        key = (name, weights, tuple(sorted(options.items())))
        if key not in self._models:
            parameters = engine.get_spec(name).parameters
            if parameters > MAX_PARAMETERS:
                raise refuse(
                    f"{name} has {parameters / 1e6:.0f} M parameters; this server loads models of up to "
                    f"{MAX_PARAMETERS / 1e6:.0f} M (VIT_EXPLORER_MAX_PARAMS; the CLI has no limit)",
                    "model too large",
                )
            self._models[key] = engine.create_model(name, weights, device=self.device, **options)
        self._models.move_to_end(key)
        while len(self._models) > 1 and self.cached_bytes > MAX_CACHED_BYTES:  # least recently used first
            self._evicted_passes += self._models.popitem(last=False)[1].forward_passes
        return self._models[key]

    @property
    def cached_bytes(self) -> int:
        """Bytes of the weights and buffers of the models kept loaded."""
        return sum(
            t.numel() * t.element_size()
            for model in self._models.values()
            for t in [*model.module.parameters(), *model.module.buffers()]
        )

    def picture(self, image: object, name: str = "") -> Image.Image:
        """The photo of a request as RGB (from the upload folder only, when the service serves a network), decoded
        within the process's pixel budget, a JPEG at the smallest scale keeping DECODED_SIDE on its shorter side;
        bytes are named `name` in its problems."""
        found = image if self.uploads is None else self.uploads.image(image)
        return engine.load_image(found, budget=DECODING, shorter_side=DECODED_SIDE, name=name)

    def upload(self, value: object, what: str) -> Path:
        """A file of a request: from the upload folder only, when the service serves a network."""
        return Path(value) if self.uploads is None else self.uploads.file(value, what)

    def network_weights(self, weights: str | None) -> Asked:
        """`weights` as a network client may ask for them: a mode, or a bundled checkpoint's name, which
        becomes that file. Anything else, server paths included, is refused without looking at the disk."""
        if weights in (None, "") or weights in WEIGHT_MODES:
            return weights
        names = bundled_names()
        if weights in names:
            return Weights.file(CHECKPOINTS / f"{weights}.safetensors")
        raise refuse(
            f"weights must be {', '.join(WEIGHT_MODES)} or the name of a bundled checkpoint "
            f"({', '.join(names) or 'none is bundled'}), not '{shown(weights)}'",
            "unknown weights",
        )

    def analyze(
        self, image: ImageInput, names: list[str], weights: Asked = None, report: Report | None = None
    ) -> list[ModelRun]:
        """Load (once) and analyze every model on `image`; Grad-CAM for models without attention. The photo is
        decoded here, before the models' turn; the models see it decoded.

        Raises engine errors (ImageError, UnknownModelError, WeightsUnavailableError) unchanged.
        """
        names = model_names(names, MAX_MODELS)
        if not names:
            raise refuse("pick at least one model", "no models")
        return self._analyze(self.picture(image), names, weights, report=report)

    @on_model_thread
    def _analyze(
        self, picture: Image.Image, names: list[str], weights: Asked = None, report: Report | None = None
    ) -> list[ModelRun]:
        report = self.boundary(report)  # stops here once the request is abandoned; other visitors' turns
        models = self._each_model(names, weights, report)
        runs = []
        for i, loaded, chosen in models:
            report((i + 0.5) / len(names), f"Running {loaded.spec.label}")
            try:  # refused before it runs when its estimate is over the request's budget
                check_plain(loaded, self.footprint(loaded, timed=False), memory_budget(loaded))
            except TooLarge as exc:
                raise refuse(f"{loaded.spec.label}: {exc}", "analysis over the memory budget") from None
            inputs = loaded.transform(picture).unsqueeze(0)
            runs.append(replace(self._run(loaded, inputs, chosen), photo_size=picture.size))
        del picture  # the runs keep their models' inputs only
        give_back()
        report(1.0, "Done")
        return runs

    def _each_model(self, names: list[str], weights: Asked, report: Report) -> Iterator[Loading]:
        """(position, loaded model, its weights) of each of 1 to MAX_MODELS models, loaded once; the count is
        checked at the call."""
        names = model_names(names, MAX_MODELS)
        if not names:
            raise refuse("pick at least one model", "no models")
        return self._loading(names, weights, report)

    def _loading(self, names: list[str], weights: Asked, report: Report) -> Iterator[Loading]:
        for i, name in enumerate(names):
            chosen = self.weights_for(name, weights)
            if not self.is_loaded(name, chosen):
                report(
                    i / len(names), f"Loading {engine.get_spec(name).label} ({chosen.label} weights), first use only"
                )
            yield i, self.load(name, chosen), chosen

    @on_model_thread
    def lesioned(self, run: ModelRun, indices: list[int]) -> ModelRun:
        """`run` re-analyzed with the units at `indices` switched off (paper Fig 10b); no indices gives
        back the unlesioned run itself. Raises EngineError for a unit that cannot be switched off."""
        original = run.original or run
        indices = sorted(set(int(i) for i in indices))
        if not indices:
            return original
        loaded = self.load(original.result.name, original.weights)
        with engine.Lesion(loaded, indices):
            lesioned = self._run(loaded, original.inputs, original.weights)
        specs = loaded.spec.blocks(loaded.module)
        names = [unit_name(specs[i].name) for i in indices]  # as the lesion picker names them
        result = replace(lesioned.result, label=switched_off(original.result.label, names))
        return replace(
            lesioned, result=result, lesion=tuple(indices), original=original, photo_size=original.photo_size
        )

    def unsupported(self, run: ModelRun, method: str) -> str | None:
        """Why attribution `method` does not apply to `run`'s model (None when it does); asked of the model
        once, then kept, since every page redraw asks again and the answer depends on the architecture alone."""
        key = (run.result.name, method)
        if key not in self._unsupported:
            self._unsupported[key] = unsupported(method, self.load(run.result.name, run.weights))  # this process's
        return self._unsupported[key]

    def attribution(
        self, run: ModelRun, method: str, target: int, steps: int | None = None, report: Report | None = None
    ) -> AttributionMap:
        """`method`'s map of `run` (its photo, model and lesion) for class `target`, returned (the caller keeps it:
        `ModelRun.keep`); a map the run holds already is returned as it is, and a second ask while the same map of
        the same run is computed waits for it. `steps` for Integrated Gradients (None: the engine's default).
        Refused for a class or steps out of range, or a map over the request's memory or time budget (its internal
        batch is sized to fit first); EngineError for a method that does not apply, with the reason."""
        key = MapKey.checked(method, target, steps)
        if key in run.maps:
            return run.maps[key]
        return self.once(run, key, Service._attribution, run.bare(), key, report=report)

    def once(self, run: ModelRun, key: Hashable, job: Callable[..., Any], *args, **kwargs) -> Any:
        """Model job `job` (a Service method, undecorated) with `args`, where model work runs; asked again while the
        same job of the same `run` (the caller's, alive while it waits) runs, it waits for that one's result
        (Runner.call_once). Nothing is kept here: the caller keeps what it returns."""
        return self.runner.call_once((id(run), key), job, (self, *args), kwargs)

    def _attribution(self, run: ModelRun, key: MapKey, report: Report | None = None) -> AttributionMap:
        """The map `key` names on `run`, made on the model thread and returned."""
        cls = METHODS[key.method]
        loaded = self._loaded_for(run, key.target)
        analysis = cls(loaded, steps=key.steps) if cls is IntegratedGradients else cls(loaded)
        progress = self._bounded(analysis, loaded, key.method, report)
        try:
            with engine.Lesion(loaded, run.lesion):
                return analysis.attribute(run.inputs, key.target, progress)
        finally:
            give_back()

    def _loaded_for(self, run: ModelRun, target: int) -> engine.LoadedModel:
        """`run`'s model, loaded; refused when it has no class `target`."""
        loaded = self.load(run.result.name, run.weights)
        classes = len(loaded.spec.labels())
        if not 0 <= target < classes:
            raise refuse(
                f"class {shown(target, 20)} is out of range: {loaded.spec.label} has classes 0 to {classes - 1}",
                "class out of range",
            )
        return loaded

    def _bounded(self, analysis: Any, loaded: engine.LoadedModel, method: str, report: Report | None) -> Progress:
        """`analysis` fitted to the request's budgets (its internal batch sized to the memory budget and to a turn;
        refused when over the memory or time budget) and the progress to hand it: it reports to `report` and stops
        the work when it runs over its time (a Stop or a departed page stops it at a batch boundary)."""
        if not hasattr(analysis, "batch_size"):
            raise refuse(f"{method} has no internal batch to size", "unsized method")
        asked, need, budget = analysis.batch_size, self.footprint(loaded), memory_budget(loaded)
        try:
            analysis.batch_size = sized_batch(analysis, need, budget)
            expected = check_time(analysis, need, REQUEST_SECONDS)
        except TooLarge as exc:
            raise refuse(str(exc), "map over the memory budget") from None
        images = max(expected.cost.forward + expected.cost.backward, 1)  # a batch is one turn: about TURN_S
        turn = max(MIN_TURN_BATCH, int(TURN_S * images / max(expected.seconds, 1e-6)))
        analysis.batch_size = min(analysis.batch_size, turn)
        log.info(
            "%s on %s: internal batch %d of %d, ~%s within %s",
            method,
            loaded.name,
            analysis.batch_size,
            asked,
            amount(bytes_at(analysis, need, analysis.batch_size)),
            amount(budget),
        )

        def progress(done: int, total: int, report: Report = self.boundary(report)) -> None:
            if (spent := self.runner.computed()) > OVERTIME * REQUEST_SECONDS:
                raise refuse(
                    f"{method} on {loaded.spec.label} was stopped after {spent / 60:.1f} min of computing "
                    f"({done} of {total} passes; it was expected to take {expected.text}): this server allows "
                    f"{REQUEST_SECONDS / 60:.0f} min per request: try fewer steps or samples, Saliency, or a "
                    "smaller model",
                    "map over its time",
                )
            report(done / total, f"{method}: {done}/{total} passes, {expected.text} in all")

        return progress

    def faithfulness(
        self, run: ModelRun, key: CheckKey, heat: np.ndarray, method: str, report: Report | None = None
    ) -> Faithfulness:
        """Deletion and insertion (engine.DeletionInsertion) of map `heat` of `run` (its photo, model and lesion) for
        class `key.target`: how fast the class's probability falls as the map's pixels go, beside random orders
        (measured once per run and class, shared by its maps: `ModelRun.baseline`). Returned (the caller keeps it
        under `key`: `ModelRun.keep`); a check the run holds already is returned as it is. Under the request's
        memory and time budgets, as a map is."""
        key = replace(key, target=whole(key.target, "the class"))
        if key in run.checks:
            return run.checks[key]
        random = run.baseline(key.target)
        return self.once(run, key, Service._faithfulness, run.bare(), heat, key.target, method, random, report=report)

    def _faithfulness(
        self,
        run: ModelRun,
        heat: np.ndarray,
        target: int,
        method: str,
        random: RandomOrders | None,
        report: Report | None = None,
    ) -> Faithfulness:
        """The check of map `heat` on `run`, made on the model thread and returned (with its random orders)."""
        loaded = self._loaded_for(run, target)
        analysis = engine.DeletionInsertion(loaded, random=random)
        progress = self._bounded(analysis, loaded, f"Checking {method}", report)
        try:
            with engine.Lesion(loaded, run.lesion):
                return analysis.attribute(run.inputs, target, progress, heat=heat, method=method)
        finally:
            give_back()

    def footprint(self, loaded: engine.LoadedModel, timed: bool = True) -> Footprint:
        """What one image costs `loaded` in memory (engine.analyses.budget), traced once per loaded model; `timed`:
        with its forward pass timed too."""
        known = self._footprints.get(loaded.module) or footprint(loaded, timed=False)
        if timed and not known.seconds:
            known = replace(known, seconds=forward_seconds(loaded))
        self._footprints[loaded.module] = known
        return known

    def _run(self, loaded: engine.LoadedModel, inputs: torch.Tensor, weights: Weights) -> ModelRun:
        """`loaded` measured on `inputs`, a (1, 3, H, W) batch made by its transform."""
        result = engine.Analyzer(loaded).attribute(inputs)
        specs = loaded.spec.blocks(loaded.module)
        units = tuple((unit_label(i, s.name, s.kind), i) for i, s in enumerate(specs) if s.can_lesion)
        lens = LogitLens(loaded).attribute(inputs)
        run = ModelRun(result, inputs=inputs, weights=weights, units=units, lens=lens, device=loaded.device.type)
        if loaded.spec.attention is not None:
            return run
        return replace(run, gradcam=engine.GradCam(loaded).attribute(inputs, result.predictions[0][0].index).raw)

    def dataset_curves(
        self, archive: str | Path, names: list[str], weights: Asked = None, report: Report | None = None
    ) -> ZipCurves:
        """Figs 2a, 8 and 9 averaged over the images of a ZIP, per model, labelled with the image count.

        Raises ValueError (Refused) for a file not uploaded, not a ZIP, too large, or with too many images or pixels;
        unreadable members are skipped, and named once.
        """
        deadline = time.monotonic() + REQUEST_SECONDS  # from before the first byte of the ZIP is read
        return self._dataset_curves(self.upload(archive, "the ZIP"), names, weights, deadline, report=report)

    @on_model_thread
    def _dataset_curves(
        self, archive: Path, names: list[str], weights: Asked, deadline: float, report: Report | None = None
    ) -> ZipCurves:
        report = self.boundary(report)  # stops here once the request is abandoned; other visitors' turns
        names = model_names(names, MAX_MODELS)
        models = self._each_model(names, weights, report)
        if not zipfile.is_zipfile(archive):
            raise refuse("the upload is not a ZIP file; pack the images into one (zip -r images.zip DIR)", "not a ZIP")
        if archive.stat().st_size > MAX_DATASET_BYTES:
            raise refuse(
                f"the ZIP is {archive.stat().st_size / 2**20:.0f} MB; the app takes ZIPs of up to "
                f"{MAX_DATASET_BYTES // 2**20} MB (python -m engine curves has no limit)",
                "ZIP too large",
            )
        members = image_names(archive)
        if not members:
            raise refuse(f"the ZIP holds no images ({', '.join(sorted(IMAGE_SUFFIXES))})", "no images")
        if len(members) > MAX_DATASET_IMAGES:
            raise refuse(
                f"the ZIP holds {len(members)} images; the app measures at most {MAX_DATASET_IMAGES} "
                "(python -m engine curves --data takes any number)",
                "too many images",
            )
        with tempfile.TemporaryDirectory(prefix="vit-explorer-zip-") as folder:
            try:  # each image unpacked once for every pass and model, within one budget and the deadline
                unpacked = unpack_images(archive, members, Path(folder), MAX_UNPACKED_BYTES, deadline)
            except ImageError as exc:
                raise refuse(str(exc), "a ZIP") from None
            if not unpacked.files:
                raise refuse(f"none of the ZIP's {len(members)} images could be read", "no readable images")
            results, skipped = [], dict.fromkeys(unpacked.skipped)
            try:
                for i, loaded, _ in models:
                    label = loaded.spec.label

                    def progress(done: int, total: int, i=i, label=label) -> None:
                        report((i + done / total) / len(names), f"{label}: {done} of {total} images")

                    measured = DatasetCurves(loaded, batch_size=16).attribute(
                        unpacked.folder, progress=progress, deadline=deadline, max_pixels=int(MAX_MEGAPIXELS * 1e6)
                    )
                    skipped |= dict.fromkeys(unpacked.files[file] for file in measured.skipped)
                    results.append(replace(measured.model, label=f"{label} · {measured.model.images} images"))
            finally:
                give_back()
        report(1.0, "Done")
        return ZipCurves(results, list(skipped))

    @property
    def device_name(self) -> str:
        """'cpu' or 'cuda', as the JSON names it."""
        return str(resolve_device(self.device))

    def analysis_json(self, runs: list[ModelRun]) -> dict:
        """The engine CLI's JSON for these runs, each model with its logit lens."""
        out = Analysis([run.result for run in runs], runs[0].device if runs else self.device_name).to_json()
        for run, model in zip(runs, out["models"]):
            if run.lens is not None:
                model["logit_lens"] = run.lens.to_json()
        return out
