"""Feature types, registered by the name a spec gives as `type:`."""
from .base import FEATURE_TYPES, Feature, register
from .context import EncodeContext
from .audio import AudioFeature
from .bbox import BBoxFeature
from .class_label import ClassLabelFeature
from .image import ImageFeature
from .keypoints import KeypointsFeature
from .mask import MaskFeature
from .tensor import TensorFeature
from .text import TextFeature
from .video import VideoFeature

__all__ = ["FEATURE_TYPES", "EncodeContext", "Feature", "register", "TensorFeature", "ClassLabelFeature", "ImageFeature",
           "MaskFeature", "BBoxFeature", "KeypointsFeature", "AudioFeature", "VideoFeature",
           "TextFeature"]
