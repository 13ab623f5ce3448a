"""A local stand-in for Hugging Face ZeroGPU: the device API on loopback and the app started as a ZeroGPU Space.

`DeviceApi` answers what the real `spaces` package (in ZeroGPU mode) asks of the Space's device API: the startup
report, `/schedule` (a GPU at once; or, as the test chooses, a quota refusal with its 429 and X-Approve-Result header,
or a queued answer as an event stream), `/allow` and `/release`; it records every call, the durations asked for
among them.

`python tests/zero_gpu_standin.py` starts `app.py` as the Space does, with the package's three GPU steps (packing the
tensors moved to CUDA at start, CUDA's init in the worker, moving the packed tensors there) replaced by CPU no-ops, so
that the package's real fork, pickling, queue, error and generator machinery runs on a machine without a GPU.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class DeviceApi:
    """The device API on a loopback port. `mode`: 'gpu' (scheduled at once), 'quota' (refused: quota exceeded),
    'queue' (queued, pinged, then scheduled)."""

    mode: str = "gpu"
    calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _tokens: int = 0

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> DeviceApi:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                parsed = urlparse(self.path)
                params = {key: values[-1] for key, values in parse_qs(parsed.query).items()}
                api.calls.append((parsed.path, params))
                if parsed.path == "/schedule":
                    api._schedule(self)
                elif parsed.path in ("/startup-report", "/allow", "/release"):
                    self._answer(200, {})
                else:
                    self._answer(404, {"detail": "not found"})

            def do_GET(self) -> None:
                self._answer(200, 0) if self.path.startswith("/queue-size") else self._answer(404, {})

            def _answer(self, status: int, body: object, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _granted(self) -> dict:
        self._tokens += 1
        return {"idle": True, "nvidiaIndex": 0, "nvidiaUUID": "GPU-standin", "allowToken": f"token-{self._tokens}"}

    def _schedule(self, handler: BaseHTTPRequestHandler) -> None:
        if self.mode == "quota":
            handler._answer(429, {"left": 0, "wait": 600}, {"X-Approve-Result": "quota-exceeded"})
            return
        if self.mode == "gpu":
            handler._answer(200, self._granted())
            return
        handler.send_response(200)  # queued: pings, then the GPU, as an event stream (one event per write)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("X-Queuing-Reason", "node")
        handler.end_headers()
        for _ in range(2):
            handler.wfile.write(b"event: ping\n\n")
            handler.wfile.flush()
            time.sleep(0.3)
        handler.wfile.write(f"event: succeeded\ndata: {json.dumps(self._granted())}\n\n".encode())
        handler.wfile.flush()
        handler.close_connection = True

    def asked(self, path: str) -> list[dict[str, str]]:
        """The parameters of every call to `path` so far."""
        return [params for called, params in self.calls if called == path]


SPACE_UID = 1000  # a Space runs its app as user 1000


def space_settings(port: int) -> dict[str, str]:
    """The environment a Space gives its app: its id, SYSTEM=spaces, every address on port `port`, a HOME of its
    own (a new folder in /tmp, which the Space's user can reach; the hub cache and Gradio's files under it)."""
    home = Path(tempfile.mkdtemp(prefix="space-home-"))
    return {
        "SPACE_ID": "a-teacher/vit-explorer",
        "SYSTEM": "spaces",
        "GRADIO_SERVER_NAME": "0.0.0.0",
        "GRADIO_SERVER_PORT": str(port),
        "HOME": str(home),
        "HF_HUB_CACHE": str(home / ".cache" / "huggingface" / "hub"),
        "GRADIO_TEMP_DIR": str(home / "gradio"),
        "VIT_EXPLORER_TRUSTED_PROXIES": "127.0.0.1",  # the tests stand where the Space's proxy stands
    }


def as_space_user(command: list[str], home: str) -> list[str]:
    """`command` as the Space's non-root user (uid 1000) owning `home`, when the tests run as root."""
    if os.getuid() != 0:
        return command
    for path in [Path(home), *Path(home).rglob("*")]:
        os.chown(path, SPACE_UID, SPACE_UID)
    for folder in Path(sys.base_prefix).resolve().parents:  # the interpreter under root's home (pyenv): the user
        if not folder.stat().st_mode & 0o001:  # may pass through (not list) the folders above it
            folder.chmod(folder.stat().st_mode | 0o001)
    return ["setpriv", f"--reuid={SPACE_UID}", f"--regid={SPACE_UID}", "--clear-groups", *command]


def replace_gpu_steps() -> None:
    """The `spaces` package's three GPU steps as CPU no-ops (call after `import spaces` in ZeroGPU mode)."""
    from spaces.zero import torch as zero_torch

    zero_torch.pack = lambda *args, **kwargs: 0
    zero_torch.size = lambda *args, **kwargs: 0
    zero_torch.init = lambda *args, **kwargs: None
    zero_torch.move = lambda *args, **kwargs: None


def main() -> None:
    """`app.py` as a ZeroGPU Space runs it, with the GPU steps on the CPU."""
    sys.path.insert(0, str(ROOT))
    import spaces  # noqa: F401 - first, as on the Space: it patches torch and wraps launch()

    replace_gpu_steps()
    sys.argv = [str(ROOT / "app.py")]
    runpy.run_path(str(ROOT / "app.py"), run_name="__main__")


if __name__ == "__main__":
    main()
