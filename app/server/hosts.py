"""Which runner this host's model work takes, chosen once at start: a ZeroGPU Space's GPU worker (with this
process's CPU as the fallback), else the model thread."""

from __future__ import annotations

import os

from app.server.work import ModelThread, Runner


def on_zero_gpu() -> bool:
    """Whether this process is a Hugging Face ZeroGPU Space (`SPACES_ZERO_GPU`, as the `spaces` package reads it)."""
    return os.environ.get("SPACES_ZERO_GPU", "").lower() in ("1", "t", "true")


def runner_for_this_host() -> tuple[Runner, str]:
    """The runner this process's model work takes, and the device its own models use: on a ZeroGPU Space, the GPU
    worker (whose device is chosen in the worker) with this process's CPU as the fallback; elsewhere the model
    thread on 'auto' (a GPU where there is one)."""
    if on_zero_gpu():
        from app.server.zero_gpu import ZeroGPU  # imports `spaces` and Gradio: only on a ZeroGPU Space

        return ZeroGPU(ModelThread()), "cpu"
    return ModelThread(), "auto"
