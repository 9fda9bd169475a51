"""A SentencePiece model encodes to `sentencepiece`'s own ids (and KerasHub's
SentencePieceTokenizer's), a tokenizer.json to `tokenizers.Tokenizer.encode`'s, with their own
templates and special tokens; words carry the index of the word each piece came from."""
from __future__ import annotations

import io

import pytest
import sentencepiece
import tokenizers
from tokenizers import models, normalizers, pre_tokenizers, processors, trainers

from support.texts import Reference, corpus, english, needs_model_garden
from tfrecord_builder import text

TEXTS = corpus()


def _spm(tmp_path, **options) -> str:
    """A SentencePiece model trained on the corpus (as T5's: pad 0, eos 1, unk 2, no bos)."""
    source = tmp_path / "corpus.txt"
    source.write_text("\n".join(line.replace("\n", " ") for line in TEXTS), encoding="utf-8")
    proto = io.BytesIO()
    settings = dict(pad_id=0, eos_id=1, unk_id=2, bos_id=-1, **options)
    sentencepiece.SentencePieceTrainer.train(input=str(source), model_writer=proto, vocab_size=3000, minloglevel=2,
                                             num_threads=1, **settings)
    path = tmp_path / "spm.model"
    path.write_bytes(proto.getvalue())
    return str(path)


def test_sentencepiece_ids_are_its_own(tmp_path):
    path = _spm(tmp_path)
    tokenizer, reference = text.load(path), sentencepiece.SentencePieceProcessor(model_file=path)
    assert tokenizer.kind == "sentencepiece" and tokenizer.vocab_size == 3000
    assert tokenizer.encode(TEXTS) == reference.encode(TEXTS)
    assert tokenizer.specials == text.Specials(pad=text.Special("<pad>", 0), unk=text.Special("<unk>", 2),
                                               eos=text.Special("</s>", 1))
    inputs = tokenizer.inputs(TEXTS[:2], TEXTS[2:4])  # no [CLS]/[SEP] pieces: a </s> after each text
    assert inputs.ids[0] == reference.encode(TEXTS[0]) + [1] + reference.encode(TEXTS[2]) + [1]
    assert inputs.segments[0] == [0] * (len(reference.encode(TEXTS[0])) + 1) + [1] * (len(reference.encode(TEXTS[2])) + 1)
    assert tokenizer.decode(inputs.ids[1][:len(reference.encode(TEXTS[1])) + 1]) == reference.decode(reference.encode(TEXTS[1]))
    words = [line.split() for line in english()[:50]]
    pieces = tokenizer.encode_words(words)
    for sentence, encoded in zip(words, pieces):
        assert encoded.ids == [number for word in sentence for number in reference.encode(word)]
        assert encoded.words == [index for index, word in enumerate(sentence) for _ in reference.encode(word)]


def test_an_albert_style_model_takes_berts_template(tmp_path):
    path = _spm(tmp_path, control_symbols=["[CLS]", "[SEP]", "[MASK]"])
    tokenizer = text.load(path)
    cls, sep = tokenizer.specials.cls.id, tokenizer.specials.sep.id
    assert (cls, sep, tokenizer.specials.mask.token) == (3, 4, "[MASK]")
    ids = tokenizer.encode(["a b"])[0]
    assert tokenizer.inputs(["a b"], ["a b"]) == text.Inputs([[cls] + ids + [sep] + ids + [sep]],
                                                            [[0] * (len(ids) + 2) + [1] * (len(ids) + 1)], 0)


def test_keras_hubs_sentencepiece_tokenizer_gives_the_same_ids(tmp_path):
    keras_hub = pytest.importorskip("keras_hub")
    path = _spm(tmp_path)
    layer = keras_hub.tokenizers.SentencePieceTokenizer(proto=path)
    assert text.load(path).encode(TEXTS) == [[int(number) for number in layer(line)] for line in TEXTS]


@needs_model_garden
@pytest.mark.extra_env
def test_keras_hubs_sentencepiece_tokenizer_with_tensorflow_text_gives_the_same_ids(tmp_path):
    path = _spm(tmp_path)
    reference = Reference()
    try:
        assert text.load(path).encode(TEXTS) == reference.ids("keras_hub_sentencepiece", TEXTS, model=path)
    finally:
        reference.close()


def _trained_json(tmp_path) -> tuple[str, tokenizers.Tokenizer]:
    """A BERT-like tokenizer.json trained by Hugging Face on the corpus, with its own template."""
    model = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    model.normalizer = normalizers.BertNormalizer(lowercase=True)
    model.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    model.train_from_iterator(TEXTS, trainers.WordPieceTrainer(
        vocab_size=3000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False))
    model.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    model.enable_padding(pad_id=0, pad_token="[PAD]")
    model.enable_truncation(16)  # (the file's own truncation and padding are not ours: turned off)
    path = tmp_path / "tokenizer.json"
    path.write_text(model.to_str(), encoding="utf-8")
    model.no_truncation()
    model.no_padding()
    return str(path), model


def test_tokenizer_json_ids_are_its_own(tmp_path):
    path, reference = _trained_json(tmp_path)
    tokenizer = text.load(path)
    assert tokenizer.kind == "tokenizer.json" and tokenizer.vocab_size == reference.get_vocab_size()
    assert tokenizer.encode(TEXTS) == [encoding.ids for encoding in reference.encode_batch(TEXTS, add_special_tokens=False)]
    assert tokenizer.specials[:4] == (text.Special("[PAD]", 0), text.Special("[UNK]", 1), text.Special("[CLS]", 2),
                                      text.Special("[SEP]", 3))
    theirs = reference.encode_batch(list(zip(TEXTS[:50], TEXTS[50:100])))
    ours = tokenizer.inputs(TEXTS[:50], TEXTS[50:100])
    assert ours.ids == [encoding.ids for encoding in theirs]
    assert ours.segments == [encoding.type_ids for encoding in theirs]
    words = [line.split() for line in english()[:50]]
    pieces = tokenizer.encode_words(words)
    theirs = reference.encode_batch(words, is_pretokenized=True, add_special_tokens=False)
    assert [piece.ids for piece in pieces] == [encoding.ids for encoding in theirs]
    assert [piece.words for piece in pieces] == [encoding.word_ids for encoding in theirs]
    assert tokenizer.decode(ours.ids[0]) == reference.decode(ours.ids[0])
