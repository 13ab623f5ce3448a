"""Where an AlterNet has its MSA blocks, as data, with a text form and the paper's build-up rule.

Text form: comma-separated `s<stage>:<block>` tokens, both 1-based, naming the blocks that are MSA
blocks, e.g. the paper's CIFAR Alter-ResNet-50 is "s2:4,s3:2,s3:4,s3:6,s4:2,s4:4"; "none" (or "")
is the plain pre-activation ResNet. In `Placement.msa` the same blocks are 0-based indices.
The first block of every stage is a Conv block: it changes the width (and in stages 2.. subsamples),
so it can never be an MSA block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import EngineError

PAPER_DEPTHS = (3, 4, 6, 4)
PAPER_CAPS = (0, 1, 3, 2)
_TOKEN = re.compile(r"^s(\d+):(\d+)$")


class PlacementError(EngineError, ValueError):
    """An MSA placement spec that does not parse or does not fit the model's stages."""


@dataclass(frozen=True)
class Placement:
    """Blocks per stage (`depths`) and, per stage, the sorted 0-based indices of its MSA blocks."""

    depths: tuple[int, ...]
    msa: tuple[tuple[int, ...], ...]

    def __post_init__(self) -> None:
        depths = tuple(int(d) for d in self.depths)
        if not depths or any(d < 1 for d in depths):
            raise PlacementError(f"depths must be one or more positive block counts, got {self.depths}")
        if len(self.msa) != len(depths):
            raise PlacementError(f"{len(self.msa)} MSA index sets for {len(depths)} stages")
        msa = tuple(tuple(sorted(set(int(b) for b in blocks))) for blocks in self.msa)
        for s, blocks in enumerate(msa):
            for b in blocks:
                _check_block(s + 1, b + 1, depths)
        object.__setattr__(self, "depths", depths)
        object.__setattr__(self, "msa", msa)

    @classmethod
    def none(cls, depths: tuple[int, ...] = PAPER_DEPTHS) -> Placement:
        """No MSA block: the plain pre-activation ResNet."""
        return cls(tuple(depths), tuple(() for _ in depths))

    @property
    def counts(self) -> tuple[int, ...]:
        """The number of MSA blocks in each stage."""
        return tuple(len(blocks) for blocks in self.msa)

    @property
    def total(self) -> int:
        return sum(self.counts)

    def masks(self) -> tuple[tuple[bool, ...], ...]:
        """Per stage, one flag per block: True where the block is an MSA block."""
        return tuple(tuple(b in blocks for b in range(d)) for d, blocks in zip(self.depths, self.msa))

    @property
    def tag(self) -> str:
        """A file-name-safe form of the spec, e.g. 's2b4-s3b2-s3b4' ('none' without MSA)."""
        return str(self).replace(":", "b").replace(",", "-")

    def __str__(self) -> str:
        tokens = [f"s{s + 1}:{b + 1}" for s, blocks in enumerate(self.msa) for b in blocks]
        return ",".join(tokens) or "none"


def _check_block(stage: int, block: int, depths: tuple[int, ...], token: str | None = None) -> None:
    where = f" in '{token}'" if token else ""
    if not 1 <= stage <= len(depths):
        raise PlacementError(f"stage {stage}{where} is out of range: the model has stages 1 to {len(depths)}")
    if not 1 <= block <= depths[stage - 1]:
        raise PlacementError(f"block {block}{where} is out of range: stage {stage} has blocks 1 to {depths[stage - 1]}")
    if block == 1:
        raise PlacementError(
            f"block 1 of stage {stage}{where} cannot be an MSA block: the first block of a stage is the "
            "Conv block that changes its width and resolution"
        )


def parse(text: str | Placement, depths: tuple[int, ...] = PAPER_DEPTHS) -> Placement:
    """A Placement from its text form (see the module docstring); a Placement is returned as is."""
    if isinstance(text, Placement):
        if text.depths != tuple(depths):
            raise PlacementError(f"placement '{text}' is for depths {text.depths}, not {tuple(depths)}")
        return text
    depths = tuple(depths)
    msa: list[set[int]] = [set() for _ in depths]
    spec = text.strip()
    if spec.lower() in ("", "none"):
        return Placement.none(depths)
    problems = []  # every bad entry is named, not only the first
    for raw in spec.split(","):
        token = raw.strip().lower()
        match = _TOKEN.match(token)
        if match is None:
            problems.append(
                f"bad MSA token '{raw.strip()}' in '{text}': expected s<stage>:<block>, 1-based, e.g. 's3:6'"
            )
            continue
        stage, block = int(match[1]), int(match[2])
        try:
            _check_block(stage, block, depths, token)
        except PlacementError as exc:
            problems.append(str(exc))
            continue
        if block - 1 in msa[stage - 1]:
            problems.append(f"'{token}' is given twice in '{text}'")
        msa[stage - 1].add(block - 1)
    if problems:
        raise PlacementError("; ".join(problems))
    return Placement(depths, tuple(tuple(blocks) for blocks in msa))


def default_caps(depths: tuple[int, ...]) -> tuple[int, ...]:
    """MSAs per stage where the build-up stops: the paper's (0, 1, 3, 2) for its depths, else full
    alternation (depth // 2 per stage, since no experiment says where another MSA stops helping)."""
    depths = tuple(depths)
    return PAPER_CAPS if depths == PAPER_DEPTHS else tuple(d // 2 for d in depths)


def buildup(depths: tuple[int, ...] = PAPER_DEPTHS, n: int = 6, caps: tuple[int, ...] | None = None) -> Placement:
    """The n-th model of the build-up rule (paper Sec 4.1, Fig 12a; course notes Algorithm 2).

    Reading of the paper: MSAs replace Conv blocks from the end of the last stage, alternately, so a
    stage with k MSAs ends C, M, C, M, ... with MSAs at its blocks d, d-2, ..., d-2(k-1) (1-based).
    When another MSA in a stage stops helping, the next goes at the end of the previous stage. The
    stopping points are empirical; `caps` encodes them. For CIFAR-100 the paper's Fig 12a adds two
    MSAs to c4 (all that alternation allows in 4 blocks), then three to c3 (again the alternation
    limit; "several MSAs in c3 harm the accuracy"), then one to c2 ("the MSA at the end of c2
    improves it"), ending at (0, 1, 3, 2) per stage, the model of Fig 11, in which all stages but
    stage 1 end with an MSA. So for (3, 4, 6, 4), n = 0..6 gives counts (0,0,0,0), (0,0,0,1),
    (0,0,0,2), (0,0,1,2), (0,0,2,2), (0,0,3,2), (0,1,3,2).
    """
    depths = tuple(depths)
    caps = default_caps(depths) if caps is None else tuple(caps)
    if len(caps) != len(depths):
        raise PlacementError(f"{len(caps)} caps for {len(depths)} stages")
    for s, (cap, depth) in enumerate(zip(caps, depths)):
        if not 0 <= cap <= depth // 2:
            raise PlacementError(
                f"cap {cap} for stage {s + 1} is out of range: alternation fits 0 to {depth // 2} MSAs "
                f"in {depth} blocks"
            )
    if not 0 <= n <= sum(caps):
        raise PlacementError(f"build-up step {n} is out of range: 0 to {sum(caps)} for caps {caps}")
    msa: list[tuple[int, ...]] = [() for _ in depths]
    left = n
    for s in reversed(range(len(depths))):
        k = min(left, caps[s])
        msa[s] = tuple(depths[s] - 1 - 2 * i for i in range(k))
        left -= k
    return Placement(depths, tuple(msa))


def buildup_sequence(depths: tuple[int, ...] = PAPER_DEPTHS, caps: tuple[int, ...] | None = None) -> list[Placement]:
    """Every step of the build-up rule, from no MSA (n = 0) to the final model."""
    caps = default_caps(depths) if caps is None else tuple(caps)
    return [buildup(depths, n, caps) for n in range(sum(caps) + 1)]


PAPER_PLACEMENT = buildup(PAPER_DEPTHS, sum(PAPER_CAPS))
