"""The claims tables in the documents are what the code makes of assets/ (scripts/claims_table.py): the README's
short table, docs/training.md's full one, each between `<!-- claims:start -->` and `<!-- claims:end -->`."""

from __future__ import annotations

import sys

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from claims_table import DOCUMENTS, marked, replaced, tables  # noqa: E402


def test_the_documents_hold_the_generated_claims_tables():
    made = tables()
    checked = 0
    for path, kind in DOCUMENTS:
        shown = marked(path.read_text(), kind) if path.is_file() else None
        if shown is None:
            continue
        checked += 1
        assert shown == made[kind], f"{path.name}: run python scripts/claims_table.py --write"
    assert checked, "neither README.md nor docs/training.md holds its claims markers (scripts/claims_table.py)"


def test_every_claim_has_a_row_and_a_verdict_word():
    made = tables()
    rows = made["short"].splitlines()[2:]
    assert len(rows) == 15 and all(  # the 14 claims of the paper's figures, Figs 1c/4 in two
        any(f"| **{word}** |" in row for word in ("holds", "does not hold", "no difference detected", "not tested"))
        for row in rows
    )
    assert replaced("a <!-- claims-full:start -->\nold\n<!-- claims-full:end --> b", "full", "new") == (
        "a <!-- claims-full:start -->\nnew\n<!-- claims-full:end --> b"
    )
