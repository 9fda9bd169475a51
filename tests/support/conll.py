"""CoNLL text for the tests of `builder: conll` and of infer's CoNLL plans: an excerpt of
CoNLL-2003's English files (two documents, `-DOCSTART-` lines) and a CoNLL-U excerpt in the layout of
UD English EWT (comments, a multiword token, an empty node, features, enhanced dependencies), each
with an independent reading to compare records with: a plain split of the text for CoNLL-2003,
the `conllu` package's parser for CoNLL-U.

No CoNLL corpus ships in a package this machine can install (nltk's and spaCy's corpora are
downloads, the `conllu` package's tests hold strings, TFDS's CoNLL builders download theirs),
so the excerpts are written here.
"""
from __future__ import annotations

import conllu

CONLL2003 = """\
-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O
German JJ B-NP B-MISC
call NN I-NP O
to TO B-VP O
boycott VB I-VP O
British JJ B-NP B-MISC
lamb NN I-NP O
. . O O

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER

BRUSSELS NNP B-NP B-LOC
1996-08-22 CD I-NP O

The DT B-NP O
European NNP I-NP B-ORG
Commission NNP I-NP I-ORG
said VBD B-VP O
on IN B-PP O
Thursday NNP B-NP O
it PRP B-NP O
disagreed VBD B-VP O
with IN B-PP O
German JJ B-NP B-MISC
advice NN I-NP O
to TO B-PP O
consumers NNS B-NP O
to TO B-VP O
shun VB I-VP O
British JJ B-NP B-MISC
lamb NN I-NP O
. . O O

-DOCSTART- -X- -X- O

SOCCER NN B-NP O
- : O O
JAPAN NNP B-NP B-LOC
GET VB B-VP O
LUCKY NNP B-NP O
WIN NNP I-NP O
, , O O
CHINA NNP B-NP B-PER
IN IN B-PP O
SURPRISE DT B-NP O
DEFEAT NN I-NP O
. . O O

Nadim NNP B-NP B-PER
Ladki NNP I-NP I-PER

"""
NER = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]

CONLLU = """\
# newdoc id = weblog-blogspot.com_nominations_20041117172713_ENG_20041117_172713
# sent_id = weblog-blogspot.com_nominations_20041117172713_ENG_20041117_172713-0001
# newpar id = weblog-blogspot.com_nominations_20041117172713_ENG_20041117_172713-p0001
# text = From the AP comes this story :
1\tFrom\tfrom\tADP\tIN\t_\t3\tcase\t3:case\t_
2\tthe\tthe\tDET\tDT\tDefinite=Def|PronType=Art\t3\tdet\t3:det\t_
3\tAP\tAP\tPROPN\tNNP\tNumber=Sing\t4\tobl\t4:obl:from\t_
4\tcomes\tcome\tVERB\tVBZ\tMood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin\t0\troot\t0:root\t_
5\tthis\tthis\tDET\tDT\tNumber=Sing|PronType=Dem\t6\tdet\t6:det\t_
6\tstory\tstory\tNOUN\tNN\tNumber=Sing\t4\tnsubj\t4:nsubj\t_
7\t:\t:\tPUNCT\t:\t_\t4\tpunct\t4:punct\t_

# sent_id = weblog-blogspot.com_nominations_20041117172713_ENG_20041117_172713-0002
# text = I cannot go, but you can.
1\tI\tI\tPRON\tPRP\tCase=Nom|Number=Sing|Person=1|PronType=Prs\t4\tnsubj\t4:nsubj\t_
2-3\tcannot\t_\t_\t_\t_\t_\t_\t_\t_
2\tcan\tcan\tAUX\tMD\tVerbForm=Fin\t4\taux\t4:aux\t_
3\tnot\tnot\tPART\tRB\t_\t4\tadvmod\t4:advmod\t_
4\tgo\tgo\tVERB\tVB\tVerbForm=Inf\t0\troot\t0:root\tSpaceAfter=No
5\t,\t,\tPUNCT\t,\t_\t8\tpunct\t8:punct\t_
6\tbut\tbut\tCCONJ\tCC\t_\t8\tcc\t8:cc\t_
7\tyou\tyou\tPRON\tPRP\tCase=Nom|Person=2|PronType=Prs\t8\tnsubj\t8:nsubj|8.1:nsubj\t_
8\tcan\tcan\tAUX\tMD\tVerbForm=Fin\t4\tconj\t4:conj:but\tSpaceAfter=No
8.1\tgo\tgo\tVERB\tVB\tVerbForm=Inf\t_\t_\t4:conj:but\tCopyOf=4
9\t.\t.\tPUNCT\t.\t_\t4\tpunct\t4:punct\t_

# sent_id = reviews-091704-0003
# text = Café au lait in Zürich – très bon!
1\tCafé\tcafé\tNOUN\tNN\tNumber=Sing\t0\troot\t0:root\t_
2\tau\tau\tX\tFW\tForeign=Yes\t3\tgoeswith\t3:goeswith\t_
3\tlait\tlait\tX\tFW\tForeign=Yes\t1\tcompound\t1:compound\t_
4\tin\tin\tADP\tIN\t_\t5\tcase\t5:case\t_
5\tZürich\tZürich\tPROPN\tNNP\tNumber=Sing\t1\tnmod\t1:nmod:in\t_
6\t–\t–\tPUNCT\t:\t_\t1\tpunct\t1:punct\t_
7\ttrès\ttrès\tX\tFW\tForeign=Yes\t8\tadvmod\t8:advmod\t_
8\tbon\tbon\tX\tFW\tForeign=Yes\t1\tappos\t1:appos\tSpaceAfter=No
9\t!\t!\tPUNCT\t.\t_\t1\tpunct\t1:punct\t_

"""
CONLLU_FIELDS = ["id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc"]


def conll2003_sentences(text: str) -> list[list[list[str]]]:
    """CoNLL-2003 read the plain way: blank-line separated blocks of token lines, each a list
    of its columns, without the `-DOCSTART-` lines."""
    blocks = [[line.split() for line in block.splitlines() if not line.startswith("-DOCSTART-")]
              for block in text.split("\n\n")]
    return [block for block in blocks if block]


def conllu_reference(text: str) -> list[dict]:
    """Each sentence as the `conllu` package parses it: the words only (integer IDs), every
    column as written (its own parsers for FEATS, DEPS and MISC turned off), HEAD an integer."""
    raw = {name: (lambda line, index: line[index]) for name in ("feats", "deps", "misc")}
    parsed = conllu.parse(text, field_parsers=raw)
    found = []
    for sentence in parsed:
        words = [token for token in sentence if isinstance(token["id"], int)]
        record = {name: [word[name] for word in words] for name in CONLLU_FIELDS}
        found.append({**record, "sent_id": sentence.metadata["sent_id"], "text": sentence.metadata["text"]})
    return found


def without_syntax(text: str) -> str:
    """CoNLL-U as taggers write it: every word's HEAD, DEPREL and DEPS `_`."""
    lines = []
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) == 10 and fields[0].isdigit():
            fields[6] = fields[7] = fields[8] = "_"
        lines.append("\t".join(fields))
    return "\n".join(lines) + "\n"
