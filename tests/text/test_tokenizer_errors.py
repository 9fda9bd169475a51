"""Bad tokenizer files and bad text: each one line saying what and where."""
from __future__ import annotations

import pickle

import pytest

from tfrecord_builder import text

VOCAB = "[PAD]\n[UNK]\n[CLS]\n[SEP]\na\n##b\n"


@pytest.mark.parametrize("name, data, message", [
    ("vocab.txt", b"", "vocab.txt: empty; expected a vocabulary of one token a line"),
    ("vocab.txt", b"\n\n", "vocab.txt: empty; expected a vocabulary of one token a line"),
    ("vocab.txt", b"[PAD]\n[UNK]\ncaf\xe9\n", "vocab.txt, line 3: not UTF-8 text (byte 0xe9); expected a vocabulary of one token a line"),
    ("vocab.txt", b"[PAD]\n[UNK]\na\nb\na\n", "vocab.txt, line 5: token 'a' repeats line 3"),
    ("vocab.txt", b"[UNK]\na\n", "vocab.txt: no padding token [PAD]; expected a BERT vocabulary with [PAD] and [UNK]"),
    ("vocab.txt", b"[PAD]\na\n", "vocab.txt: no unknown token [UNK]; expected a BERT vocabulary with [PAD] and [UNK]"),
    ("spm.model", b"[PAD]\n[UNK]\n", "spm.model: not a SentencePiece model ("),
    ("spm.model", b"", "spm.model: not a SentencePiece model ("),
    ("tokenizer.json", b"{\"version\": ", "tokenizer.json: not a tokenizer.json Hugging Face tokenizers reads ("),
    ("tokenizer.json", b"{\"model\": {}}", "tokenizer.json: not a tokenizer.json Hugging Face tokenizers reads ("),
    ("tokenizer.json", b"\xff{}", "tokenizer.json: not UTF-8 text (byte 0xff at offset 0); expected a tokenizer.json"),
])
def test_malformed_files(name, data, message):
    with pytest.raises(text.BadTokenizer) as error:
        text.Tokenizer.from_bytes(data, name)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_missing_files_and_folders(tmp_path):
    with pytest.raises(text.BadTokenizer, match=r"^.*missing\.txt: file not found$"):
        text.load(str(tmp_path / "missing.txt"))
    with pytest.raises(text.BadTokenizer, match=r"is a folder, not a tokenizer file$"):
        text.load(str(tmp_path))


def test_tokenizers_without_padding_or_unknown(tmp_path):
    import io

    import sentencepiece
    import tokenizers
    from tokenizers import models
    proto = io.BytesIO()  # SentencePiece's defaults: no padding id
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(["a b c d e f g h"] * 20), model_writer=proto,
                                             vocab_size=12, minloglevel=2, hard_vocab_limit=False)
    with pytest.raises(text.BadTokenizer, match=r"^spm\.model: no padding piece; expected a SentencePiece model with padding"):
        text.Tokenizer.from_bytes(proto.getvalue(), "spm.model")
    no_unknown = tokenizers.Tokenizer(models.WordLevel({"[PAD]": 0, "a": 1}))
    with pytest.raises(text.BadTokenizer, match=r"^tokenizer\.json: no unknown token; expected a tokenizer"):
        text.Tokenizer.from_bytes(no_unknown.to_str().encode(), "tokenizer.json")
    no_pad = tokenizers.Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    with pytest.raises(text.BadTokenizer, match=r"^tokenizer\.json: no padding token"):
        text.Tokenizer.from_bytes(no_pad.to_str().encode(), "tokenizer.json")
    with pytest.raises(ValueError, match="lowercase applies to a vocab.txt only"):
        text.Tokenizer.from_bytes(no_pad.to_str().encode(), "tokenizer.json", lowercase=True)


def test_bad_text_names_its_place():
    tokenizer = text.Tokenizer.from_bytes(VOCAB.encode(), "vocab.txt")
    cases = [([b"ab", b"caf\xe9"], 1, "not valid UTF-8 text (byte 0xe9 at offset 3)"),
             (["ab", "a", 3], 2, "expected text, received int 3"),
             (["ab", "x\ud800"], 1, "not valid text: a lone surrogate U+D800 at character 1, which UTF-8 can't hold"),
             ([None], 0, "expected text, received NoneType None")]
    for batch, index, message in cases:
        with pytest.raises(text.BadText) as error:
            tokenizer.encode(batch)
        assert (str(error.value), error.value.index) == (message, index)
        copy = pickle.loads(pickle.dumps(error.value))  # whole across worker processes
        assert (str(copy), copy.index) == (message, index)
    assert tokenizer.encode([b"ab", bytearray(b"a")]) == [[4, 5], [4]]
    with pytest.raises(text.BadText, match="expected a list of words"):
        tokenizer.encode_words(["a b"])
    with pytest.raises(TypeError, match="wrap it in a list"):
        tokenizer.encode("ab")


def test_a_tokenizer_travels_to_worker_processes_as_its_bytes():
    tokenizer = text.Tokenizer.from_bytes(VOCAB.encode(), "vocab.txt", lowercase=False)
    copy = pickle.loads(pickle.dumps(tokenizer))
    assert (copy.fingerprint, copy.lowercase, copy.encode(["AB ab"])) == (tokenizer.fingerprint, False, [[1, 4, 5]])
