"""The server's limits: one object read from the environment (app/server/settings.py), every one of them in
docs/serving.md's table with its default, and no other module reading a VIT_EXPLORER_* variable itself."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest

from app.server.settings import PREFIX, SettingError, Settings
from tests.conftest import ROOT


def test_the_environment_sets_each_limit_and_a_wrong_value_names_its_variable():
    settings = Settings.from_env({"VIT_EXPLORER_MAX_PER_SESSION": "2", "VIT_EXPLORER_REQUEST_MB": "170.5"})
    assert settings.max_per_session == 2 and settings.request_mb == 170.5 and settings.bytes(1) == 2**20
    assert settings.cache_mb == Settings().cache_mb  # the others keep their defaults
    with pytest.raises(SettingError, match="VIT_EXPLORER_BODY_SECONDS must be a float, not 'soon'"):
        Settings.from_env({"VIT_EXPLORER_BODY_SECONDS": "soon"})


def test_every_setting_is_in_the_serving_docs_with_its_default():
    table = (ROOT / "docs/serving.md").read_text()
    for field in fields(Settings):
        row = next((line for line in table.splitlines() if f"`{PREFIX}{field.name.upper()}`" in line), None)
        assert row is not None and row.startswith("|"), field.name
        default = field.default
        shown = f"{default:,g}" if isinstance(default, (int, float)) else default or "none"
        cells = [cell.strip() for cell in row.split("|")]
        assert shown in cells or (field.name == "max_params" and "350 M" in cells), (field.name, shown, row)


def test_no_module_reads_a_setting_from_the_environment_itself():
    readers = [
        path.relative_to(ROOT).as_posix()
        for room in ("app", "engine")
        for path in (ROOT / room).rglob("*.py")
        if re.search(r"environ(\.get)?\(?\[?[\"']VIT_EXPLORER_", path.read_text())
    ]
    assert readers == [], readers
