"""The README and docs/ pages: every relative link and image resolves (files and #anchors), every command shown
names a module or file that exists, the README stays a front page, and each docs page links back to it."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

README = ROOT / "README.md"
PAGES = (README, *sorted((ROOT / "docs").glob("*.md")))
EXPECTED_PAGES = ("guide", "engine", "serving", "training", "benchmarks", "contributing")
MAX_README_LINES = 200

FENCE = re.compile(r"^(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"`[^`\n]+`")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_SOURCE = re.compile(r"<(?:img|a)\b[^>]*?\b(?:src|href)=\"([^\"]+)\"", re.IGNORECASE)
COMMAND = re.compile(r"^(?:\S*/)?(python3?|bash|torchrun)\s+(.*)$")


@dataclass(frozen=True)
class Page:
    """A Markdown page split into its prose (code removed) and the commands shown in its code."""

    path: Path
    prose: str
    commands: tuple[str, ...]
    headings: tuple[str, ...]

    @property
    def name(self) -> str:
        return str(self.path.relative_to(ROOT))


def read(path: Path) -> Page:
    """The page's prose outside fenced blocks and inline code, each command line in either, and its headings."""
    prose, commands, headings, fence = [], [], [], None
    for line in path.read_text().splitlines():
        opened = FENCE.match(line.strip())
        if fence is None and opened:
            fence = opened.group(1)[0]
            continue
        if fence is not None:
            if opened and opened.group(1)[0] == fence:
                fence = None
            elif COMMAND.match(line.strip()):
                commands.append(line.strip())
            continue
        commands += [span[1:-1] for span in INLINE_CODE.findall(line) if COMMAND.match(span[1:-1])]
        if heading := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line):
            headings.append(heading.group(1))
        prose.append(INLINE_CODE.sub("", line))
    return Page(path, "\n".join(prose), tuple(commands), tuple(headings))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    return re.sub(r"[^\w\- ]", "", text.replace("`", "").strip().lower()).replace(" ", "-")


def anchors(page: Page) -> set[str]:
    """Every heading's anchor on the page, with GitHub's -1, -2 ... for repeated headings."""
    seen: dict[str, int] = {}
    found = set()
    for heading in page.headings:
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def link_problems(page: Page) -> list[str]:
    """Each relative link or image of the page that names no file, or an anchor its target page lacks."""
    problems = []
    targets = LINK.findall(page.prose) + HTML_SOURCE.findall(page.prose)
    for target in targets:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # http:, https:, mailto: ...
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (page.path.parent / file_part).resolve() if file_part else page.path
        if not resolved.exists():
            problems.append(f"{page.name}: {target} names no file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(read(resolved)):
            problems.append(f"{page.name}: {target}: {resolved.name} has no heading #{anchor}")
    return problems


def runnable_module(name: str) -> bool:
    """`python -m name` would find something to run: a module or a package with __main__, in the
    repository or installed."""
    top = ROOT / name.split(".")[0]
    if top.is_dir() or top.with_suffix(".py").is_file():  # the repository's own: read from disk, never imported
        local = ROOT.joinpath(*name.split("."))
        if local.is_dir():  # a package comes before a module of the same name
            return (local / "__main__.py").is_file()
        return local.with_suffix(".py").is_file()
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    if spec.submodule_search_locations is not None:  # a package: it needs a __main__
        return importlib.util.find_spec(f"{name}.__main__") is not None
    return True


def command_problem(command: str) -> str | None:
    """What the command names that does not exist (a module for -m, a script file), or None."""
    program, rest = COMMAND.match(command).groups()
    words = rest.split()
    if "-m" in words:
        index = words.index("-m")
        module = words[index + 1] if index + 1 < len(words) else ""
        return None if module and runnable_module(module) else f"no module to run: -m {module}"
    if program == "torchrun":
        return None
    script = next((word for word in words if not word.startswith("-")), "")
    if not re.search(r"\.(py|sh)$", script):
        return f"names no script: {command}"
    return None if (ROOT / script).is_file() else f"no such file: {script}"


@pytest.fixture(scope="module")
def pages() -> list[Page]:
    return [read(path) for path in PAGES]


def test_the_docs_pages_exist_and_link_back_to_the_readme(pages):
    names = {page.path.stem for page in pages if page.path.parent.name == "docs"}
    assert set(EXPECTED_PAGES) <= names, f"missing docs pages: {sorted(set(EXPECTED_PAGES) - names)}"
    for page in pages:
        if page.path != README:
            assert "](../README.md" in page.prose.split("\n\n", 2)[1], f"{page.name} does not start by linking back"


def test_the_readme_is_a_front_page(pages):
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines, more than {MAX_README_LINES}"
    assert lines[0] == "---" and "app_file: app.py" in lines[: lines.index("---", 1)], "the Space front matter"
    for page in EXPECTED_PAGES:
        assert f"](docs/{page}.md" in pages[0].prose, f"the README does not link to docs/{page}.md"


def test_every_relative_link_and_image_resolves(pages):
    checked = sum(len(LINK.findall(page.prose)) for page in pages)
    assert checked > 20, "the link pattern found almost no links: the test would check nothing"
    problems = [problem for page in pages for problem in link_problems(page)]
    assert not problems, "\n".join(problems)


def test_every_command_shown_names_something_that_exists(pages):
    commands = [(page, command) for page in pages for command in page.commands]
    shown = " ".join(command for _, command in commands)
    for kind in ("python -m engine", "bash scripts/", "python bench/", "python scripts/"):
        assert kind in shown, f"no {kind} command found: the test would check nothing"
    problems = [
        f"{page.name}: {problem}" for page, command in commands if (problem := command_problem(command)) is not None
    ]
    assert not problems, "\n".join(problems)


def test_the_claims_tables_have_their_markers():
    readme, training = README.read_text(), (ROOT / "docs" / "training.md").read_text()
    for text, marker in ((readme, "claims"), (training, "claims-full")):
        start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
        assert text.count(start) == 1 and text.count(end) == 1, f"{marker} markers"
        table = text[text.index(start) + len(start) : text.index(end)].strip().splitlines()
        assert len(table) > 2 and all(line.startswith("|") for line in table), f"{marker}: a table between the markers"


@pytest.mark.parametrize(
    ("command", "fine"),
    [
        ("python -m engine analyze cat.jpg", True),
        ("python -m engine.nothing_here", False),
        ("python -m app", False),  # a package without __main__
        ("python -m pytest -q", True),
        ("bash scripts/run.sh --ui streamlit", True),
        ("bash scripts/nothing.sh", False),
        ("python bench/nothing.py", False),
    ],
)
def test_the_command_check_tells_what_exists(command, fine):
    assert (command_problem(command) is None) is fine
