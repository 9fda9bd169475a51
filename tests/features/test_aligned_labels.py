"""A class_label's `align: words`: word labels on sub-word pieces, exact on real text.

The records of CoNLL files (an excerpt of CoNLL-2003's English NER data, and CoNLL-U of the
turkish-treebanks package's Web treebank, whose words split into many pieces) built with the three
tokenizer kinds are compared with an alignment made here the plain way, each word tokenized on
its own by the libraries' own objects (Hugging Face's `BertWordPieceTokenizer` over the same
vocab.txt, the `tokenizers.Tokenizer` of the tokenizer.json, `SentencePieceProcessor.encode`):
ids, and a word's label on its first piece (or every piece), -1 elsewhere, cut as the ids are.
Then the errors (words and labels of different counts, a label outside the names), words
without pieces, and every reading path (input_fn padded with -1, the generated module, KerasHub's
layout, tb.read, TFDS).
"""
from __future__ import annotations

import collections
import io
import json
import sysconfig
from pathlib import Path

import pytest
import sentencepiece
import tokenizers
from tokenizers import models, normalizers, pre_tokenizers, processors, trainers

import tfrecord_builder as tb
from conftest import write_spec
from support.conll import CONLL2003, NER, conll2003_sentences, conllu_reference
from support.reading import read_both
from support.texts import english
from tfrecord_builder import text

# the first sentences of turkish-treebanks 1.0.0's data/web.conllu (Apache-2.0): Turkish words
# as inflectional groups (`Açık` `la` `nma` `yan`), Google's universal tags in UPOS
TURKISH = """\
# sent_id = tr-forum:00000222:S023
# text = Burda da öylemi yoksa kiloyla mı ?
1\tBurda\tbur\tPRON\tPRD\tPersonNumber=A3sg|Possessive=Pnon|Case=Loc|Proper=False\t3\tnpadvmod\t_\t_
2\tda\tda\tPRT\tRPC\tProper=False\t1\tprt\t_\t_
3\töylemi\töyle\tVERB\tNOMP\tPersonNumber=A3sg|Possessive=Pnon|Case=Bare|Copula=PresCop|PersonNumber=V3sg|Proper=False\t5\tconj\t_\t_
4\tyoksa\tyoksa\tCONJ\tCC\tConjunctionType=Coor|Proper=False\t5\tcc\t_\t_
5\tkiloyla\tkilo\tVERB\tNOMP\tPersonNumber=A3sg|Possessive=Pnon|Case=Ins|Copula=PresCop|PersonNumber=V3sg|Proper=False\t0\troot\t_\t_
6\tmı\tmı\tPRT\tRPQ\tProper=False\t5\tprt\t_\t_
7\t?\t?\tPUNCT\t.\tProper=False\t5\tp\t_\t_

# sent_id = tr-blog:00000584:S049
# text = Açıklanmayan soruların müfredata uygun olup olmadığını bilmek imkansız.
1\tAçık\taçık\tNOUN\tNN\tPersonNumber=A3sg|Possessive=Pnon|Case=Bare|Proper=False\t2\tig\t_\tSpaceAfter=No
2\tla\t_\tVERB\tVB\tDerivation=Make|Proper=False\t3\tig\t_\tSpaceAfter=No
3\tnma\t_\tVERB\tVB\tDerivation=Pass|Polarity=Neg|Proper=False\t4\tig\t_\tSpaceAfter=No
4\tyan\t_\tADJ\tVJ\tDerivation=PresPart|Possessive=Pnon|Proper=False\t5\trcmod\t_\t_
5\tsoruların\tsoru\tNOUN\tNN\tPersonNumber=A3pl|Possessive=Pnon|Case=Gen|Proper=False\t11\tposs\t_\t_
6\tmüfredata\tmüfredat\tNOUN\tNN\tPersonNumber=A3sg|Possessive=Pnon|Case=Dat|Proper=False\t7\tnarg\t_\t_
7\tuygun\tuygun\tADJ\tJJ\tProper=False\t10\tacomp\t_\t_
8\tol\tol\tVERB\tVB\tPolarity=Pos|Proper=False\t9\tig\t_\tSpaceAfter=No
9\tup\t_\tADV\tCRB\tDerivation=After|Proper=False\t10\tadvcl\t_\t_
10\tolma\tol\tVERB\tVB\tPolarity=Neg|Proper=False\t11\tig\t_\tSpaceAfter=No
11\tdığını\t_\tNOUN\tVN\tDerivation=PastNom|PersonNumber=A3sg|Possessive=P3sg|Case=Acc|Proper=False\t12\txcomp\t_\t_
12\tbil\tbil\tVERB\tVB\tPolarity=Pos|Proper=False\t13\tig\t_\tSpaceAfter=No
13\tmek\t_\tNOUN\tVN\tDerivation=Inf|PersonNumber=A3sg|Possessive=Pnon|Case=Nom|Proper=False\t15\tcsubj\t_\t_
14\timkan\timkan\tNOUN\tNN\tPersonNumber=A3sg|Possessive=Pnon|Case=Bare|Proper=False\t15\tig\t_\tSpaceAfter=No
15\tsız\t_\tVERB\tNOMP\tDerivation=Wout|PersonNumber=A3sg|Possessive=Pnon|Case=Bare|Copula=PresCop|PersonNumber=V3sg|Proper=False\t0\troot\t_\tSpaceAfter=No
16\t.\t.\tPUNCT\t.\tProper=False\t15\tp\t_\t_

# sent_id = tr-web:00000001:S001
# text = Çocuğunuzun gelişimini yakından takip ediyor musunuz?
1\tÇocuğunuzun\tçocuk\tNOUN\tNN\tPersonNumber=A3sg|Possessive=P2pl|Case=Gen|Proper=False\t2\tposs\t_\t_
2\tgelişimini\tgelişim\tNOUN\tNN\tPersonNumber=A3sg|Possessive=P3sg|Case=Acc|Proper=False\t4\tdobj\t_\t_
3\tyakından\tyakın\tADV\tRB\tProper=False\t4\tadvmod\t_\t_
4\ttakip\ttakip\tNOUN\tNN\tPersonNumber=A3sg|Possessive=Pnon|Case=Bare|Proper=False\t5\tnarg\t_\t_
5\tediyor\tet\tVERB\tVB\tPolarity=Pos|Tense=Prog1|PersonNumber=V3sg|Proper=False\t0\troot\t_\t_
6\tmusunuz\tmu\tPRT\tRPQ\tPersonNumber=V2pl|Proper=False\t5\tprt\t_\tSpaceAfter=No
7\t?\t?\tPUNCT\t.\tProper=False\t5\tp\t_\t_
"""
UPOS = ["ADJ", "ADP", "ADV", "AFFIX", "CONJ", "DET", "NOUN", "NUM", "ONOM", "PRON", "PRT", "PUNCT", "VERB", "X"]
TREEBANK = Path(sysconfig.get_paths()["purelib"]) / "data" / "web.conllu"  # turkish-treebanks, where installed
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _turkish_words() -> list[str]:
    return [word for sentence in conllu_reference(TURKISH) for word in sentence["form"]]


@pytest.fixture(scope="module")
def tokenizer_files(tmp_path_factory) -> dict[str, Path]:
    """A vocab.txt, a SentencePiece .model and a tokenizer.json, each learned from English text
    (and a few Turkish words), so that the CoNLL words split into pieces."""
    folder = tmp_path_factory.mktemp("tokenizers")
    lines = english()
    counts = collections.Counter(word for line in lines[::2] for word in text.words(line))
    counts.update(_turkish_words()[:10])
    (folder / "vocab.txt").write_bytes(text.learn(counts, "wordpiece", 1000).data)
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(line.replace("\n", " ") for line in lines), encoding="utf-8")
    proto = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(input=str(corpus), model_writer=proto, vocab_size=1500, minloglevel=2,
                                             num_threads=1, pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
    (folder / "spm.model").write_bytes(proto.getvalue())
    model = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    model.normalizer = normalizers.BertNormalizer(lowercase=False)
    model.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    model.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=1200, special_tokens=SPECIALS,
                                                               show_progress=False))
    model.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    (folder / "tokenizer.json").write_text(model.to_str(), encoding="utf-8")
    return {"vocab.txt": folder / "vocab.txt", "spm.model": folder / "spm.model",
            "tokenizer.json": folder / "tokenizer.json"}


class Plain:
    """The alignment made the plain way: each word tokenized alone by the library's own object,
    placed in the template by hand."""

    def __init__(self, kind: str, path: Path):
        if kind == "spm.model":
            processor = sentencepiece.SentencePieceProcessor(model_file=str(path))
            self.pieces = lambda word: processor.encode(word)
            self.before, self.after = [], [processor.eos_id()]
        else:
            own = (tokenizers.BertWordPieceTokenizer(str(path), lowercase=True) if kind == "vocab.txt"
                   else tokenizers.Tokenizer.from_file(str(path)))
            self.pieces = lambda word: own.encode(word, add_special_tokens=False).ids
            self.before, self.after = [own.token_to_id("[CLS]")], [own.token_to_id("[SEP]")]

    def aligned(self, words: list[str], labels: list[int], every: bool = False, max_length: int | None = None,
                side: str = "right", specials: bool = True) -> tuple[list[int], list[int]]:
        ids, placed = [], []
        for word, label in zip(words, labels):
            pieces = self.pieces(word)
            ids += pieces
            placed += [label if every or index == 0 else -1 for index in range(len(pieces))]
        before, after = (self.before, self.after) if specials else ([], [])
        if max_length is not None:
            room = max_length - len(before) - len(after)
            keep = slice(0, room) if side == "right" else slice(max(len(ids) - room, 0), None)
            ids, placed = ids[keep], placed[keep]
        ends = [-1] * len(before), [-1] * len(after)
        return before + ids + after, ends[0] + placed + ends[1]


def _conll2003() -> tuple[str, list[list[str]], list[list[str]]]:
    sentences = conll2003_sentences(CONLL2003)
    return CONLL2003, [[token[0] for token in sentence] for sentence in sentences], \
        [[token[3] for token in sentence] for sentence in sentences]


def _turkish(text_of_file: str = TURKISH) -> tuple[str, list[list[str]], list[list[str]]]:
    sentences = conllu_reference(text_of_file)
    return text_of_file, [sentence["form"] for sentence in sentences], [sentence["upos"] for sentence in sentences]


def _in_source_order(records: list[dict], words: list[list[str]]) -> list[dict]:
    """The records in the order of their sentences in the file (by their stored words)."""
    by_words = {tuple(word.decode() for word in record["words"]): record for record in records}
    return [by_words[tuple(sentence)] for sentence in words]


def _conll_spec(kind: str, tokenizer: Path, conllu: bool, names: list[str], **options) -> dict:
    align = options.pop("align", "words")
    if conllu:
        source = {"builder": "conll", "path": "data.conllu"}
        words, tags = "form", "upos"
    else:
        source = {"builder": "conll", "path": "eng.train", "columns": ["word", "pos", "chunk", "ner"]}
        words, tags = "word", "ner"
    return {"name": "tagged", "source": source,
            "features": {"words": {"dtype": "string", "shape": [None], "source": words},
                         "tokens": {"type": "text", "source": words, "words": True, "tokenizer": str(tokenizer),
                                    **options},
                         "tags": {"type": "class_label", "shape": [None], "source": tags, "names": names,
                                  "align": align}},
            "output": {"dir": "out"}}


@pytest.mark.parametrize("corpus", ["conll2003", "turkish"])
@pytest.mark.parametrize("kind", ["vocab.txt", "spm.model", "tokenizer.json"])
def test_labels_are_the_words_labels_on_their_pieces(tmp_path, tokenizer_files, kind, corpus):
    data, words, tags = _conll2003() if corpus == "conll2003" else _turkish()
    names = NER if corpus == "conll2003" else UPOS
    plain = Plain(kind, tokenizer_files[kind])
    name = "data.conllu" if corpus == "turkish" else "eng.train"
    cases = [({}, False), ({"max_length": 12}, False), ({"max_length": 12, "truncation": "left"}, False),
             ({"align": {"pieces": "all"}}, True), ({"align": {"words": "tokens", "pieces": "all"}, "max_length": 9},
                                                    True), ({"special_tokens": False, "max_length": 10}, False)]
    for number, (options, every) in enumerate(cases):
        path = write_spec(tmp_path / str(number), _conll_spec(kind, tokenizer_files[kind], corpus == "turkish", names,
                                                              **options), {name: data})
        info = tb.build(path, overwrite=True)
        records = _in_source_order(list(tb.read(info.path, "train")), words)
        assert len(records) == len(words) > 2
        split = 0
        for record, sentence, labels in zip(records, words, tags):
            ids, placed = plain.aligned(sentence, [names.index(tag) for tag in labels], every,
                                        options.get("max_length"), options.get("truncation", "right"),
                                        options.get("special_tokens", True))
            assert record["tokens"].tolist() == ids, (options, sentence)
            assert record["tags"].tolist() == placed, (options, sentence)
            assert len(record["tags"]) == len(record["tokens"])
            split += len(ids) > len(sentence) + 2
        assert split or "max_length" in options, "some word splits into several pieces"
        if "max_length" in options:
            assert any("cut to max_length" in warning for warning in info.warnings)


@pytest.mark.skipif(not TREEBANK.exists(), reason="turkish-treebanks isn't installed (its data/web.conllu)")
def test_the_whole_web_treebank_with_sentencepiece(tmp_path, tokenizer_files):
    """All 2,541 sentences of turkish-treebanks' Web treebank, 32,422 words, as it is installed."""
    data = TREEBANK.read_text(encoding="utf-8")
    _, words, tags = _turkish(data)
    plain = Plain("spm.model", tokenizer_files["spm.model"])
    path = write_spec(tmp_path, _conll_spec("spm.model", tokenizer_files["spm.model"], True, UPOS, max_length=48),
                      {"data.conllu": data})
    records = _in_source_order(list(tb.read(tb.build(path, overwrite=True).path, "train")), words)
    assert len(records) == len(words) == 2541
    for record, sentence, labels in zip(records, words, tags):
        ids, placed = plain.aligned(sentence, [UPOS.index(tag) for tag in labels], max_length=48)
        assert record["tokens"].tolist() == ids and record["tags"].tolist() == placed


def _jsonl(tmp_path: Path, tokenizer: Path, rows: list[dict], **spec) -> Path:
    lines = "".join(json.dumps(row) + "\n" for row in rows)
    return write_spec(tmp_path, {
        "name": "tagged", "source": {"builder": "jsonl", "path": "rows.jsonl"},
        "features": {"id": {"dtype": "int64"},
                     "tokens": {"type": "text", "source": "words", "words": True, "tokenizer": str(tokenizer)},
                     "tags": {"type": "class_label", "shape": [None], "names": ["O", "PER", "LOC"], "align": "words"}},
        "output": {"dir": "out"}, **spec}, {"rows.jsonl": lines})


ROWS = [{"id": 0, "words": ["Peter", "Blackburn", "visited", "Brussels"], "tags": ["PER", "PER", "O", "LOC"]},
        {"id": 1, "words": ["unaffable", "reviewers"], "tags": ["O", "O"]},
        {"id": 2, "words": ["Zürich", "in", "1996"], "tags": ["LOC", "O", "O"]}]


def test_words_and_labels_of_different_counts_name_the_record(tmp_path, tokenizer_files):
    rows = ROWS + [{"id": 3, "words": ["one", "two", "three"], "tags": ["O", "O"]}]
    path = _jsonl(tmp_path, tokenizer_files["vocab.txt"], rows)
    with pytest.raises(tb.DataError) as error:
        tb.build(path, overwrite=True)
    assert str(error.value) == ("rows.jsonl, line 4: feature `tags`: 3 words in `words` but 2 labels in `tags`; "
                                "expected one label a word")
    info = tb.build(_jsonl(tmp_path, tokenizer_files["vocab.txt"], rows, on_error="skip"), overwrite=True)
    assert sorted(int(record["id"]) for record in tb.read(info.path, "train")) == [0, 1, 2]
    skipped = [json.loads(line) for line in (Path(info.path) / "skipped.jsonl").read_text().splitlines()]
    assert [entry["reason"] for entry in skipped] == [str(error.value)]


def test_conll_sentence_of_other_counts_and_a_label_outside_the_names(tmp_path, tokenizer_files):
    data = CONLL2003.replace("Peter NNP B-NP B-PER\n", "Peter NNP B-NP B-PERSON\n")
    path = write_spec(tmp_path, _conll_spec("vocab.txt", tokenizer_files["vocab.txt"], False, NER),
                      {"eng.train": data})
    with pytest.raises(tb.DataError, match=r"^eng\.train, line 13: feature `tags`: element 0: expected a class name "
                                           r"\(O, B-PER, I-PER, .*\) or an index in \[0, 9\), received \"B-PERSON\"$"):
        tb.build(path, overwrite=True)
    spec = _conll_spec("vocab.txt", tokenizer_files["vocab.txt"], False, NER)
    spec["features"]["tokens"]["source"] = "pos"  # the same counts: fine
    tb.build(write_spec(tmp_path / "pos", spec, {"eng.train": CONLL2003}), overwrite=True)


def test_a_word_without_pieces_leaves_its_label_out_without_shifting_the_others(tmp_path, tokenizer_files):
    """An empty word has no piece in any tokenizer; one of control characters none in BERT's (its
    basic tokenization drops them), the unknown piece in this SentencePiece model."""
    words = ["Peter", "", "visited", "\x00\x01", "Brussels"]
    rows = [{"id": 0, "words": words, "tags": ["PER", "O", "O", "O", "LOC"]}]
    for kind, without in (("vocab.txt", 2), ("spm.model", 1), ("tokenizer.json", 2)):
        info = tb.build(_jsonl(tmp_path / kind, tokenizer_files[kind], rows), overwrite=True)
        record = next(tb.read(info.path, "train"))
        plain = Plain(kind, tokenizer_files[kind])
        assert sum(not plain.pieces(word) for word in words) == without
        ids, placed = plain.aligned(words, [1, 0, 0, 0, 2])
        assert record["tokens"].tolist() == ids and record["tags"].tolist() == placed
        assert placed.count(1) == placed.count(2) == 1
        s = "s" if without > 1 else ""
        assert f"feature `tags`: {without} label{s} left out: {without} word{s} of `words` without pieces (an empty " \
               "word, or control characters only)" in info.warnings


def test_reading_pads_labels_with_minus_one_like_the_ids(tmp_path, tokenizer_files, tf):
    path = _jsonl(tmp_path, tokenizer_files["vocab.txt"], ROWS, input={"batch_size": 3})
    info = tb.build(path, overwrite=True)
    records = list(tb.read(info.path, "train"))
    (batch,) = read_both(info, batch_size=3)  # tb.input_fn's, and the generated module's the same
    longest = max(len(record["tokens"]) for record in records)
    assert batch["tags"].shape == batch["tokens"].shape == (3, longest)
    for row, record in enumerate(records):
        length = len(record["tokens"])
        assert batch["tags"][row].tolist() == record["tags"].tolist() + [-1] * (longest - length)
        assert batch["tokens_mask"][row].tolist() == [True] * length + [False] * (longest - length)
    figures = info.statistics["train"]["tags"]
    assert figures["classes"] == {"O": 5, "PER": 2, "LOC": 2}  # the words' labels, not the ignored pieces
    described = json.loads((Path(info.path) / "features.json").read_text())["featuresDict"]["features"]["tags"]
    assert described["pythonClassName"].endswith("sequence_feature.Sequence")
    assert described["sequence"]["feature"]["classLabel"] == {"numClasses": "3"}


def test_keras_hub_layout_has_the_aligned_labels_as_its_label(tmp_path, tokenizer_files, tf):
    path = _jsonl(tmp_path, tokenizer_files["vocab.txt"], ROWS, label="tags", input={"text": "keras_hub"})
    info = tb.build(path, overwrite=True)
    features, labels = next(iter(tb.input_fn(info.path, "train", batch_size=3, shuffle=False)))
    assert sorted(features) == ["padding_mask", "segment_ids", "token_ids"]
    assert labels.shape == features["token_ids"].shape
    records = list(tb.read(info.path, "train"))
    for row, record in enumerate(records):
        length = len(record["tags"])
        assert labels[row, :length].numpy().tolist() == record["tags"].tolist()
        assert set(labels[row, length:].numpy().tolist()) <= {-1}
    # the loss masked where the label is -1 (as docs/text.md shows): the ignored pieces weigh nothing
    weights = tf.cast(labels != -1, tf.float32)
    assert float(tf.reduce_sum(weights)) == sum(int((record["tags"] >= 0).sum()) for record in records)


def test_tfds_reads_a_sequence_of_class_labels(tmp_path, tokenizer_files):
    tfds = pytest.importorskip("tensorflow_datasets")
    info = tb.build(_jsonl(tmp_path, tokenizer_files["spm.model"], ROWS), overwrite=True)
    builder = tfds.builder_from_directory(info.path)
    assert builder.info.features["tags"].feature.names == ["O", "PER", "LOC"]
    ours = {int(record["id"]): record for record in tb.read(info.path, "train")}
    for example in tfds.as_numpy(builder.as_dataset(split="train")):
        assert example["tags"].tolist() == ours[int(example["id"])]["tags"].tolist()


def test_spec_errors_name_the_key(tmp_path, tokenizer_files):
    def error(change) -> str:
        spec = _conll_spec("vocab.txt", tokenizer_files["vocab.txt"], False, NER)
        change(spec["features"])
        path = write_spec(tmp_path, spec, {"eng.train": CONLL2003})
        with pytest.raises(tb.SpecError) as raised:
            tb.load_spec(path)
        return str(raised.value).split(": ", 1)[1]

    assert error(lambda features: features["tokens"].pop("words")) == (
        "features.tags.align: the labels go on the pieces of a text feature with `words: true` (the spec has none); "
        "declare one, reading the words' column")
    assert error(lambda features: features.update(more={**features["tokens"], "source": "pos"})) == (
        "features.tags.align: the labels go on the pieces of a text feature with `words: true` (the spec has "
        "`tokens`, `more`); name it: `align: {words: FEATURE}`")
    assert error(lambda features: features["tags"].update(align={"words": "chunk"})) == (
        "features.tags.align.words: expected a text feature with `words: true` (one column of words) of this spec "
        "(tokens), received 'chunk'")
    assert error(lambda features: features["tags"].update(shape=[])) == (
        "features.tags.shape: aligned labels are one a piece, a list: shape [null], received []")
    assert error(lambda features: features["tags"].update(align="pieces")).startswith(
        "features.tags.align: expected `words` (one label a word, on its pieces) or {words: FEATURE, pieces: "
        "first | all}, received")
    assert error(lambda features: features["tags"].update(align={"pieces": "last"})).startswith(
        "features.tags.align.pieces: expected one of")


@pytest.mark.parametrize("layout", [None, "model_garden"])
def test_workers_and_verify_see_the_same_dataset(tmp_path, tokenizer_files, layout):
    """Two worker processes (the aligned text sent along with the labels) write the bytes of one;
    `verify` reads every record back against the spec (labels from -1, as long as the ids)."""
    from support.cli import assert_ok, run_cli
    from support.reading import assert_same_files, files_of
    options = {"max_length": 24, **({"layout": layout} if layout else {})}
    spec = _conll_spec("vocab.txt", tokenizer_files["vocab.txt"], False, NER, **options)
    spec["output"]["shards"] = 2
    path = write_spec(tmp_path, spec, {"eng.train": CONLL2003 * 40})
    one = files_of(tb.build(path, overwrite=True, workers=1).path)
    info = tb.build(path, overwrite=True, workers=2)
    assert_same_files(one, files_of(info.path))
    result = run_cli("verify", info.path, cwd=tmp_path)
    assert_ok(result)
    assert "240 records, checksums and every record match the spec" in result.stdout


def test_model_garden_layout_is_fixed_length_and_reads_in_every_path(tmp_path, tokenizer_files, tf):
    """`layout: model_garden`: exactly input_ids, input_mask, segment_ids and the aligned label_ids,
    max_length values each; input_fn, the generated module, tb.read and TFDS read it as ever."""
    tfds = pytest.importorskip("tensorflow_datasets")
    rows = "".join(json.dumps(row) + "\n" for row in ROWS)
    path = write_spec(tmp_path, {
        "name": "garden", "source": {"builder": "jsonl", "path": "rows.jsonl"},
        "features": {"input_ids": {"type": "text", "source": "words", "words": True, "max_length": 12,
                                   "tokenizer": str(tokenizer_files["vocab.txt"]), "layout": "model_garden"},
                     "label_ids": {"type": "class_label", "shape": [None], "source": "tags", "names": ["O", "PER", "LOC"],
                                   "align": "words"}},
        "output": {"dir": "out"}}, {"rows.jsonl": rows})
    info = tb.build(path, overwrite=True)
    plain = Plain("vocab.txt", tokenizer_files["vocab.txt"])
    expected = {}
    for row in ROWS:
        ids, labels = plain.aligned(row["words"], [["O", "PER", "LOC"].index(tag) for tag in row["tags"]],
                                    max_length=12)
        expected[tuple(ids)] = (ids + [0] * (12 - len(ids)), labels + [-1] * (12 - len(labels)), len(ids))
    (shard,) = Path(info.path).glob("garden-train.tfrecord-*")
    stored = [{key: list(value.int64_list.value) for key, value in tf.train.Example.FromString(
        record.numpy()).features.feature.items()} for record in tf.data.TFRecordDataset(str(shard))]
    records = list(tb.read(info.path, "train"))
    assert len(stored) == len(records) == 3
    for raw, record in zip(stored, records):
        length = sum(raw["input_mask"])
        ids, labels, _ = expected[tuple(raw["input_ids"][:length])]
        assert raw == {"input_ids": ids, "input_mask": [1] * length + [0] * (12 - length), "segment_ids": [0] * 12,
                       "label_ids": labels}
        assert record["input_ids"].tolist() == ids and record["label_ids"].tolist() == labels
        assert record["input_ids_mask"].tolist() == [True] * length + [False] * (12 - length)
    (batch,) = read_both(info, batch_size=3)
    assert batch["input_ids"].shape == batch["label_ids"].shape == batch["input_ids_mask"].shape == (3, 12)
    assert [row.tolist() for row in batch["label_ids"]] == [record["label_ids"].tolist() for record in records]
    lengths = sorted(length for _, _, length in expected.values())
    figures = info.statistics["train"]["input_ids"]["length"]
    assert (figures["min"], figures["max"]) == (lengths[0], lengths[-1])  # the ids', not the padded width
    assert info.spec.features["label_ids"].describe() == \
        "class_label (3 classes) int64 [12] (on the pieces of `input_ids`, -1 ignored)"
    assert info.spec.features["input_ids"].describe() == "text wordpiece int64 [12] (ids, Model Garden's layout)"
    builder = tfds.builder_from_directory(info.path)
    for example in tfds.as_numpy(builder.as_dataset(split="train")):
        ids, labels, length = expected[tuple(example["input_ids"][:int(example["input_mask"].sum())].tolist())]
        assert example["input_ids"].tolist() == ids and example["label_ids"].tolist() == labels


def test_model_garden_layout_spec_errors(tmp_path, tokenizer_files):
    def error(features: dict) -> str:
        path = write_spec(tmp_path, {"name": "garden", "source": {"builder": "jsonl", "path": "rows.jsonl"},
                                     "features": features}, {"rows.jsonl": ""})
        with pytest.raises(tb.SpecError) as raised:
            tb.load_spec(path)
        return str(raised.value).split(": ", 1)[1]

    text_feature = {"type": "text", "source": "a", "tokenizer": str(tokenizer_files["vocab.txt"]),
                    "layout": "model_garden"}
    assert error({"input_ids": text_feature}) == (
        "features.input_ids.layout: Model Garden's records are all max_length ids long: give `max_length`")
    assert error({"input_ids": {**text_feature, "max_length": 8},
                  "other": {**text_feature, "source": "b", "max_length": 8}}) == (
        "features.input_ids.layout: feature `other` stores Model Garden's input_mask, segment_ids too: one text a "
        "spec takes that layout")
    assert error({"input_ids": {**text_feature, "max_length": 8}, "input_mask": {"dtype": "int64"}}) == (
        "features.input_ids: stores `input_mask` beside its ids, already feature `input_mask`'s record key; rename "
        "one (or give it another `key:`)")


def test_aligned_labels_are_not_per_step(tmp_path, tokenizer_files):
    path = write_spec(tmp_path, {
        "name": "steps", "format": "sequence_example", "source": {"builder": "jsonl", "path": "rows.jsonl"},
        "context": {"tokens": {"type": "text", "source": "words", "words": True,
                               "tokenizer": str(tokenizer_files["vocab.txt"])}},
        "sequence": {"tags": {"type": "class_label", "names": ["O", "PER"], "align": "words", "shape": [None]}}},
        {"rows.jsonl": ""})
    with pytest.raises(tb.SpecError, match=r"sequence\.tags\.align: aligned labels are a list beside their text's ids: "
                                           r"declare them under `context:` or `features:`, not per step$"):
        tb.load_spec(path)
