"""Names of a model's residual units in lesion pickers: a stage's block as the AlterNet tab names it,
`s<stage>:<block>`, 1-based (`stages.3.3` is s4:4); any other unit by its module name."""

from __future__ import annotations

import re

STAGE_BLOCK = re.compile(r"stages\.(\d+)\.(\d+)")
LESIONED = " · "  # between a model's label and its units switched off


def unit_name(name: str) -> str:
    """'s4:4' for block 3 of stage 3 (a 0-based module name), the module name itself otherwise ('layer2.1')."""
    found = STAGE_BLOCK.fullmatch(name)
    if found is None:
        return name
    stage, block = (int(part) + 1 for part in found.groups())
    return f"s{stage}:{block}"


def unit_label(index: int, name: str, kind: str) -> str:
    """'s4:4 (msa, unit 17)' for block 3 of stage 3 (0-based module names), '5 layer2.1 (conv)' otherwise."""
    if STAGE_BLOCK.fullmatch(name) is None:
        return f"{index} {name} ({kind})"
    return f"{unit_name(name)} ({kind}, unit {index})"


def switched_off(label: str, names: list[str]) -> str:
    """Model `label` with the units `names` switched off: 'AlterNet (CIFAR, ~2 M params) · s3:4 switched off',
    '... · layer2.1 and layer2.2 switched off'."""
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{label}{LESIONED}{listed} switched off"


def lesion_of(label: str) -> tuple[str, str]:
    """A label split into the model's own and its units switched off ('' for none), as switched_off made it."""
    model, _, lesion = label.partition(LESIONED)
    return model, lesion
