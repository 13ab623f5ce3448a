"""Loading weights: timm's pretrained weights from the Hugging Face hub (cached), or a local file.

Offline, a pretrained request fails within seconds with a message naming the model, what was
tried and how to fix it. Weights are never replaced by random ones silently.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import torch
from torch import nn

from ..errors import CheckpointError, OfflineWeightsError, WeightsUnavailableError

HUB_TIMEOUT_S = 3.0
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co")


_RECHECK_S = 60.0
_last_check: dict[str, tuple[float, bool]] = {}  # endpoint -> (monotonic time, reachable)


def hub_reachable(timeout: float = HUB_TIMEOUT_S) -> bool:
    """True when a TCP connection to the hub opens within `timeout` seconds (DNS included).

    The answer is remembered for a minute, so repeated requests offline fail at once.
    """
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes"):
        return False
    endpoint = hub_endpoint()
    checked = _last_check.get(endpoint)
    if checked and time.monotonic() - checked[0] < _RECHECK_S:
        return checked[1]
    reachable = _connects(endpoint, timeout)
    _last_check[endpoint] = (time.monotonic(), reachable)
    return reachable


def _connects(endpoint: str, timeout: float) -> bool:
    url = urlparse(endpoint)
    port = url.port or (443 if url.scheme == "https" else 80)
    result: list[bool] = []

    def attempt() -> None:
        try:
            with socket.create_connection((url.hostname, port), timeout=timeout):
                result.append(True)
        except OSError:
            result.append(False)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout)
    return bool(result and result[0])


def cached_hub_file(repo_id: str) -> str | None:
    """Path of a weights file of `repo_id` already in the local hub cache, if any."""
    from huggingface_hub import try_to_load_from_cache

    for filename in _WEIGHT_FILES:
        path = try_to_load_from_cache(repo_id, filename)
        if isinstance(path, str):
            return path
    return None


def download_hub_file(repo_id: str) -> str:
    """Download the weights of `repo_id` into the hub cache, with the hub's progress bar."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    for filename in _WEIGHT_FILES:
        try:
            return hf_hub_download(repo_id, filename)
        except EntryNotFoundError:
            continue
    raise WeightsUnavailableError(f"{repo_id} on the hub has none of {', '.join(_WEIGHT_FILES)}")


def timm_pretrained(name: str) -> nn.Module:
    """timm's own ImageNet weights for `name`: from the cache, else downloaded if the hub answers."""
    import timm
    from timm.models import get_pretrained_cfg

    cfg = get_pretrained_cfg(name)
    repo_id = cfg.hf_hub_id if cfg is not None else None
    if not repo_id:
        raise WeightsUnavailableError(f"{name}: timm has no pretrained weights on the Hugging Face hub")
    path = cached_hub_file(repo_id)
    if path is None:
        if not hub_reachable():
            cache = os.environ.get("HF_HUB_CACHE") or os.environ.get("HF_HOME") or "~/.cache/huggingface"
            raise OfflineWeightsError(
                f"{name}: pretrained weights {repo_id} are not in the local cache ({cache}) and "
                f"{hub_endpoint()} could not be reached (tried for up to {HUB_TIMEOUT_S:.0f} s); use weights 'random', "
                "a local .safetensors file, or download them once online (HF_HOME sets the cache)",
                name,
            )
        try:
            path = download_hub_file(repo_id)
        except WeightsUnavailableError:
            raise
        except Exception as exc:  # network errors from the hub client come in many types
            raise WeightsUnavailableError(f"{name}: downloading {repo_id} failed: {exc}") from exc
    return timm.create_model(name, pretrained=True, pretrained_cfg_overlay={"file": path})


def read_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """A state dict from .safetensors, or from a torch file with weights_only (no arbitrary pickles)."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        if path.suffix == ".safetensors":
            from safetensors.torch import load_file

            return load_file(str(path))
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise CheckpointError(f"checkpoint {path} could not be read: {exc}") from exc
    if isinstance(state, dict) and "state_dict" in state:
        state = state["state_dict"]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointError(f"checkpoint {path} is not a state dict of tensors")
    return state


def load_state_dict_strict(model: nn.Module, state: dict[str, torch.Tensor], source: str) -> None:
    """Load `state` into `model`, or raise a CheckpointError naming the keys and shapes that differ."""
    own = model.state_dict()
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    mismatched = sorted(k for k in set(own) & set(state) if own[k].shape != state[k].shape)
    if missing or unexpected or mismatched:
        parts = []
        for label, keys in (("missing", missing), ("unexpected", unexpected), ("wrong shape", mismatched)):
            if keys:
                shown = ", ".join(keys[:5]) + (f" (+{len(keys) - 5} more)" if len(keys) > 5 else "")
                parts.append(f"{label}: {shown}")
        raise CheckpointError(f"checkpoint {source} does not fit the model; " + "; ".join(parts))
    model.load_state_dict(state)
