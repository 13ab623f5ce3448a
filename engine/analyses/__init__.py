"""The analyses, one module each, every one a `base.ModelAnalysis`: build it on a loaded model, call
`attribute(images, labels, progress)`, get a dataclass with `to_json()`.

    block_measures  Figs 2a, 8, 9 on a few images: Fourier curves, variance, attention, predictions
    dataset_curves  the same averaged over a folder or ZIP, streamed (one process or torchrun)
    gradcam         where a model looks (models without recorded attention)
    attributions    Saliency, SmoothGrad, Integrated Gradients, Occlusion, gradient x attention (captum)
    faithfulness    can a map be trusted: deletion and insertion against random pixel orders (RISE)
    logit_lens      the model's own norm and head after every block: when the answer appears
    noise           Fig 2b: accuracy under noise of one frequency band at a time
    similarity      Fig 10a: linear CKA between the blocks of one or two models
    lesion          Fig 10b: accuracy with one unit switched off
    hessian         Figs 1c and 4: Hessian max-eigenvalue spectra
    landscape       Fig 1a: the loss landscape along filter-normalized random directions
    corruption      Fig 12b: accuracy under CIFAR-10-C corruptions

Beside them: `measure` (the paper's measurements of one latent) and `budget` (a map's memory, known before it
runs).
"""
