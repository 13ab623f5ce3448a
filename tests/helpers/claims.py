"""Made-up model results for the claims under Figs 8 and 9: blocks of given kinds, variances and high-frequency
changes."""

from __future__ import annotations

from engine.results import BlockResult, ModelResult


def result(kinds: list[str], variances: list[float], high: list[float], random: bool = False) -> ModelResult:
    blocks = [
        BlockResult(i, f"b{i}", kind, (1, 4, 4), i / (len(kinds) - 1), v, [0.0, h])
        for i, (kind, v, h) in enumerate(zip(kinds, variances, high))
    ]
    return ModelResult(
        "toy", "Toy", "random (seed 0)" if random else "trained", "x", 1, [], blocks, random_weights=random
    )


KINDS = ["embed", "msa", "mlp", "msa", "mlp", "pool", "msa"]
