"""How a text feature is read beyond its padded ids: the masked-language-model view (`input.mlm`)
and, on a `format: example` spec, batches of texts of similar length (`input.bucket_boundaries`).
Each is a part of READING (spec/reading.py), present only when the spec asks for it, which
read/tfdata.py's `masked_batches` and `text_length` follow."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import SpecError
from ..features.base import TokenIds
from .fields import At, Section, meta

if TYPE_CHECKING:
    from .model import Spec

# the keys the padded view (input.text: padded) adds beside the ids: BERT's and Model Garden's names
MASKED_LM_KEYS = ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights")


@dataclass(frozen=True, kw_only=True)
class MaskedLMInput(Section):
    """`input.mlm`: tokens masked at read time, as KerasHub's MaskedLMPreprocessor and BERT's
    pretraining data mask them, differently each epoch and the same for the same seed."""

    rate: float = meta("the share of a text's tokens picked for prediction (KerasHub's mask_selection_rate, "
                       "BERT's masked_lm_prob); special ids and padding are never picked", 0.15)
    mask_token_rate: float = meta("of the picked tokens, the share replaced by the mask token", 0.8)
    random_token_rate: float = meta("of the picked tokens, the share replaced by a random token (the rest stay "
                                    "as they are)", 0.1)
    max_predictions: int = meta("at most this many picked tokens a text, the width of mask_positions "
                                "(KerasHub's mask_selection_length, BERT's max_predictions_per_seq)", 20)
    seed: int = meta("the masks' seed: the same seed gives the same masks, each epoch its own", 0)

    def check(self, at: At) -> None:
        for key in ("rate", "mask_token_rate", "random_token_rate"):
            value = getattr(self, key)
            if not 0.0 <= value <= 1.0 or (key == "rate" and value == 0.0):
                expected = "more than 0 and at most 1" if key == "rate" else "from 0 to 1"
                raise (at / key).error(f"expected a share {expected}, received {value}")
        if self.mask_token_rate + self.random_token_rate > 1.0:
            raise (at / "random_token_rate").error(
                f"mask_token_rate + random_token_rate is {self.mask_token_rate + self.random_token_rate:g}; "
                "expected at most 1 (the rest of the picked tokens stay as they are)")
        if self.max_predictions < 1:
            raise (at / "max_predictions").error(f"expected a positive integer, received {self.max_predictions}")
        if not 0 <= self.seed < 2**63:
            raise (at / "seed").error(f"expected an integer from 0 to 2**63 - 1, received {self.seed}")


def _texts(spec: Spec) -> list[str]:
    return [name for name, feature in spec.features.items() if feature.holds_text]


def _ids(spec: Spec, name: str) -> TokenIds:
    feature = spec.features[name]
    found = feature.token_ids
    if found is None:  # a vocabulary the build learns, not learned yet: what reads its ids can't be written
        raise SpecError(f"input: feature `{name}`: its vocabulary is learned by the build (`vocabulary:`), so its ids "
                        "are known only then; the build writes the generated module into the dataset's folder")
    return found


def check_text_reading(spec: Spec, at: At) -> None:
    """`input.mlm` masks the one text feature of a `format: example` spec, whose tokenizer has a
    mask token; `input.bucket_boundaries` on such a spec batches by the length of its one text."""
    options = spec.input
    texts = _texts(spec)
    if options.bucket_boundaries is not None and not spec.is_sequence and len(texts) > 1:
        raise (at / "bucket_boundaries").error(
            f"batches records by the length of one text, and the spec has {len(texts)}: "
            f"{', '.join(f'`{name}`' for name in texts)}")
    mlm = options.mlm
    if mlm is None:
        return
    at = at / "mlm"
    if spec.is_sequence or len(texts) != 1:
        found = "none" if not texts else ", ".join(f"`{name}`" for name in texts)
        raise at.error(f"masks the one text feature of a format: example spec; the spec has {found}")
    if options.text != "keras_hub":
        taken = [key for key in MASKED_LM_KEYS if key in spec.features]
        if taken:
            raise at.error(f"adds `{taken[0]}` beside the ids, already a feature's name; rename it")
    recorded = spec.features[texts[0]].token_ids
    if recorded is None:  # a vocabulary the build learns: it always has [MASK] and its special ids are recorded
        return
    if recorded.special_ids is None:  # a dataset built before they were recorded, its tokenizer file gone
        raise at.error(f"the dataset records no special ids of feature `{texts[0]}`'s tokenizer (built before they "
                       f"were recorded) and its file can't be read ({recorded.unusable}); put that file back")
    if recorded.mask_id is None:
        raise at.error(f"feature `{texts[0]}`'s tokenizer {recorded.tokenizer} has no mask token ([MASK], <mask>); "
                       "expected one to mask tokens with")
    if recorded.vocab_size <= len(recorded.special_ids):
        raise at.error(f"feature `{texts[0]}`'s tokenizer has no token but its special ones to pick at random")


def mlm_reading(spec: Spec) -> dict[str, Any] | None:
    """`input.mlm` as READING holds it: the text's names, the shares, the seed, and what the
    tokenizer recorded (its mask id, number of ids, special ids)."""
    mlm = spec.input.mlm
    if mlm is None:
        return None
    name = _texts(spec)[0]
    recorded = _ids(spec, name)
    assert recorded.special_ids is not None  # (check_text_reading)
    names = spec.features[name].companion_names
    return {"ids": name, "mask": names[0], "segments": names[1] if len(names) > 1 else None,
            "rate": float(mlm.rate), "mask_token_rate": float(mlm.mask_token_rate),
            "random_token_rate": float(mlm.random_token_rate), "max_predictions": mlm.max_predictions,
            "seed": mlm.seed, "mask_id": recorded.mask_id, "vocab_size": recorded.vocab_size,
            "special_ids": list(recorded.special_ids)}


def text_buckets_reading(spec: Spec) -> dict[str, Any] | None:
    """`input.bucket_boundaries` on a `format: example` spec as READING holds it: the record key
    of its text's length and the boundaries (None: no text, or no boundaries)."""
    boundaries = spec.input.bucket_boundaries
    texts = _texts(spec)
    if spec.is_sequence or boundaries is None or not texts:
        return None
    return {"key": _ids(spec, texts[0]).length_key, "boundaries": list(boundaries)}
