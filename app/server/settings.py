"""Every limit a server is run with, in one object read once from the environment (`VIT_EXPLORER_<FIELD>`, the
field's name in capitals) when the server starts: the guard, the service, the sessions and the export browser take
their limits from here, and the engine takes its budgets as arguments. docs/serving.md's table lists each one.

    SETTINGS.request_mb          # 1500.0, or VIT_EXPLORER_REQUEST_MB
    Settings.from_env({"VIT_EXPLORER_MAX_PER_SESSION": "2"}).max_per_session   # 2
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Mapping

PREFIX = "VIT_EXPLORER_"
MB = 2**20
KINDS = {"int": int, "float": float, "str": str}  # a field's annotation (a string here): how its variable is read


class SettingError(ValueError):
    """A VIT_EXPLORER_* variable that does not hold what its setting takes."""


@dataclass(frozen=True)
class Settings:
    """The server's limits (defaults for a 2-core, 24 GB machine serving a class)."""

    max_params: int = 350_000_000  # parameters of a typed timm model (ViT-L/16 has 304 M)
    cache_mb: float = 3000  # loaded models' weights kept, least recently used first out
    max_megapixels: float = 200  # decoded per dataset request
    decode_megapixels: float = 100  # being decoded at once, over every request
    zip_mb: float = 1000  # a dataset ZIP's images, unpacked
    request_seconds: float = 300  # a dataset request stops past this; a map expected to take longer is refused
    request_mb: float = 1500  # what one request may use beyond its model's weights
    sessions_high_mb: float = 4000  # the server's memory past which idle sessions go early
    max_per_session: int = 8  # requests waiting or running per browser session
    max_per_address: int = 12  # requests waiting or running per client address
    body_seconds: float = 30  # for a JSON body to arrive whole; the longest pause in an upload
    body_budget_mb: float = 200  # all request bodies being received at once
    trusted_proxies: str = ""  # reverse proxies whose X-Forwarded-For is believed (comma-separated)
    upload_mb_per_minute: float = 150  # what one address may upload per minute
    upload_folder_mb: float = 2000  # the uploads the server holds
    session_upload_mb: float = 160  # the uploads one Streamlit page may hold
    session_sweep_s: float = 30  # how often closed Streamlit sessions are looked for
    export_browser_idle_s: float = 60  # without an export, after which the export browser closes

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Settings:
        """The defaults, with each `VIT_EXPLORER_<FIELD>` found in `environ`; a value of the wrong kind is an error
        naming the variable."""
        found = {}
        for field in fields(cls):
            name = PREFIX + field.name.upper()
            if name not in environ:
                continue
            kind = KINDS[str(field.type)]
            try:
                found[field.name] = int(float(environ[name])) if kind is int else kind(environ[name])
            except ValueError:
                raise SettingError(f"{name} must be a {kind.__name__}, not {environ[name]!r}") from None
        return cls(**found)

    def bytes(self, megabytes: float) -> int:
        """A setting in MB as bytes."""
        return int(megabytes * MB)


SETTINGS = Settings.from_env()
