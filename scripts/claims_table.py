"""The generated tables of the documents, from the stored results in assets/: the README's short claims table
(claim, figure, verdict here, one number; engine.paper.verdicts), the full one for docs/training.md (the paper's
statement, the rule, what is seen here), the README's table of the bundled family (each member's test accuracy,
over its seeds where there are several; scripts/family_table.py) and its table of which map methods pass
(engine.paper.map_verdicts).

    python scripts/claims_table.py            # the short claims table
    python scripts/claims_table.py --full     # the full claims table
    python scripts/claims_table.py --write    # replace the text between the markers in README.md / docs/training.md

The README holds the short table between `<!-- claims:start -->` and `<!-- claims:end -->` and the family's between
`<!-- family:start -->` and `<!-- family:end -->`, the map checks' between `<!-- maps:start -->` and
`<!-- maps:end -->`, docs/training.md the full one between `<!-- claims-full:start -->`
and `<!-- claims-full:end -->`; tests/test_claims_table.py checks that each equals what this makes. The trainer
(scripts/train_family.py --commit) rewrites them when it bundles a checkpoint.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from family_table import readme_table  # noqa: E402

from engine.paper.map_verdicts import table as map_table  # noqa: E402
from engine.paper.verdicts import all_verdicts, full_table, short_table, stored_sections  # noqa: E402

DOCUMENTS = (
    (REPO / "README.md", "short"),
    (REPO / "README.md", "family"),
    (REPO / "README.md", "maps"),
    (REPO / "docs" / "training.md", "full"),
)
MARKERS = {"short": "claims", "full": "claims-full", "family": "family", "maps": "maps"}


def tables() -> dict[str, str]:
    verdicts = all_verdicts()
    maps = map_table(stored_sections().get("maps"))
    return {"short": short_table(verdicts), "full": full_table(verdicts), "family": readme_table(), "maps": maps}


def markers(kind: str) -> tuple[str, str]:
    return f"<!-- {MARKERS[kind]}:start -->", f"<!-- {MARKERS[kind]}:end -->"


def marked(text: str, kind: str) -> str | None:
    """The text between `kind`'s markers (without the newlines next to them), or None without them."""
    start, end = markers(kind)
    if start not in text or end not in text:
        return None
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def replaced(text: str, kind: str, table: str) -> str:
    start, end = markers(kind)
    head, rest = text.split(start, 1)
    return f"{head}{start}\n{table}\n{end}{rest.split(end, 1)[1]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="the full table, for docs/training.md")
    parser.add_argument("--write", action="store_true", help="write the tables between the documents' markers")
    args = parser.parse_args(argv)
    made = tables()
    if not args.write:
        print(made["full" if args.full else "short"])
        return 0
    for path, kind in DOCUMENTS:
        if path.is_file() and marked(text := path.read_text(), kind) is not None:
            path.write_text(replaced(text, kind, made[kind]))
            print(f"{path.relative_to(REPO)}: the {kind} table written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
