"""What a page session keeps after a 12-megapixel photo on two models and a map: only what its page shows (and the
model's input a map is computed from), measured as bench/session_memory.py measures a Gradio session
(app.server.sizes.kept_bytes), against a bound made from the arrays shown."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from app.backend.service import ModelRun, Service
from app.server.sizes import kept_bytes, reachable
from app.server.uploads import Uploads
from app.tabs.compare import CompareTab, Look
from app.views.attention import ViewOptions

MODELS = ["resnet18", "vit_tiny_patch16_224"]  # as the bench: random weights, one with attention and the lens
BESIDES = 128 * 2**10  # per run, beside its arrays: predictions, curves, labels, and the Python objects holding them


def shown_bytes(run: ModelRun) -> int:
    """The bytes of the arrays `run`'s column and plots draw from, and of the model's input its maps need."""
    result, lens = run.result, run.lens
    attention = result.attention
    arrays = [
        run.inputs.numpy(),  # the model's input (a map of another method is computed from it)
        result.input_images,  # the image as the model saw it, under every map
        run.gradcam,
        *(layer.maps for layer in (attention.layers if attention else [])),
        attention.rollout if attention else None,
        *(lens.patch_logits if lens else []),
        *(array for found in run.maps.values() for array in (found.map, found.raw)),
    ]
    return sum(array.nbytes for array in arrays if array is not None)


@pytest.mark.slow
def test_an_analysed_session_keeps_what_its_page_shows_and_no_more(tmp_path: Path):
    y, x = np.mgrid[0:300, 0:400]
    small = np.stack([x * 0.6, y * 0.8, (x + y) * 0.35], axis=-1).astype(np.uint8)
    phone = Image.fromarray(small).resize((4000, 3000), Image.BICUBIC)  # 12 MP: 36 MB decoded
    phone.save(tmp_path / "phone.jpg", quality=90)
    tab = CompareTab(Service(uploads=Uploads((tmp_path,))))
    page = tab.analyze(str(tmp_path / "phone.jpg"), [], " ".join(MODELS), "random", Look())
    tab.view(page.runs[0], ViewOptions(method="Saliency"), Look())  # a map computed: kept on the session's run
    assert [len(run.maps) for run in page.runs] == [1, 0]
    for run in page.runs:
        kept, bound = kept_bytes(run), shown_bytes(run) + BESIDES
        assert kept <= bound, f"{run.result.name} keeps {kept / 2**20:.2f} MB, shows {bound / 2**20:.2f} MB"
    assert kept_bytes(page.runs) < 3 * 2**20  # the session's runs (ResNet-18's with its map): 21.7 MB before #58


def test_kept_bytes_counts_arrays_tensors_and_views_once_and_leaves_out_what_is_shared():
    import torch

    whole = np.zeros((1024, 1024), np.float32)  # 4 MB
    view = whole[:, 0]  # a view keeps the whole array
    tensor = torch.zeros(1024, 256)  # 1 MB of storage
    held = {"view": view, "again": view, "tensor": tensor, "its numpy": tensor.numpy()[:1], "on it": tensor[:2]}
    assert 5 * 2**20 <= kept_bytes(held) < 5.1 * 2**20
    assert kept_bytes(held, shared=reachable([whole, tensor])) < 0.1 * 2**20  # both reachable from elsewhere
