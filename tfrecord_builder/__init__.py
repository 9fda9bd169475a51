"""tfrecord_builder: one YAML spec to sharded TFRecord files and the tf.data input_fn that reads them.

>>> import tfrecord_builder as tb
>>> spec = tb.load_spec("specs/wine.yaml")
>>> info = tb.build(spec, output="build", overwrite=True)
>>> train = tb.input_fn(info.path, "train", batch_size=32)
"""
from .build.run import build
from .tools.diff import diff
from .build.dry_run import dry_run
from .tools.infer import infer
from .builders.base import Builder
from .tools.generate import generate_module
from .errors import BuildWarning, DataError, DatasetError, SpecError, TFRecordBuilderError, UsageError
from .features import EncodeContext, Feature, TensorFeature
from .features.base import register as register_feature
from .read.dataset import Dataset, input_fn, load, read
from .read.report import report
from .spec.fields import meta as spec_field
from .spec.load import load_spec
from .spec.model import Spec
from .version import __version__
from .write.info import DatasetInfo


__all__ = [
    "Builder", "BuildWarning", "DataError", "Dataset", "DatasetError", "DatasetInfo", "EncodeContext", "Feature",
    "SpecError", "Spec",
    "TensorFeature", "TFRecordBuilderError", "UsageError", "__version__", "build", "diff", "dry_run",
    "generate_module", "infer", "input_fn", "load", "load_spec", "read", "register_feature", "report", "spec_field",
]
