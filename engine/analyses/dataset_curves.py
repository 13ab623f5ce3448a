"""Figs 2a, 8 and 9 over a dataset: a folder or ZIP of images, streamed, on one process or many.

    curves = DatasetCurves(create_model("resnet50", "random"), batch_size=64, workers=4)
    result = curves.attribute("imagenet/val", limit=5000)

Every block is measured per batch and the per-batch values are averaged over batches, as the
paper's notebooks do (MEASUREMENTS.md section 4). Both measurements are means over the images of
a batch, so each process keeps, per batch, the sums over its images and their count. Under
`torchrun --nproc_per_node N` a DistributedSampler gives process r the images r, r + N, ...; with
a per-process batch of B / N, batch k of all processes together is batch k of one process with
batch B, so all-reducing the sums gives one process's numbers (up to float rounding).
"""

from __future__ import annotations

import os
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.distributed as dist
from PIL import Image
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from ..data.images import load_image
from ..data.zip_images import check_pixel_budget, image_size, read_member
from ..errors import EngineError, ImageError
from ..models.blocks import BlockSpec
from ..models.registry import LoadedModel, Transform
from ..results import BlockResult, ModelResult
from .base import ModelAnalysis, Progress
from .block_measures import block_results, watch_latents
from .measure import map_statistics, to_bchw

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".gif", ".tif", ".tiff"}


def image_names(source: Path) -> list[str]:
    """The image files of a folder (recursively) or a ZIP, sorted: relative paths or member names."""
    if zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as archive:
            names = [n for n in archive.namelist() if not n.endswith("/") and not n.startswith("__MACOSX/")]
    elif source.is_dir():
        names = [str(p.relative_to(source)) for p in source.rglob("*") if p.is_file()]
    else:
        raise ImageError(f"{source} is neither a folder nor a ZIP file")
    return sorted(n for n in names if Path(n).suffix.lower() in IMAGE_SUFFIXES)


class ImageStream(Dataset):
    """The images of a folder or ZIP through a model's eval transform, as (tensor, readable) pairs.

    An unreadable file (or a ZIP member that is encrypted, corrupt, or too large unpacked: see
    engine.data.zip_images) gives a zero tensor with readable False: the batch keeps its shape, and the file
    is left out of the measurements and named in the result. `max_pixels` bounds the pixels of all
    images together, read from their headers before any is decoded.
    """

    def __init__(
        self, source: str | Path, transform: Transform, limit: int | None = None, max_pixels: int | None = None
    ) -> None:
        self.source = Path(source)
        if not self.source.exists():
            raise ImageError(f"{self.source} does not exist")
        self.names = image_names(self.source)[:limit]
        if not self.names:
            raise ImageError(f"{self.source} holds no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
        self.transform = transform
        self._zip: zipfile.ZipFile | None = None  # opened in each worker on first use
        self._shape: torch.Size | None = None
        if max_pixels is not None:
            check_pixel_budget([image_size(self._bytes(name)) for name in self.names], max_pixels, "the images")

    def _bytes(self, name: str) -> bytes | Path:
        if self.source.is_dir():
            return self.source / name
        if self._zip is None:
            self._zip = zipfile.ZipFile(self.source)
        try:
            return read_member(self._zip, name)
        except ImageError:
            return b""

    def __len__(self) -> int:
        return len(self.names)

    def _load(self, name: str) -> Image.Image:
        """The image as RGB through engine.data.images.load_image (size limits, EXIF, alpha on white)."""
        if self.source.is_dir():
            return load_image(self.source / name)
        if self._zip is None:
            self._zip = zipfile.ZipFile(self.source)
        return load_image(read_member(self._zip, name))

    def __getitem__(self, index: int) -> tuple[torch.Tensor, bool]:
        try:
            x = self.transform(self._load(self.names[index]))
        except ImageError:  # an unreadable file is skipped and named, never fatal
            return torch.zeros(self._shape or self._probe_shape()), False
        self._shape = x.shape
        return x, True

    def _probe_shape(self) -> torch.Size:
        self._shape = self.transform(Image.new("RGB", (256, 256))).shape
        return self._shape

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_zip": None}


class DatasetCurves(ModelAnalysis):
    """Measures every block of one model over a dataset of images, streamed in batches.

    `batch_size` is the batch of the whole run: under torchrun each process takes batch_size / N.
    """

    def __init__(self, model: LoadedModel, batch_size: int = 64, workers: int = 0) -> None:
        super().__init__(model, batch_size)
        self.workers = workers

    def attribute(
        self,
        source: str | Path,
        limit: int | None = None,
        progress: Progress | None = None,
        max_pixels: int | None = None,
        deadline: float | None = None,
    ) -> DatasetResult:
        """Stream the images of `source` (a folder or ZIP; the first `limit` in name order) through the
        model and average each block's per-batch curve and variance over the batches. `max_pixels` bounds
        the pixels decoded; past `deadline` (time.monotonic()) the run stops between batches (EngineError)."""
        started = time.perf_counter()
        stream = ImageStream(source, self.model.transform, limit, max_pixels)
        rank, world = _process_group()
        if self.batch_size % world:
            raise EngineError(f"batch size {self.batch_size} must be a multiple of the {world} processes")
        sampler = DistributedSampler(stream, world, rank, shuffle=False) if world > 1 else None
        loader = DataLoader(
            stream,
            self.batch_size // world,
            sampler=sampler,
            num_workers=self.workers,
            pin_memory=self.model.device.type == "cuda",
        )
        specs = self.model.spec.blocks(self.model.module)
        sums = _BatchSums(specs, len(loader), self.model.device)
        handles = watch_latents(specs, sums.add)
        position = 0  # this process's sample count so far; global index rank + world * position
        try:
            with torch.inference_mode():
                for batch, (images, readable) in enumerate(loader):
                    if deadline is not None and time.monotonic() > deadline:
                        raise EngineError(
                            f"stopped after {batch} of {len(loader)} batches: the request ran past its "
                            "time budget; measure fewer images"
                        )
                    index = rank + world * torch.arange(position, position + len(images))
                    position += len(images)
                    real = index < len(stream)  # DistributedSampler pads with repeated images
                    keep = real & readable
                    if self.model.device.type == "cuda":  # from pageable memory the copy would wait for the GPU
                        keep = keep.pin_memory()
                    keep = keep.to(self.model.device, non_blocking=True)
                    sums.start(batch, keep, index[real & ~readable].tolist())
                    self.forward(images)
                    if progress:
                        progress(min(position * world, len(stream)), len(stream))
        finally:
            for handle in handles:
                handle.remove()
        counts = sums.all_reduce()
        return DatasetResult(
            model=ModelResult(
                name=self.model.name,
                label=self.model.spec.label,
                weights=self.model.weights,
                random_weights=self.model.random,
                dataset=self.model.spec.dataset,
                images=int(counts.sum()),
                predictions=[],
                blocks=sums.results(),
            ),
            source=str(source),
            device=str(self.model.device),
            batches=int((counts > 0).sum()),
            batch_size=self.batch_size,
            processes=world,
            skipped=sorted(stream.names[i] for i in sums.unreadable),
            seconds=time.perf_counter() - started,
        )


@dataclass
class DatasetResult:
    """A model's curves averaged over a dataset, with how they were made."""

    model: ModelResult
    source: str
    device: str
    batches: int
    batch_size: int
    processes: int
    skipped: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def images_per_second(self) -> float:
        return self.model.images / self.seconds if self.seconds else 0.0

    def to_json(self) -> dict:
        return {
            **self.model.to_json(),
            "source": self.source,
            "device": self.device,
            "batches": self.batches,
            "batch_size": self.batch_size,
            "processes": self.processes,
            "skipped": self.skipped,
            "seconds": self.seconds,
        }


class _BatchSums:
    """Per block and batch, the sums over the kept images of each image's curve and variance."""

    def __init__(self, specs: list[BlockSpec], batches: int, device: torch.device) -> None:
        self.specs = specs
        self.batches = batches
        self.device = device
        self.curves: list[torch.Tensor | None] = [None] * len(specs)  # (batches, frequencies), float64
        self.variances = torch.zeros(len(specs), batches, dtype=torch.float64, device=device)
        self.counts = torch.zeros(batches, dtype=torch.float64, device=device)
        self.shapes: list[tuple[int, ...]] = [()] * len(specs)
        self.unreadable: list[int] = []
        self._batch = 0
        self._keep = torch.ones(0, device=device)

    def start(self, batch: int, keep: torch.Tensor, unreadable: list[int]) -> None:
        """Begin `batch`: its images to count (`keep`) and the dataset indices of its unreadable files."""
        self._batch, self._keep = batch, keep.double()
        self.counts[batch] += self._keep.sum()
        self.unreadable += unreadable

    def add(self, index: int, latent) -> None:
        """Measure each image of this batch's latent alone (as a batch of one) and add the kept ones."""
        x = to_bchw(latent, self.specs[index])
        self.shapes[index] = tuple(x.shape[1:])
        stats = map_statistics(x)
        amplitudes = stats.log_amplitudes()  # (B, frequencies): each image's curve before the subtraction
        curves = (amplitudes - amplitudes[:, :1]).double()
        if self.curves[index] is None:
            self.curves[index] = torch.zeros(self.batches, curves.shape[-1], dtype=torch.float64, device=self.device)
        self.curves[index][self._batch] += self._keep @ curves
        self.variances[index, self._batch] += self._keep @ stats.variances().double()

    def all_reduce(self) -> torch.Tensor:
        """Sum every process's sums (and gather the unreadable files); returns the per-batch counts."""
        if dist.is_available() and dist.is_initialized():
            flat = torch.cat([self.counts, self.variances.flatten(), *[c.flatten() for c in self.curves]])
            dist.all_reduce(flat)
            sizes = [self.batches, self.variances.numel(), *[c.numel() for c in self.curves]]
            parts = flat.split(sizes)
            self.counts, self.variances = parts[0], parts[1].view_as(self.variances)
            self.curves = [part.view_as(c) for part, c in zip(parts[2:], self.curves)]
            gathered: list[list[int]] = [[] for _ in range(dist.get_world_size())]
            dist.all_gather_object(gathered, self.unreadable)
            self.unreadable = [i for part in gathered for i in part]
        return self.counts.cpu()

    def results(self) -> list[BlockResult]:
        """Per-batch means (sums / counts) averaged over the batches that kept any image."""
        kept = self.counts > 0
        if not kept.any():
            raise ImageError("no image could be read")
        counts = self.counts[kept]
        variances = [float((v[kept] / counts).mean()) for v in self.variances]
        curves = [(c[kept] / counts[:, None]).mean(dim=0).tolist() for c in self.curves]
        return block_results(self.specs, self.shapes, variances, curves)


def _process_group() -> tuple[int, int]:
    """(rank, world size): joins torchrun's process group (gloo on the CPU, NCCL on GPUs) when
    launched by it, else (0, 1)."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return 0, 1
    if not dist.is_initialized():
        if torch.cuda.is_available():
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))  # NCCL's collectives use the current GPU
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return dist.get_rank(), dist.get_world_size()


def is_main_process() -> bool:
    """Rank 0 of torchrun's processes (its RANK variable, so also before and after the process group), or
    a process not launched by it."""
    return int(os.environ.get("RANK", "0")) == 0


def finish_process_group() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def distributed_device(device: str) -> str:
    """Under torchrun with GPUs, 'auto' and 'cuda' mean this process's own GPU (LOCAL_RANK)."""
    if device in ("auto", "cuda") and torch.cuda.is_available() and "LOCAL_RANK" in os.environ:
        return f"cuda:{os.environ['LOCAL_RANK']}"
    return device
