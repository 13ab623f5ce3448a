"""Names of a model's residual units in lesion pickers: a stage's block as the AlterNet tab names it,
`s<stage>:<block>`, 1-based (`stages.3.3` is s4:4); any other unit by its module name."""

from __future__ import annotations

import re

STAGE_BLOCK = re.compile(r"stages\.(\d+)\.(\d+)")


def unit_label(index: int, name: str, kind: str) -> str:
    """'s4:4 (msa, unit 17)' for block 3 of stage 3 (0-based module names), '5 layer2.1 (conv)' otherwise."""
    found = STAGE_BLOCK.fullmatch(name)
    if found is None:
        return f"{index} {name} ({kind})"
    stage, block = (int(part) + 1 for part in found.groups())
    return f"s{stage}:{block} ({kind}, unit {index})"
