"""What each panel shows and which figure of Park & Kim (ICLR 2022) it reproduces (Markdown)."""

import re

from engine.errors import shown

MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!<>|~$:])")


def literal(text: str) -> str:
    """A user's string (a file name) as Markdown shows it: cut to 60 characters (engine.errors.shown), every
    Markdown character escaped, so that it cannot format or link the page."""
    return MARKDOWN.sub(r"\\\1", shown(text))


INTRO = """# ViT explorer
See how a CNN and a Vision Transformer process **your** photo, side by side, with the measurements of
Park & Kim, [*How Do Vision Transformers Work?*](https://arxiv.org/abs/2202.06709) (ICLR 2022):
multi-head self-attentions (MSAs) act as low-pass filters that smooth and ensemble feature maps,
while convolutions act as high-pass filters."""

OFFLINE = """**Offline:** the Hugging Face hub cannot be reached, so ImageNet weights cannot be downloaded.
The ImageNet models run with **seeded random weights**, labelled as such on every panel: their
predictions are meaningless and their measurements show the architecture alone. The CIFAR-10 models
(AlterNet, PreAct ResNet, CIFAR ViT) run with the checkpoints trained for this app, which are bundled,
so **they are the ones checked to start with**. They know only CIFAR-10's ten classes (airplane, automobile,
bird, cat, deer, dog, frog, horse, ship, truck): a photo of anything else still gets one of the ten."""

OFFLINE_SHORT = """**Offline:** the ImageNet models run with **seeded random weights** (their predictions are
meaningless); the CIFAR-10 models with the checkpoints trained for this app."""

WEIGHTS = (
    "Trained where available: ImageNet weights from the hub when online; CIFAR-10 models always "
    "use their bundled checkpoints; random weights otherwise, labelled."
)

ANY_TIMM = (
    "Comma-separated timm names, added to the models checked: ViT, DeiT, BEiT, EVA, ResNet, ResNeXt, "
    "ConvNeXt, Swin, PiT, CoAtNet, MaxViT or MobileViT, split into blocks from their own structure."
)

KNOWN_CLASSES = (
    "This model knows only {count} classes ({names}): a photo of anything else still gets one of them, so its top-5 "
    "says which of these it looks most like, not what the photo shows."
)
RANDOM_BADGE = "⚠️ **random weights** (seed {seed}): predictions and maps are not meaningful"
RANDOM_PRINT = (
    "⚠ Random weights: these predictions and this map are not meaningful; the curves show the architecture alone."
)

COMPARE_ABOUT = """## Predictions and where each model looks
**Top-5 predictions** (ImageNet classes; CIFAR-10 for the CIFAR models), then where the model looks:
for attention models the **CLS token's attention** to every image patch in a chosen layer and head (or
the head mean, or the **attention rollout** through all layers, Abnar & Zuidema 2020); for Swin and
AlterNet, whose attention stays inside local windows, the attention each position receives within its
window; for CNNs, **Grad-CAM** of the top-1 class. The paper (Fig 5 and Raghu et al.): in trained ViTs
early layers attend locally and late layers globally, so the mean attention distance grows with depth."""

COMPARE = (
    COMPARE_ABOUT
    + """ One column per model; each says what the distance is here. Layers, heads and colours
re-draw from results already computed; nothing is re-run. Below each model, **switch residual units
off** (a lesion study, Fig 10b) and watch its predictions and curves change; subsampling and embedding
blocks have no shortcut to fall back on and are not offered."""
)

FOURIER = """## Fourier analysis of feature maps (Fig 2a)
Relative log amplitude of each block's Fourier-transformed feature map, from the zero frequency
(0.0π) to the highest (1.0π), one curve per block, dark (shallow) to yellow (deep). The paper: trained
ViTs keep the high-frequency amplitude low as depth grows (MSAs are low-pass filters), trained ResNets
raise it (Convs are high-pass filters). Fig 8 below counts, unit by unit, which way these models go."""

SHADE_DEFAULT = "the model with MSA blocks (AlterNet, else ViT)"

HIGH_FREQUENCY_ABOUT = """## High frequencies block by block (Fig 8)
The Δ log amplitude at 1.0π of every block against normalized depth. Gray spans are steps into an
MSA block, blue spans into a subsampling block, for the model named in the legend: at first the one with
MSA blocks (the AlterNet, else the ViT). On every model's line a ring marks each MSA unit. The paper: in a
trained ViT, MSAs almost always lower the high-frequency amplitude and MLPs raise it, except in the
earliest blocks."""

HIGH_FREQUENCY = (
    HIGH_FREQUENCY_ABOUT
    + """ Pick the model whose spans are shaded below the variance plot. Click a model in the legend
to hide it; double-click to show it alone."""
)

VARIANCE = """## Feature map variance (Fig 9)
Variance of each block's feature map. The paper: MSAs lower it (they ensemble feature maps), Convs
and MLPs raise it; it accumulates with depth, and in ResNet peaks at the end of each stage. The paper
plots each model on its own linear axis; here models share a log axis."""

LENS = """## When the answer appears (logit lens)
The model's own final norm and classification head applied after every block: the probability of the
class it finally predicts, against normalized depth. This is not one of the paper's figures; it shows,
on your photo, where in the network the answer forms (for ViTs typically late, after the MSAs have
mixed the tokens). A CNN's or Swin's head reads only latents of its own width, so only their last
stage's blocks are read; earlier blocks are gaps."""

DATASET = """## Dataset curves: Figs 2a, 8 and 9 over many images
The paper's curves are averages over ImageNet's validation images, not one photo. Upload a **ZIP of
images** (JPEG, PNG, ...; up to {images} images and {megabytes} MB) to average every block's curve and
variance over them, for the models picked above, as the paper's notebooks do: per batch of 16, then
over the batches. Unreadable files are skipped and counted. For a whole dataset, or several GPUs, use
`python -m engine curves --data DIR --model NAME` (with `torchrun --nproc_per_node N`)."""

METHODS = """- **Attention**: the model's own, recorded in the one pass.
- **Logit lens**: each patch token's logit for the final class after the chosen block, read through the model's own
  final norm and head; recorded in the one pass.
- **Grad-CAM**: gradient-weighted last-stage features.
- **Saliency**, **SmoothGrad**: input gradients (SmoothGrad averages noisy copies).
- **Integrated Gradients**: gradients along the path from a black image to the photo.
- **Occlusion**: the drop in the class's score when a patch is blacked out.
- **Gradient x attention**: Chefer et al. 2021.

All but the first two are computed once per photo, model and lesion, with progress."""

OFFLINE_WEIGHTS = (
    "{name}: its pretrained weights are not on this server and the Hugging Face hub cannot be reached to download "
    "them. Under Weights, pick 'trained where available' (the CIFAR-10 models' bundled checkpoints, random weights "
    "for the rest, labelled) or 'random (seeded)'."
)

UPLOAD_LIMITS = (
    "A photo of up to {file_mb} MB. One address may upload {minute_mb} MB a minute: past that an upload is refused "
    "(the uploader says 'status code 429') until a minute has passed."
)
MAP_STOPPED = "The map shown is still the previous one: **Compute this map** computes the one picked."

LESION = "Each unit's residual branch is zeroed, its shortcut kept; the model re-runs. Clear to restore."

ALTERNET = """## AlterNet: where should the MSAs go? (Section 4, Figs 11 and 12a)
AlterNet starts from a pre-activation ResNet-50 for CIFAR (3, 4, 6, 4 blocks per stage) and replaces
Conv blocks with local (4×4-window) **MSA blocks**, by the paper's *build-up rule*: from the **end of the
last stage**, alternately (Conv, MSA, Conv, MSA); when another MSA in a stage stops helping, continue at
the end of the previous stage. Step through the build-up (Fig 12a) or toggle blocks yourself. The
drawing follows Fig 11: white Conv, gray MSA, blue subsampling blocks. The Fig 8 and Fig 9 curves compare
the chosen AlterNet with the CIFAR ResNet (no MSA) and the CIFAR ViT (all MSA). The paper: with trained
weights the curves drop at the MSA steps, as MSAs low-pass filter and ensemble feature maps; under the
curves, the counts say whether they do here."""

FINDINGS_INTRO = """## The paper's other findings, on the bundled CIFAR-10 models
Loss landscapes, Hessian spectra, robustness, similarity and lesions of the CIFAR ResNet (AlterNet
step 0), the paper's AlterNet (step 6) and the CIFAR ViT, trained here (each figure names the weights
and their accuracy): the paper's models trained far longer, so check each claim against what these
models show (the README's claims table says which hold). The figures are stored results, shown at
once; **Recompute** runs an analysis again with this app's code (minutes of CPU)."""

FINDINGS = {
    "landscape": """### Loss landscape (Fig 1a)
NLL + ℓ2 around the trained weights along two random filter-normalized directions (Li et al., 2018), on
training images, and the 1-D slice along the first (log axis). The paper: ViT's landscape is flatter than
ResNet's, most visibly at the edges.
Compare how fast each model's loss rises away from the centre (×).""",
    "trajectory": """### Training trajectory (Fig 1b)
Each point is the weights at one moment of training in polar coordinates around the final weights:
r = ‖w_t − w_opt‖ / ‖w_init − w_opt‖ and θ the angle between w_t − w_opt and w_init − w_opt. The paper:
ResNet follows an irregular path, especially early; ViT converges along a smooth one.""",
    "hessian": """### Hessian max-eigenvalue spectrum (Figs 1c and 4)
The top Hessian eigenvalues of NLL + ℓ2 on training minibatches (power iteration, as PyHessian). The
paper: ViT's eigenvalues are much smaller than ResNet's (a flatter landscape), but some are
**negative** (a non-convex loss that large data cures); AlterNet suppresses the large ones.""",
    "noise": """### Robustness to noise by frequency (Fig 2b)
Accuracy drop when Gaussian noise restricted to one frequency band (0.1π wide) is added to the input.
The paper: ViTs are robust to high-frequency noise and ResNets are not, the other side of MSAs being
low-pass filters. **Noise on your photo** draws the drop of each model's top-1 probability instead.""",
    "similarity": """### Feature-map similarity (Fig 10a)
Linear CKA (minibatch HSIC) between the feature maps of every pair of blocks. "E" is the stem or
embedding, "P" a subsampling block, bold ticks MSA blocks. The paper: multi-stage models show a block
structure, one block per stage; a vanilla ViT does not.""",
    "lesion": """### Removing one unit (Fig 10b)
Accuracy drop on test images when one unit's residual branch is switched off. Gray: MSA units, blue:
subsampling. The paper: the drop is periodic with the stages; removing an MSA at the end of a stage
hurts most, as does removing a unit early in a stage.""",
    "corruption": """### Corruption robustness (Fig 12b)
Accuracy on test images under 14 CIFAR-10-C corruptions at 5 severities, against clean accuracy. The
paper: AlterNet is both more accurate and more robust than the CNN, even on small data.""",
    "maps": """### Can the maps be trusted? (not in the paper)
The maps in **Compare models** show where a model looks, by eight methods; these checks ask, over test images,
whether a method's maps show what the model actually uses. **Deletion**: blur the map's top pixels first and
follow the class's probability; a faithful map makes it fall faster than random pixels do (the bars: random
order's area under the curve minus the map's, above 0 is better). **Insertion**: start from the blurred image and
put the map's top pixels back; it should rise faster. **Randomization** (Adebayo et al. 2018): randomize the
model's weights from the head down; a map that stays alike (Spearman ρ near 1) shows the image, not what the
model learned. Deletion and insertion favour maps whose removals look least like a training image; blurring keeps
that small but not nil. Attention and the logit lens are not checked here: they explain no class.""",
}


class Labels:
    """Every widget label and button text, shared by the front ends (one place to change a word)."""

    photo = "Your photo"
    sample = "Or a sample photo"
    models = "Models (up to {count})"
    typed_models = "Any timm model"
    typed_placeholder = "e.g. convnext_atto, mobilevit_xxs"
    weights = "Weights"
    analyze = "Analyze"
    ready = "Pick a photo and models, then **Analyze**."
    stale = "The results below are for {previous}: press **Analyze** for the new photo."
    colormap = "Colormap"
    opacity = "Map opacity"
    layer = "Layer"
    method = "Map"
    methods = "How each map is made"
    target = "Class explained"
    ig_steps = "Integrated Gradients: steps"
    stop_map = "Stop computing this map"
    map_stopped = "Stopped before the map was finished."
    upload_refused = "This upload was refused"
    compute_map = "Compute this map"
    head = "Head"
    rollout = "Rollout (all layers)"
    lesion = "Switch off units (lesion, Fig 10b)"
    log_y = "Log variance axis"
    shaded = "Shade the blocks of"
    map_png = "Map as PNG"
    check_map = "Can this map be trusted? Check it"
    stop_check = "Stop the check"
    check_curves = "Deletion and insertion curves"
    exports = "Export for teaching: figures as PNG or SVG, or the whole teaching pack"
    export_figure_name = "Figure"
    export_format = "Format"
    export_figure = "Export figure"
    export_pack = "Export teaching pack (ZIP)"
    download = "Download"
    dataset = "Dataset curves: Figs 2a, 8 and 9 over a ZIP of images"
    dataset_zip = "ZIP of images"
    dataset_run = "Measure the ZIP"
    dataset_export = "Export these figures (PNG, SVG, JSON, CSV)"
    step = "Build-up step (Fig 12a)"
    stage = "Stage {stage}: MSA blocks"
    spec = "MSA blocks as text: s<stage>:<block>, 1-based"
    seen = "Input, 32×32"
    subset_count = "Test images to average"
    subset = "Average over CIFAR-10 test images"
    alternet_export = "Export these figures (Figs 8 and 9 as PNG and SVG, Fig 11 as SVG)"
    paper_images = "Subset images"
    recompute = "Recompute ({figure})"
    photo_noise = "Noise on your photo"
    paper_export = "Export these figures (PNG and SVG, ZIP)"


LABEL = Labels()

TOUR_INTRO = """## A guided tour of the paper, on your photo
Eight steps, one idea each: what the paper says, the plot that tests it on the models you analyzed in the
Compare tab (the bundled CIFAR-10 family for AlterNet and robustness), whether it holds here, and one thing to try;
the last asks whether the maps can be trusted.
Analyze a photo first; change the models there and the tour follows."""

TOUR_INTACT = "(Read on the intact models: the units switched off in the Compare tab are left out here.)"
MAP_TITLE = "Where it looks"  # a compare column's map
CHECK_TITLE = "Can this map be trusted?"  # the line under a checked map: its deletion against random orders
CHECK_RANDOM = "with random weights, this score tells nothing about a trained model"
TRUST_HERE = "**Here**, on your photo, each model's first map (deletion against random pixel orders):"
TRUST_STORED = "**Over {images} CIFAR-10 test images** (Paper figures tab, map checks), which methods pass:"
SCROLL_SIDEWAYS = "⟷ Wider than the screen: scroll it sideways for the rest."  # under Fig 11 on a phone
NUMBERS = "The numbers"  # the statistics behind a verdict told in words, a click away

TOUR = {  # key: (title, the paper's statement, one thing to try)
    "patches": (
        "Patches and tokens",
        "A ViT cuts the image into square patches and turns each into a token; a learned class token (CLS) "
        "joins them, and the classifier reads only the CLS token at the end. A CNN has no tokens: it slides "
        "small convolutions over the pixels.",
        "In the Compare tab, add ViT-Ti/16 (16-pixel patches) next to the CIFAR ViT (4-pixel patches).",
    ),
    "where": (
        "Where the models look",
        "In trained ViTs, early layers attend both locally and globally and late layers globally: the mean "
        "attention distance grows with depth (the paper's Fig 5, after Raghu et al.). CNNs are shown by Grad-CAM.",
        "In the Compare tab, move the ViT's layer slider from 1 to the last and watch the map spread.",
    ),
    "frequency": (
        "MSAs are low-pass filters, Convs high-pass (Figs 2a and 8)",
        "MSAs reduce the high-frequency amplitude of feature maps and Convs amplify it: in a ViT the "
        "high-frequency curve drops at (almost) every MSA block (gray spans: the AlterNet's or the ViT's MSA "
        "blocks; a ring marks every model's MSA units).",
        "Switch off an MSA unit of the ViT in the Compare tab (a lesion) and watch Fig 8 change.",
    ),
    "variance": (
        "MSAs shrink feature-map variance, Convs grow it (Fig 9)",
        "MSAs ensemble feature maps and lower their variance; Convs and MLPs raise it, and it accumulates with depth "
        "(gray spans: the AlterNet's or the ViT's MSA blocks; a ring marks every model's MSA units).",
        "Tick off the log axis under Fig 9 in the Compare tab, or shade another model's blocks.",
    ),
    "answer": (
        "When the answer appears (logit lens)",
        "Not a figure of the paper: the model's own final norm and head read after every block show where "
        "the answer forms; in ViTs, it forms late, after the MSAs have mixed the tokens.",
        "Pick another photo: does the answer appear earlier when the object fills the frame?",
    ),
    "alternet": (
        "AlterNet: MSAs at the end of a stage (Section 4, Figs 11 and 12a)",
        "Replacing the Conv blocks at the end of each stage with MSA blocks, from the last stage backwards, "
        "builds AlterNet; the paper's AlterNet beats the CNN it is built from, even on small data (CIFAR).",
        "In the AlterNet tab, step through the build-up and put MSAs at the start of a stage instead.",
    ),
    "robustness": (
        "Robustness to high-frequency noise (Fig 2b)",
        "ViTs are robust to high-frequency noise and ResNets are not: the other side of MSAs being low-pass filters.",
        "In the Paper figures tab, add noise to your own photo and compare the curves.",
    ),
    "trust": (
        "Can we trust the map?",
        "Not a claim of the paper, but every map in this app rests on it: a map that shows what the model uses makes "
        "the class's probability fall faster than random pixels do when its top pixels are removed first (deletion, "
        "Petsiuk et al. 2018). Attention maps are often read as explanations; this tests them like any other map.",
        "In the Compare tab, choose another map method and press “Can this map be trusted? Check it”; the Paper "
        "figures tab's map checks test every method over 200 test images, with the randomization test.",
    ),
}
