"""The layout's rules, read from the source: the engine has no import cycle and no UI imports, and the
tab logic and views import no front end."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from tests.conftest import ROOT

FRONT_ENDS = ("gradio", "streamlit")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache  # each test reads the same files: parsed once a run
def imports(path: Path) -> frozenset[str]:
    """Absolute names of the modules `path` imports (relative imports resolved), at any depth of the file."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(filter(None, [base, node.module]))
            if node.module:  # `from . import checkpoint` imports the module, not its package's face
                found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return frozenset(found)


def graph(folder: str) -> dict[str, set[str]]:
    files = {module_name(path): path for path in (ROOT / folder).rglob("*.py")}
    return {name: {m for m in imports(path) if m in files and m != name} for name, path in files.items()}


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, or None."""
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> list[str] | None:
        state[node] = 1
        for other in sorted(edges[node]):
            if state.get(other) == 1:
                return trail[trail.index(other) :] + [other]
            if other not in state and (found := visit(other, [*trail, other])):
                return found
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node, [node])):
            return found
    return None


def test_the_engine_has_no_import_cycle():
    edges = graph("engine")
    edges.pop("engine", None)  # the package's face re-exports its modules; a module importing it is a cycle
    assert not any("engine" == m for targets in edges.values() for m in targets)
    assert cycle(edges) is None, cycle(edges)


def test_engine_tabs_and_views_import_no_front_end():
    for folder in ("engine", "app/tabs", "app/views"):
        for path in (ROOT / folder).rglob("*.py"):
            ui = {m for m in imports(path) if m.split(".")[0] in FRONT_ENDS}
            assert not ui, f"{path.relative_to(ROOT)} imports {ui}"


def test_the_cycle_check_finds_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def rooms(edges: dict[str, set[str]], folder: str) -> dict[str, set[str]]:
    """The import graph between `folder`'s packages (a module at its root stands for itself)."""
    depth = len(folder.split("/")) + 1

    def room(name: str) -> str:
        return ".".join(name.split(".")[:depth])

    found: dict[str, set[str]] = {}
    for name, targets in edges.items():
        found.setdefault(room(name), set()).update(room(t) for t in targets if room(t) != room(name))
    return found


def test_the_engine_is_in_rooms_with_no_loop_between_them():
    at_root = [path.name for path in (ROOT / "engine").glob("*.py")]
    assert len(at_root) <= 8, sorted(at_root)
    edges = graph("engine")
    edges.pop("engine", None)
    between = rooms(edges, "engine")
    assert {"engine.models", "engine.analyses", "engine.data", "engine.paper", "engine.training"} <= set(between)
    assert cycle(between) is None, cycle(between)


def test_the_app_has_no_import_cycle():
    """app/backend/service.py and app/views/ do not import each other, nor does anything else loop."""
    edges = {name: targets - {"app"} for name, targets in graph("app").items() if name != "app"}  # its empty face
    assert cycle(edges) is None, cycle(edges)
    assert not any(m.startswith("app.views") for m in edges["app.backend.service"])


ENTRY_FILES = {"__init__.py", "gradio_app.py", "streamlit_app.py", "streamlit_server.py"}


def app_room(name: str) -> str:
    """The room of a module of app/ or engine/: `engine`, a package of app/ (`tabs`, `server`, ...), or a front end
    (`gradio_ui`, `streamlit_ui`, their entry files included)."""
    parts = name.split(".")
    if parts[0] == "engine":
        return "engine"
    room = parts[1] if len(parts) > 1 else "app"
    return {"gradio_app": "gradio_ui", "streamlit_app": "streamlit_ui", "streamlit_server": "streamlit_ui"}.get(
        room, room
    )


def documented_layers() -> list[set[str]]:
    """The rooms in the order docs/contributing.md draws them ("Dependencies run one way: a -> `app/b` and ..."),
    top first."""
    text = (ROOT / "docs/contributing.md").read_text()
    line = text.split("Dependencies run one way: ", 1)[1].split(";", 1)[0]
    names = {"front ends": {"gradio_ui", "streamlit_ui"}}
    return [
        set().union(
            *(names.get(part.strip(" `"), {part.strip(" `").removeprefix("app/")}) for part in step.split(" and "))
        )
        for step in line.split(" -> ")
    ]


def test_app_s_root_holds_only_the_entry_files():
    assert {path.name for path in (ROOT / "app").glob("*.py")} == ENTRY_FILES


def test_the_app_s_rooms_import_only_the_rooms_below_them_as_the_contributing_guide_draws():
    layers = documented_layers()
    assert layers[0] == {"gradio_ui", "streamlit_ui"} and layers[-1] == {"engine"}, layers
    level = {room: i for i, rooms_here in enumerate(layers) for room in rooms_here}
    files = {module_name(path): path for folder in ("app", "engine") for path in (ROOT / folder).rglob("*.py")}
    rooms_found = {app_room(name) for name in files} - {"app"}
    assert rooms_found == set(level), "every room of app/ is drawn in docs/contributing.md"
    upward = []
    for name, path in files.items():
        for target in (m for m in imports(path) if m in files and app_room(m) not in ("app", app_room(name))):
            if app_room(name) != "app" and level[app_room(target)] <= level[app_room(name)]:
                upward.append(f"{name} -> {target}")
    assert upward == [], upward


def test_front_ends_are_short_files_that_draw():
    """Entry files only assemble tabs and start the server; each tab's front end is one short file."""
    for entry in ("app/gradio_app.py", "app/streamlit_app.py"):
        assert len((ROOT / entry).read_text().splitlines()) <= 150, entry
    for folder in ("app/gradio_ui", "app/streamlit_ui"):
        for path in (ROOT / folder).glob("*.py"):
            assert len(path.read_text().splitlines()) <= 300, path.name


def mutable_globals(path: Path) -> list[str]:
    """Module-level names bound to a mutable value made at import: a dict, list or set, or an object of a class
    (a call of a capitalized name), which every visitor of a server process would share."""
    found = []
    for node in ast.parse(path.read_text()).body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        value = getattr(node, "value", None)
        made = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)) or (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id[:1].isupper()
            and value.func.id != "TypeVar"
        )
        found += [f"{path.name}: {ast.unparse(target)}" for target in targets if made]
    return found


def test_the_front_ends_keep_no_state_of_their_own_at_module_level():
    """A page's state is the page model's (app/tabs), kept per session; a front end's module holds none. (The
    Streamlit page script is run afresh for each page, so its names are that run's.)"""
    files = [
        ROOT / "app" / "gradio_app.py",
        *(ROOT / "app").glob("gradio_ui/*.py"),
        *(ROOT / "app").glob("streamlit_ui/*.py"),
    ]
    assert len(files) > 20
    assert [name for path in files for name in mutable_globals(path)] == []


def images_without_text(path: Path) -> list[str]:
    """The calls in `path` that draw a picture without a text alternative: Streamlit's `image(...)` without `alt`,
    a `gr.Image` given a picture (a first argument) without `alt_text`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            keywords = {k.arg for k in node.keywords}
            streamlit = node.func.attr == "image" and "alt" not in keywords
            gradio = node.func.attr == "Image" and node.args and "alt_text" not in keywords
            found += [f"{path.name}:{node.lineno}"] if streamlit or gradio else []
    return found


def test_every_picture_a_front_end_draws_says_what_it_shows():
    """Each photo, map and picture goes with a text alternative (app/views/alt_text.py) for screen readers; the
    journey's axe-core audit checks the page itself."""
    files = [*(ROOT / "app").glob("gradio_ui/*.py"), *(ROOT / "app").glob("streamlit_ui/*.py")]
    assert [call for path in files for call in images_without_text(path)] == []
    assert images_without_text(ROOT / "tests" / "test_layout.py") == []  # (this file draws nothing)
