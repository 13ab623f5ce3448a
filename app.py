"""Hugging Face Spaces entry point (`app_file: app.py`): launches the Gradio app of package `app`.

On a Space every visitor arrives through the Space's own proxy, from a private address: unless the host says
otherwise, its X-Forwarded-For is believed from private networks only, so that each visitor is counted alone. On a
ZeroGPU Space (`SPACES_ZERO_GPU`) the `spaces` package is imported first, before anything can touch CUDA; the app's
GPU function is decorated as its modules load, before launch (app/server/zero_gpu.py)."""

import os

SPACE_PROXIES = "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16"

if __name__ == "__main__":
    if os.environ.get("SPACES_ZERO_GPU", "").lower() in ("1", "t", "true"):
        import spaces  # noqa: F401
    if os.environ.get("SPACE_ID"):
        os.environ.setdefault("VIT_EXPLORER_TRUSTED_PROXIES", SPACE_PROXIES)
    from app.gradio_app import main

    main()
