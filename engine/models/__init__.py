"""Models, in timm's manner: the registry (`create_model`), timm's families read as blocks, weights and
checkpoints, and one file per architecture of the paper's CIFAR-10 family (AlterNet, ViT; registered by
`cifar_family` with the pre-activation ResNet)."""

from . import cifar_family  # noqa: F401  (registers the CIFAR-10 models)
from .registry import LoadedModel, ModelSpec, create_model, get_spec, list_models, register_model

__all__ = ["LoadedModel", "ModelSpec", "create_model", "get_spec", "list_models", "register_model"]
