"""Text as token ids: the tokenizer library the `text` feature type calls.

- `load(path)` / `Tokenizer.from_bytes(data, name)`: a BERT vocab.txt (WordPiece with BERT's basic
  tokenization, uncased or cased), a SentencePiece .model or a Hugging Face tokenizer.json, as one
  `Tokenizer` (tokenizer.py; the libraries behind it in backends.py): batch `encode`,
  `encode_words` (pieces with their word's index, for word labels), `decode`, the special tokens
  taken from the file, `vocab_size`, and a `fingerprint` of the file's bytes.
- `Tokenizer.inputs` / `assemble` (inputs.py): a text or a pair in the tokenizer's template with
  segment ids, cut to `max_length` by BERT's rule, each cut counted; `window` cuts a long text
  into overlapping windows as BERT's SQuAD code does.
- `pack.packs` / `pack.laid_out` (pack.py): short examples packed into fixed windows of ids with
  T5's segment ids and positions, greedily in order.
- `learn(counts, kind, size)` (learn.py): a vocabulary learned from word counts, deterministically,
  over the words `words(text)` (bert.py) gives.
- `BadTokenizer`, `BadText` (errors.py): a file or a text that can't be used, in words for a user.

Built on Hugging Face `tokenizers` and Google's `sentencepiece` (the `text` extra).
"""
from .bert import words
from .errors import BadText, BadTokenizer
from .inputs import Inputs, Template, Window, pair_lengths, window
from .learn import LEARNED_KINDS, Learned, learn
from .tokenizer import Special, Specials, Tokenizer, WordPieces, load

__all__ = ["LEARNED_KINDS", "BadText", "BadTokenizer", "Inputs", "Learned", "Special", "Specials", "Template", "Tokenizer", "Window",
           "WordPieces", "learn", "load", "pair_lengths", "window", "words"]
