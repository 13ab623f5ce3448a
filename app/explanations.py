"""What each panel shows and which figure of Park & Kim (ICLR 2022) it reproduces (Markdown)."""

INTRO = """# ViT explorer
See how a CNN and a Vision Transformer process **your** photo, side by side, with the measurements of
Park & Kim, [*How Do Vision Transformers Work?*](https://arxiv.org/abs/2202.06709) (ICLR 2022):
multi-head self-attentions (MSAs) act as low-pass filters that smooth and ensemble feature maps,
while convolutions act as high-pass filters."""

OFFLINE = """**Offline:** the Hugging Face hub cannot be reached, so ImageNet weights cannot be downloaded.
The ImageNet models run with **seeded random weights**, labelled as such on every panel: their
predictions are meaningless and their measurements show the architecture alone. The CIFAR-10 models
(AlterNet, PreAct ResNet, CIFAR ViT) run with the checkpoints trained for this app, which are bundled."""

WEIGHTS = ("Trained where available: ImageNet weights from the hub when online; CIFAR-10 models always "
           "use their bundled checkpoints; random weights otherwise, labelled.")

RANDOM_BADGE = "⚠️ **random weights** (seed {seed}): predictions and maps are not meaningful"

COMPARE = """### Predictions and where each model looks
One column per model. **Top-5 predictions** (ImageNet classes; CIFAR-10 for the CIFAR models), then
where the model looks: for attention models the **CLS token's attention** to every image patch in a
chosen layer and head (or the head mean, or the **attention rollout** through all layers, Abnar &
Zuidema 2020); for Swin and AlterNet, whose attention stays inside local windows, the attention each
position receives within its window; for CNNs, **Grad-CAM** of the top-1 class. Early ViT layers attend locally, late layers globally
(watch the mean attention distance in the caption grow with depth). Sliders, heads and colours
re-draw from results already computed; nothing is re-run. Below each model, **switch residual units
off** (a lesion study, Fig 10b) and watch its predictions and curves change; subsampling and embedding
blocks have no shortcut to fall back on and are not offered."""

FOURIER = """### Fourier analysis of feature maps (Fig 2a)
Relative log amplitude of each block's Fourier-transformed feature map, from the zero frequency
(0.0π) to the highest (1.0π), one curve per block, dark (shallow) to yellow (deep). Trained ViTs keep
the high-frequency amplitude low as depth grows (MSAs are low-pass filters); trained ResNets raise
it (Convs are high-pass filters)."""

HIGH_FREQUENCY = """### High frequencies block by block (Fig 8)
The Δ log amplitude at 1.0π of every block against normalized depth. Gray spans are steps into an
MSA block, blue spans into a subsampling block. In a trained ViT, MSAs (gray) almost always lower
the high-frequency amplitude and MLPs (white) raise it, except in the earliest blocks. Click a model
in the legend to hide it with its shading; double-click to show it alone."""

VARIANCE = """### Feature map variance (Fig 9)
Variance of each block's feature map. MSAs (gray) lower it: they ensemble feature maps; Convs and
MLPs (white) raise it. Variance accumulates with depth, and in ResNet it peaks at the end of each
stage. The paper plots each model on its own linear axis; here models share a log axis."""

LESION = "Each unit's residual branch is zeroed, its shortcut kept; the model re-runs. Clear to restore."

ALTERNET = """### AlterNet: where should the MSAs go? (Section 4, Figs 11 and 12a)
AlterNet starts from a pre-activation ResNet-50 for CIFAR (3, 4, 6, 4 blocks per stage) and replaces
Conv blocks with local (4×4-window) **MSA blocks**, by the paper's *build-up rule*: from the **end of the
last stage**, alternately (Conv, MSA, Conv, MSA); when another MSA in a stage stops helping, continue at
the end of the previous stage. Step through the build-up (Fig 12a) or toggle blocks yourself. The
drawing follows Fig 11: white Conv, gray MSA, blue subsampling blocks. The Fig 8 and Fig 9 curves compare
the chosen AlterNet with the CIFAR ResNet (no MSA) and the CIFAR ViT (all MSA): with trained weights,
the curve drops at each gray (MSA) step, as MSAs low-pass filter and ensemble feature maps."""
