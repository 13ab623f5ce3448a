"""AlterNet: MSA placements and the build-up rule, the model, its block split, lesions and registry entries."""

import pytest
import torch
from PIL import Image

from engine.errors import EngineError, WeightsUnavailableError
from engine.models.alternet import MSABlock, alternet_blocks, attention_modules
from engine.models.cifar_family import CIFAR10_CLASSES, build_alternet, cifar_transform
from engine.models.cifar_vit import DEFAULTS as VIT_DEFAULTS
from engine.models.placement import (
    PAPER_DEPTHS,
    PAPER_PLACEMENT,
    Placement,
    PlacementError,
    buildup,
    buildup_sequence,
    parse,
)
from engine.models.registry import create_model, get_spec

WIDTH = 4  # stage widths 4..32, outputs 16..128: fast on a CPU
PAPER_SPEC = "s2:4,s3:2,s3:4,s3:6,s4:2,s4:4"


def test_buildup_reproduces_fig_12a_sequence():
    counts = [p.counts for p in buildup_sequence(PAPER_DEPTHS)]
    assert counts == [(0, 0, 0, 0), (0, 0, 0, 1), (0, 0, 0, 2), (0, 0, 1, 2), (0, 0, 2, 2), (0, 0, 3, 2), (0, 1, 3, 2)]
    assert [str(p) for p in buildup_sequence()[:4]] == ["none", "s4:4", "s4:2,s4:4", "s3:6,s4:2,s4:4"]
    assert PAPER_PLACEMENT == buildup(PAPER_DEPTHS, 6) == parse(PAPER_SPEC)
    # Fig 11: every stage but stage 1 ends with an MSA, alternating with Convs.
    assert PAPER_PLACEMENT.masks() == (
        (False, False, False),
        (False, False, False, True),
        (False, True, False, True, False, True),
        (False, True, False, True),
    )


def test_buildup_for_other_depths_and_caps():
    assert buildup((2, 2, 4, 4), 6).counts == (1, 1, 2, 2)  # full alternation without the paper's caps
    assert str(buildup((3, 4, 6, 4), 3, caps=(0, 2, 1, 2))) == "s3:6,s4:2,s4:4"
    with pytest.raises(PlacementError, match="step 7 is out of range"):
        buildup(PAPER_DEPTHS, 7)
    with pytest.raises(PlacementError, match="cap 3 for stage 4"):
        buildup(PAPER_DEPTHS, 1, caps=(0, 0, 0, 3))


@pytest.mark.parametrize("spec", [PAPER_SPEC, "none", "s1:2", "s1:2,s1:3,s2:2,s3:5,s4:3"])
def test_spec_round_trips(spec):
    placement = parse(spec)
    assert str(placement) == spec
    assert parse(str(placement)) == placement
    assert ":" not in placement.tag and "," not in placement.tag


def test_spec_is_normalized():
    assert parse(" S4:4 , s3:6 ") == parse("s3:6,s4:4")
    assert parse("") == parse("none") == Placement.none(PAPER_DEPTHS)
    assert Placement(PAPER_DEPTHS, ((), (), (5, 3), (3,))) == parse("s3:4,s3:6,s4:4")


@pytest.mark.parametrize(
    "spec, message",
    [
        ("s3-6", "bad MSA token 's3-6'"),
        ("s3:6,,s4:4", "bad MSA token ''"),
        ("c3:6", "bad MSA token 'c3:6'"),
        ("s5:2", "stage 5 in 's5:2' is out of range: the model has stages 1 to 4"),
        ("s3:7", "block 7 in 's3:7' is out of range: stage 3 has blocks 1 to 6"),
        ("s2:1", "block 1 of stage 2 in 's2:1' cannot be an MSA block"),
        ("s4:4,s4:4", "'s4:4' is given twice"),
    ],
)
def test_bad_specs_raise_clear_errors(spec, message):
    with pytest.raises(PlacementError) as info:
        parse(spec)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, EngineError)


def expected_kinds(placement: Placement) -> list[str]:
    kinds = ["embed"]
    for s, mask in enumerate(placement.masks()):
        kinds += ["msa" if msa else "pool" if s > 0 and b == 0 else "conv" for b, msa in enumerate(mask)]
    return kinds


@pytest.mark.slow  # over 3 s on the 2-core machine
@pytest.mark.parametrize("placement", buildup_sequence(), ids=str)
def test_every_buildup_step_builds_runs_and_splits(placement):
    torch.manual_seed(0)
    model = build_alternet(placement, width=WIDTH)
    specs = alternet_blocks(model)
    assert [s.kind for s in specs] == expected_kinds(placement)
    assert all((s.branch is None) == (s.kind in ("embed", "pool")) for s in specs)
    x = torch.randn(2, 3, 32, 32)
    out = model(x)
    assert out.shape == (2, 10)
    out.logsumexp(1).sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())


def test_attention_probabilities_are_hookable():
    model = build_alternet(PAPER_SPEC, width=WIDTH).eval()
    seen = {}
    hooks = [
        attn.attn_probs.register_forward_hook(lambda m, i, o, name=name: seen.setdefault(name, o))
        for name, attn in attention_modules(model)
    ]
    with torch.no_grad():
        model(torch.randn(2, 3, 32, 32))
    for hook in hooks:
        hook.remove()
    heads = {"stages.1.3": 6, "stages.2.5": 12, "stages.3.3": 24}
    windows = {"stages.1.3": 16, "stages.2.5": 4, "stages.3.3": 1}  # 16x16, 8x8, 4x4 maps
    for name, n in heads.items():
        assert seen[name].shape == (2 * windows[name], n, 16, 16)
        assert torch.allclose(seen[name].sum(-1), torch.ones(()))
    assert {attn.window_size for _, attn in attention_modules(model)} == {4}
    msa_blocks = [m for m in model.modules() if isinstance(m, MSABlock)]
    assert all(b.window_size == (4, 4) and b.shift_size == (0, 0) for b in msa_blocks)


def test_lesion_changes_output_and_removal_restores_it_bit_for_bit():
    torch.manual_seed(0)
    model = build_alternet("s1:2,s2:2,s3:2,s4:2", depths=(2, 2, 2, 2), width=WIDTH).eval()
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        before = model(x)
        for spec in alternet_blocks(model):
            if spec.kind not in ("msa", "conv"):
                continue
            hook = spec.branch.register_forward_hook(lambda m, i, o: torch.zeros_like(o))
            lesioned = model(x)
            hook.remove()
            assert not torch.equal(lesioned, before), spec.name
            assert torch.equal(model(x), before)


def test_msa_block_is_switched_off_to_its_shortcut():
    torch.manual_seed(0)
    model = build_alternet("s4:4", width=WIDTH).eval()
    block = model.stages[3][3]
    assert isinstance(block, MSABlock)
    x = torch.randn(1, block.pre[0].num_features, 4, 4)
    block.branch_out.register_forward_hook(lambda m, i, o: torch.zeros_like(o))
    assert torch.equal(block(x), x)


def test_registry_entries():
    model = create_model("alternet", weights="random", device="cpu", msa="s4:4", width=WIDTH)
    assert [s.kind for s in model.spec.blocks(model.module)].count("msa") == 1
    assert model.spec.labels() == CIFAR10_CLASSES and model.spec.attention == "window"
    resnet = create_model("preact_resnet", weights="random", device="cpu", width=WIDTH)
    kinds = [s.kind for s in resnet.spec.blocks(resnet.module)]
    assert "msa" not in kinds and kinds.count("pool") == 3 and len(kinds) == 1 + sum(PAPER_DEPTHS)
    vit = create_model("vit_cifar", weights="random", device="cpu")
    assert len(vit.spec.blocks(vit.module)) == 1 + 2 * VIT_DEFAULTS["depth"] and vit.spec.attention == "global"
    with torch.no_grad():
        assert vit.module(torch.randn(1, 3, 32, 32)).shape == (1, 10)


def test_missing_checkpoint_is_reported_not_replaced():
    with pytest.raises(
        WeightsUnavailableError, match="no trained checkpoint is bundled for AlterNet with MSA placement 's3:6'"
    ):
        get_spec("alternet").pretrained(msa="s3:6")
    with pytest.raises(WeightsUnavailableError, match="no trained checkpoint is bundled for the pre-activation"):
        create_model("preact_resnet", width=WIDTH)


def test_cifar_transform_crops_resizes_and_normalizes():
    image = Image.new("RGB", (90, 60), (125, 123, 114))  # about the CIFAR-10 mean colour
    x = cifar_transform()(image)
    assert x.shape == (3, 32, 32)
    assert x.abs().max() < 0.02


def test_a_bad_spec_names_every_bad_entry():
    with pytest.raises(PlacementError) as info:
        parse("s1:1,s9:2,s4:4,x")
    message = str(info.value)
    assert "block 1 of stage 1 in 's1:1'" in message and "stage 9 in 's9:2' is out of range" in message
    assert "bad MSA token 'x'" in message and "s4:4" not in message.replace("'s1:1,s9:2,s4:4,x'", "")
