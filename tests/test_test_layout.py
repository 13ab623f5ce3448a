"""The test suite's own layout: no test module imports another (what they share is in tests/helpers/, their
shared fixtures in tests/conftest.py), so that each module runs alone and a helper has one home."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

TESTS = ROOT / "tests"


def imported_test_modules(path: Path) -> set[str]:
    """The test modules (tests/test_*.py) that `path` imports, at any depth: `import tests.test_x`,
    `from tests.test_x import ...`, `from tests import test_x` and their relative forms."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 1:  # relative to tests/
                base = f"tests.{base}" if base else "tests"
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if len(parts) >= 2 and parts[0] == "tests" and parts[1].startswith("test_"):
                found.add(f"tests/{parts[1]}.py")
    return found


def test_no_test_module_imports_another():
    imports = {path.name: imported_test_modules(path) for path in sorted(TESTS.glob("test_*.py"))}
    assert len(imports) > 50  # the suite's modules were read
    offending = {name: sorted(found) for name, found in imports.items() if found}
    assert not offending, f"test modules importing other test modules (move the helper to tests/helpers/): {offending}"


def test_the_check_finds_each_form_of_import(tmp_path: Path):
    source = tmp_path / "test_example.py"
    source.write_text(
        "import tests.test_a\n"
        "from tests.test_b import x\n"
        "from tests import test_c, helpers\n"
        "from .test_d import (\n    y,\n    z,\n)\n"
        "from tests.helpers.pages import open_page\n"
        "def f():\n    from tests.test_e import w\n"
    )
    assert imported_test_modules(source) == {f"tests/test_{m}.py" for m in "abcde"}
