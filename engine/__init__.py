"""The analysis engine: models, block split and the paper's measurements. No UI imports."""

from . import models  # noqa: E402,F401  (registers the CIFAR-10 models: AlterNet, PreAct ResNet, ViT)
from .analyses.block_measures import Analyzer, analyze
from .analyses.dataset_curves import DatasetCurves, DatasetResult
from .analyses.faithfulness import DeletionInsertion, Faithfulness
from .analyses.gradcam import GradCam
from .analyses.lesion import Lesion
from .analyses.map_checks import MapChecks, MapChecksResult
from .data.images import PixelBudget, load_image
from .errors import (
    CheckpointError,
    EngineError,
    ImageError,
    UnknownModelError,
    WeightsUnavailableError,
)
from .models.registry import LoadedModel, ModelSpec, create_model, get_spec, list_models, register_model
from .models.timm_blocks import supported_families

__all__ = [
    "Analyzer",
    "DatasetCurves",
    "DatasetResult",
    "DeletionInsertion",
    "Faithfulness",
    "MapChecks",
    "MapChecksResult",
    "CheckpointError",
    "EngineError",
    "GradCam",
    "ImageError",
    "Lesion",
    "LoadedModel",
    "ModelSpec",
    "UnknownModelError",
    "WeightsUnavailableError",
    "analyze",
    "create_model",
    "get_spec",
    "list_models",
    "load_image",
    "PixelBudget",
    "register_model",
    "supported_families",
]
