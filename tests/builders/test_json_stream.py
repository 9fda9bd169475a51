"""builders/json_stream.py: a JSON object decoded value by value, its chosen lists handed over
element by element, gives what json.loads gives, and fails where and as json.loads does."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from tfrecord_builder.builders.json_stream import parse, streamed
from tfrecord_builder.errors import DataError

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                    max_leaves=8)


@settings(max_examples=80, deadline=None)
@given(document=st.dictionaries(st.text(), JSON, max_size=4), streamed_lists=st.lists(st.lists(JSON, max_size=4),
                                                                                       min_size=2, max_size=2),
       indent=st.sampled_from([None, 0, 2, "\t"]))
def test_what_is_handed_over_and_what_is_kept_is_what_json_loads_gives(document, streamed_lists, indent):
    document = {**document, "images": streamed_lists[0], "annotations": streamed_lists[1]}
    text = json.dumps(document, indent=indent)
    handed: dict[str, list] = {"images": [], "annotations": []}
    rest = streamed(text, {key: (lambda key: lambda position, value: handed[key].append((position, value)))(key)
                           for key in handed})
    loaded = json.loads(text)
    assert handed == {key: list(enumerate(loaded[key])) for key in handed}
    assert rest == {**loaded, "images": None, "annotations": None}


def test_a_named_key_whose_value_is_no_list_is_kept_as_it_is():
    handed: list = []
    assert streamed('{"images": {"a": 1}, "x": [1]}', {"images": lambda *item: handed.append(item)}) == \
        {"images": {"a": 1}, "x": [1]}
    assert handed == []


def test_each_element_is_handed_over_before_the_next_is_decoded():
    """A fault after the second element: the first two were handed over already."""
    handed: list = []
    with pytest.raises(json.JSONDecodeError):
        streamed('{"images": [{"id": 1}, {"id": 2}, {"id": 3,}]}', {"images": lambda *item: handed.append(item)})
    assert handed == [(0, {"id": 1}), (1, {"id": 2})]


@pytest.mark.parametrize("text", [
    '{"a": 1,}', '{"a" 1}', '{"a": [1, 2,]}', '{"images": [1,]}', '{"images": [1 2]}', '{"images": [{"x": 1}',
    '{"a": 1} x', '{"a": tru}', "{", '{"a"', '{"a":', '{"a": 1', "{1: 2}", '{\n  "images": [\n    1,\n    ]\n}',
])
def test_malformed_json_fails_where_and_as_json_loads_does(text):
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as raised:
        streamed(text, {"images": lambda *item: None})
    assert (raised.value.msg, raised.value.lineno, raised.value.colno) == \
        (expected.value.msg, expected.value.lineno, expected.value.colno)


@pytest.mark.parametrize("text", ["", "  ", "[1]", '"x"'])
def test_a_document_that_is_not_an_object_is_refused(text):
    with pytest.raises(json.JSONDecodeError) as raised:
        streamed(text, {})
    assert raised.value.msg == "Expecting a JSON object"


def test_a_file_s_faults_are_one_line_naming_it(tmp_path):
    path = tmp_path / "instances.json"
    path.write_text('{"images": [\n  {"id": 1},\n  {"id": 2,}\n]}', encoding="utf-8")
    with pytest.raises(DataError) as raised:
        parse(str(path), {"images": lambda *item: None}, "COCO JSON")
    assert str(raised.value) == f"{path}, line 3: malformed JSON: Expecting property name enclosed in double quotes " \
                                "(column 12)"
    path.write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(DataError) as raised:
        parse(str(path), {}, "COCO JSON")
    assert str(raised.value) == f"{path}: not valid UTF-8 text (invalid continuation byte at byte 13)"
    with pytest.raises(DataError) as raised:
        parse(str(tmp_path / "missing.json"), {}, "COCO JSON")
    assert str(raised.value) == f"{tmp_path / 'missing.json'}: can't read the COCO JSON (No such file or directory)"
