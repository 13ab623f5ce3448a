"""The engine's curves against an independent, sequential block-by-block computation (as the
paper's notebooks do it), on seeded random weights."""

import numpy as np
import pytest
import torch

import engine
from tests.helpers.notebook import notebook_fourier, notebook_variance

REL = 1e-4


def tokens_to_bchw(tokens: torch.Tensor, prefix: int) -> np.ndarray:
    grid = tokens[:, prefix:].numpy()
    b, n, c = grid.shape
    side = int(round(n**0.5))
    return grid.reshape(b, side, side, c).transpose(0, 3, 1, 2)


def resnet_latents(model, x):
    x = model.maxpool(model.act1(model.bn1(model.conv1(x))))
    latents = [x.numpy()]
    for stage in (model.layer1, model.layer2, model.layer3, model.layer4):
        for block in stage:
            x = block(x)
            latents.append(x.numpy())
    return latents


def vit_latents(model, x):
    x = model.norm_pre(model.patch_drop(model._pos_embed(model.patch_embed(x))))
    prefix = model.num_prefix_tokens
    latents = [tokens_to_bchw(x, prefix)]
    for block in model.blocks:
        x = x + block.drop_path1(block.ls1(block.attn(block.norm1(x))))
        latents.append(tokens_to_bchw(x, prefix))
        x = x + block.drop_path2(block.ls2(block.mlp(block.norm2(x))))
        latents.append(tokens_to_bchw(x, prefix))
    return latents


def swin_latents(model, x):
    x = model.patch_embed(x)
    latents = [x.permute(0, 3, 1, 2).numpy()]
    for stage in model.layers:
        if not isinstance(stage.downsample, torch.nn.Identity):
            x = stage.downsample(x)
            latents.append(x.permute(0, 3, 1, 2).numpy())
        for block in stage.blocks:
            b, h, w, c = x.shape
            x = x + block.drop_path1(block._attn(block.norm1(x)))
            latents.append(x.permute(0, 3, 1, 2).numpy())
            x = x.reshape(b, -1, c)
            x = (x + block.drop_path2(block.mlp(block.norm2(x)))).reshape(b, h, w, c)
            latents.append(x.permute(0, 3, 1, 2).numpy())
    return latents


def pit_latents(model, x):
    x = model.pos_drop(model.patch_embed(x) + model.pos_embed)
    latents = [x.numpy()]
    cls = model.cls_token.expand(x.shape[0], -1, -1)
    prefix = cls.shape[1]
    for stage in model.transformers:
        if stage.pool is not None:
            x, cls = stage.pool(x, cls)
            latents.append(x.numpy())
        b, c, h, w = x.shape
        tokens = stage.norm(torch.cat([cls, x.flatten(2).transpose(1, 2)], dim=1))
        for block in stage.blocks:
            tokens = tokens + block.drop_path1(block.ls1(block.attn(block.norm1(tokens))))
            latents.append(tokens_to_bchw(tokens, prefix))
            tokens = tokens + block.drop_path2(block.ls2(block.mlp(block.norm2(tokens))))
            latents.append(tokens_to_bchw(tokens, prefix))
        cls, x = tokens[:, :prefix], tokens[:, prefix:].transpose(1, 2).reshape(b, c, h, w)
    return latents


@pytest.mark.slow  # over 3 s on the 2-core machine
@pytest.mark.parametrize(
    "name, sequential",
    [
        ("resnet50", resnet_latents),
        ("vit_tiny_patch16_224", vit_latents),
        ("swin_tiny_patch4_window7_224", swin_latents),
        ("pit_ti_224", pit_latents),
    ],
)
def test_engine_matches_sequential_notebook(name, sequential, photos):
    model = engine.create_model(name, weights="random", seed=3, device="cpu")
    result = engine.Analyzer(model, batch_size=2).attribute(photos)
    batch = engine.Analyzer(model).inputs(photos)
    with torch.inference_mode():
        # the paper averages per-batch values: batches of 2 here, like the analyzer's
        per_batch = [sequential(model.module, batch[i : i + 2]) for i in range(0, len(batch), 2)]
        logits = model.module(batch)
    assert len(result.blocks) == len(per_batch[0])
    for index, block in enumerate(result.blocks):
        expected_curve = np.mean([notebook_fourier(latents[index]) for latents in per_batch], axis=0)
        expected_var = np.mean([notebook_variance(latents[index]) for latents in per_batch])
        np.testing.assert_allclose(block.fourier, expected_curve, rtol=REL, atol=1e-6, err_msg=block.name)
        np.testing.assert_allclose(block.variance, expected_var, rtol=REL, err_msg=block.name)
        assert block.high_freq == block.fourier[-1]
    top = logits.softmax(-1).topk(5)
    for image, predictions in enumerate(result.predictions):
        assert [p.index for p in predictions] == top.indices[image].tolist()
        np.testing.assert_allclose([p.probability for p in predictions], top.values[image].numpy(), rtol=1e-5)


def test_vit_attention_matches_explicit_softmax(photos):
    model = engine.create_model("vit_tiny_patch16_224", weights="random", seed=1, device="cpu")
    result = engine.Analyzer(model).attribute(photos[:1])
    net = model.module
    x = engine.Analyzer(model).inputs(photos[:1])
    with torch.inference_mode():
        x = net.norm_pre(net._pos_embed(net.patch_embed(x)))
        rollout = torch.eye(x.shape[1])[None]
        for layer, block in zip(result.attention.layers, net.blocks):
            attn = block.attn
            b, n, c = x.shape
            qkv = attn.qkv(block.norm1(x)).reshape(b, n, 3, attn.num_heads, c // attn.num_heads)
            q, k = qkv[:, :, 0].transpose(1, 2), qkv[:, :, 1].transpose(1, 2)
            probs = torch.softmax(q @ k.transpose(-1, -2) / (c // attn.num_heads) ** 0.5, dim=-1)
            np.testing.assert_allclose(layer.maps[0], probs[0, :, 0, 1:].reshape(-1, 14, 14), rtol=1e-4, atol=1e-7)
            # mean attention distance, written out with loops over the grid
            centers = np.array([(i // 14 * 16, i % 14 * 16) for i in range(196)], dtype=np.float64)
            dist = np.sqrt(((centers[:, None] - centers[None]) ** 2).sum(-1))
            expected = (probs[0, :, 1:, 1:].numpy() * dist).sum(-1).mean(-1)
            np.testing.assert_allclose(layer.mean_distance, expected, rtol=1e-4)
            assert layer.even_distance == pytest.approx(dist.mean(), rel=1e-5)  # attention spread evenly
            mixed = probs.mean(1) + torch.eye(n)
            rollout = (mixed / mixed.sum(-1, keepdim=True)) @ rollout
            x = block(x)
    np.testing.assert_allclose(result.attention.rollout[0], rollout[0, 0, 1:].reshape(14, 14), rtol=1e-4, atol=1e-7)


def test_swin_window_maps_match_explicit_windows(photos):
    """Swin's first two blocks (plain and shifted windows), attention recomputed window by window."""
    model = engine.create_model("swin_tiny_patch4_window7_224", weights="random", seed=4, device="cpu")
    result = engine.Analyzer(model).attribute(photos[:1])
    net = model.module
    with torch.inference_mode():
        x = net.patch_embed(engine.Analyzer(model).inputs(photos[:1]))
        for layer, block in zip(result.attention.layers[:2], net.layers[0].blocks):
            attn, shift = block.attn, block.shift_size[0]
            y = torch.roll(block.norm1(x), shifts=(-shift, -shift), dims=(1, 2))[0]  # (56, 56, C)
            received = torch.zeros(attn.num_heads, 56, 56)
            bias = attn._get_rel_pos_bias()[0]
            for top in range(0, 56, 7):
                for left in range(0, 56, 7):
                    tokens = y[top : top + 7, left : left + 7].reshape(49, -1)
                    q, k, _ = attn.qkv(tokens).reshape(49, 3, attn.num_heads, -1).permute(1, 2, 0, 3)
                    logits = q @ k.transpose(-1, -2) * attn.scale + bias
                    if shift:  # tokens that wrapped around the border only see their own region

                        def region(i):
                            return 0 if i < 56 - 7 else (1 if i < 56 - shift else 2)

                        ids = torch.tensor([region(top + r) * 3 + region(left + c) for r in range(7) for c in range(7)])
                        logits = logits.masked_fill(ids[:, None] != ids[None, :], -100.0)
                    received[:, top : top + 7, left : left + 7] = logits.softmax(-1).mean(-2).reshape(-1, 7, 7)
            received = torch.roll(received, shifts=(shift, shift), dims=(1, 2))
            np.testing.assert_allclose(layer.maps[0], received.numpy(), rtol=1e-4, atol=1e-6, err_msg=layer.name)
            x = block(x)
