"""The records of a shard as columns: their protobuf structure read with NumPy, all records at once.

Our encoder writes one canonical layout (example.py, sequence_example.py): the record keys in
map order, each with one list of the kind its feature stores, numbers packed. The records of one
spec therefore share their field sequence, and reading them in lock step (the same field of every
record at once) takes a few NumPy calls per field instead of Python per value. A record that
leaves the layout anywhere (another key, key order or list kind, a field that doesn't fit) is set
aside as irregular, never guessed at: the per-record reader then says what, if anything, is
wrong with it.

    Example: 1 Features { 1 entry { 1 key, 2 Feature { LIST { 1 values } } } ... }
    SequenceExample: 1 context (a Features, left out if empty), 2 FeatureLists { 1 entry
        { 1 key, 2 FeatureList { 1 Feature per step } } ... }
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from ..features.values import ListKind, StoredColumn, offsets_of
from .example import key_field, map_order
from .wire import LIST_TAG

_FIELD_1, _FIELD_2 = 0x0A, 0x12  # length-delimited fields 1 and 2: every message field here is one of them
_LENGTH_BYTES = 5  # a length varint our encoder writes (under 2^35); longer ones are set aside
_OUT_OF_REACH = 1 << 62  # the length given to one that isn't: past every field's limit


@dataclass(frozen=True)
class Layout:
    """What our encoder writes for a spec: each record key with its list kind, keys in map order.

    `context` holds an Example's features (a SequenceExample's context); `sequence` is None for
    an Example, else the SequenceExample's feature lists.
    """

    context: tuple[tuple[str, ListKind], ...]
    sequence: tuple[tuple[str, ListKind], ...] | None = None

    @classmethod
    def of(cls, context: Mapping[str, ListKind], sequence: Mapping[str, ListKind] | None = None) -> "Layout":
        def ordered(kinds: Mapping[str, ListKind]) -> tuple[tuple[str, ListKind], ...]:
            return tuple(sorted(kinds.items(), key=lambda item: map_order(item[0])))

        return cls(ordered(context), None if sequence is None else ordered(sequence))


@dataclass
class RecordColumns:
    """A block's records read as columns, and the records that left the layout."""

    regular: np.ndarray  # indices of the records in the columns, in order
    irregular: np.ndarray  # indices of the records to read one at a time
    context: dict[str, StoredColumn]  # by record key; rows: the regular records
    lists: dict[str, StoredColumn]  # by record key; rows: the regular records' steps
    # by bytes record key, beside `context` and `lists`: where each value starts in the block (a
    # bytes column's values are the lengths), so a reader can take the bytes themselves
    context_items: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    list_items: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)


def read_columns(data: np.ndarray, starts: np.ndarray, ends: np.ndarray, layout: Layout) -> RecordColumns:
    """Reads the records `data[starts[i]:ends[i]]` in lock step as `layout` says they are."""
    keys = [key for key, _ in layout.context + (layout.sequence or ())]
    block = _Bytes(data, max((len(key_field(key)) for key in keys), default=0))
    irregular = np.zeros(len(starts), dtype=bool)
    records = _Cursor(block, starts.astype(np.int64), np.arange(len(starts)), irregular)
    context: dict[str, _Located] = {}
    lists: dict[str, _Located] = {}
    if layout.sequence is None:
        context = _features(records, layout.context, records.field(_FIELD_1, ends, fills=True))
    else:
        if layout.context:
            context = _features(records, layout.context, records.field(_FIELD_1, ends))
        lists = _feature_lists(records, layout.sequence, records.field(_FIELD_2, ends, fills=True))
    # every column is decoded before any is cut down: a malformed value sets its record aside too
    decoded = [{key: located.decode(block, irregular) for key, located in group.items()} for group in (context, lists)]
    columns = [{key: column for key, (column, _) in group.items()} for group in decoded]
    items = [{key: starts for key, (_, starts) in group.items() if starts is not None} for group in decoded]
    kept = ~irregular
    if not kept.all():  # the records set aside leave the columns: rows, steps and values
        for group, found, starts in zip((context, lists), columns, items):
            for key, column in found.items():
                rows = kept[group[key].owner]
                if key in starts:
                    starts[key] = starts[key][np.repeat(rows, column.counts)]
                found[key] = column.select(rows, kept)
    return RecordColumns(np.flatnonzero(kept), np.flatnonzero(irregular), *columns, *items)


class _Bytes:
    """A block's bytes, followed by zeros, with the little-endian 8-byte word that starts at
    each position: one gather reads a field's tag and length (or a key's next 8 bytes)."""

    def __init__(self, data: np.ndarray, widest: int):
        # reads run up to a key's width (or a word) past a position: the zeros keep them in bounds
        self.data = np.concatenate([data, np.zeros(widest + 16, np.uint8)])
        self.end = len(data)  # where a row that left the layout is parked: every read there is harmless
        self.words = np.ndarray((len(self.data) - 7,), dtype="<u8", buffer=self.data, strides=(1,))

    def header(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """At each position a field's header, tag then length: (the tag, where the content starts,
        where it ends). A length that is no varint our encoder writes puts the end out of reach."""
        tag = self.data[pos]
        length = self.data[pos + 1].astype(np.int64)
        size = np.ones(len(pos), dtype=np.int64)
        long = np.flatnonzero(length >= 0x80)
        if len(long):  # a length of 128 or more: decoded from the word that holds it
            length[long], size[long], fits = _length(self.words[pos[long] + 1])
            length[long[~fits]] = _OUT_OF_REACH
        start = pos + 1 + size
        return tag, start, start + length

    def matches(self, pos: np.ndarray, expected: bytes) -> np.ndarray:
        """Whether the bytes at each position are `expected`, compared a word at a time."""
        same = np.ones(len(pos), dtype=bool)
        for offset in range(0, len(expected), 8):
            chunk = expected[offset : offset + 8]
            mask = np.uint64((1 << (8 * len(chunk))) - 1)
            same &= (self.words[pos + offset] & mask) == np.uint64(int.from_bytes(chunk, "little"))
        return same


class _Cursor:
    """Rows read in lock step (records, or the steps of feature lists): each row's position in
    the block and the record it belongs to. A row that leaves the layout marks its record
    irregular and is parked at the block's end, on the zeros."""

    def __init__(self, block: _Bytes, pos: np.ndarray, record: np.ndarray, irregular: np.ndarray):
        self.block = block
        self.pos = pos
        self.record = record
        self.irregular = irregular
        self.off = np.zeros(len(pos), dtype=bool)

    def fail(self, wrong: np.ndarray) -> None:
        if wrong.any():
            self.irregular[self.record[wrong]] = True
            self.off |= wrong
            self.pos[wrong] = self.block.end

    def field(self, tag: int, limit: np.ndarray, fills: bool = False) -> np.ndarray:
        """Reads the header of a length-delimited field `tag` (within `limit`, or filling the
        bytes up to it exactly), moves into its content and returns where the field ends."""
        found, self.pos, end = self.block.header(self.pos)
        self.fail((found != tag) | ((end != limit) if fills else (end > limit)))
        return self.parked_at(end)

    def optional_field(self, tag: int, limit: np.ndarray) -> None:
        """A field `tag` filling the bytes up to `limit`, or nothing there (protobuf leaves an
        empty packed list out); moves into its content."""
        present = self.pos < limit
        if present.all():
            self.field(tag, limit, fills=True)
            return
        found, start, end = self.block.header(self.pos)
        self.fail(present & ((found != tag) | (end != limit)))
        self.pos = self.parked_at(np.where(present, start, limit))

    def expect(self, expected: bytes, limit: np.ndarray) -> None:
        """The bytes `expected` come next, within `limit`."""
        ok = self.block.matches(self.pos, expected) & (self.pos + len(expected) <= limit)
        self.pos = self.pos + len(expected)
        self.fail(~ok)

    def to(self, end: np.ndarray) -> None:
        """Moves past the field ending at `end`."""
        self.pos = self.parked_at(end)

    def at(self, end: np.ndarray) -> None:
        """The message ends here: nothing follows the fields read."""
        self.fail(self.pos != end)

    def parked_at(self, positions: np.ndarray) -> np.ndarray:
        return np.where(self.off, self.block.end, positions)


@dataclass
class _Located:
    """A record key's lists, one per row, found in the block but not yet decoded."""

    kind: ListKind
    starts: np.ndarray  # each row's packed numbers, or its bytes list's items, from here ...
    ends: np.ndarray  # ... to here
    owner: np.ndarray  # each row's record
    steps: np.ndarray | None = None  # per record, for a feature list

    def decode(self, block: _Bytes, irregular: np.ndarray) -> tuple[StoredColumn, np.ndarray | None]:
        """The column, and for a bytes list where each value starts in the block."""
        if self.kind == "bytes":  # a bytes list's items: its values are their lengths
            rows, item_starts, item_ends = _repeated(block, self.starts, self.ends, self.owner, irregular)
            counts = np.bincount(rows, minlength=len(self.starts)).astype(np.int64)
            return StoredColumn(self.kind, counts, item_ends - item_starts, self.steps), item_starts
        counts, values = _DECODERS[self.kind](block, self.starts, self.ends, self.owner, irregular)
        return StoredColumn(self.kind, counts, values, self.steps), None


def _features(cursor: _Cursor, keys: tuple[tuple[str, ListKind], ...], end: np.ndarray) -> dict[str, _Located]:
    """A Features message up to `end`: one map entry per key, in order, and nothing else."""
    found = {}
    for key, kind in keys:
        entry_end = cursor.field(_FIELD_1, end)
        cursor.expect(key_field(key), entry_end)
        cursor.field(_FIELD_2, entry_end, fills=True)  # the entry's value: a Feature
        found[key] = _feature(cursor, kind, entry_end)
        cursor.to(entry_end)
    cursor.at(end)
    return found


def _feature_lists(cursor: _Cursor, keys: tuple[tuple[str, ListKind], ...], end: np.ndarray) -> dict[str, _Located]:
    """A FeatureLists message up to `end`: one map entry per key, each a Feature per step."""
    found = {}
    for key, kind in keys:
        entry_end = cursor.field(_FIELD_1, end)
        cursor.expect(key_field(key), entry_end)
        list_end = cursor.field(_FIELD_2, entry_end, fills=True)  # the entry's value: a FeatureList
        row, step_starts, step_ends = _repeated(cursor.block, cursor.pos, list_end, cursor.record, cursor.irregular)
        steps = _Cursor(cursor.block, step_starts, cursor.record[row], cursor.irregular)
        located = _feature(steps, kind, step_ends)
        found[key] = dataclasses.replace(located, steps=np.bincount(row, minlength=len(cursor.pos)))
        cursor.to(entry_end)
    cursor.at(end)
    return found


def _feature(cursor: _Cursor, kind: ListKind, end: np.ndarray) -> _Located:
    """A Feature filling the bytes up to `end` with a list of `kind`."""
    list_end = cursor.field(LIST_TAG[kind], end, fills=True)
    if kind != "bytes":
        cursor.optional_field(_FIELD_1, list_end)  # the packed values
    return _Located(kind, cursor.pos.copy(), cursor.parked_at(list_end), cursor.record)


def _repeated(block: _Bytes, starts: np.ndarray, ends: np.ndarray, owner: np.ndarray,
              irregular: np.ndarray, tag: int = _FIELD_1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every field `tag` between starts[i] and ends[i] (a bytes list's items, a feature list's
    steps): the region each is in and where its content starts and ends, in region order.
    A region holding anything else sets its record (`owner[i]`) aside."""
    region = np.flatnonzero(starts < ends)
    pos, limit = starts[region], ends[region]
    found = []
    while len(region):  # the n-th field of every region at once: as many rounds as the most fields
        found_tag, start, end = block.header(pos)
        ok = (found_tag == tag) & (end <= limit)
        if not ok.all():
            irregular[owner[region[~ok]]] = True
            region, start, end, limit = region[ok], start[ok], end[ok], limit[ok]
        found.append((region, start, end))
        more = end < limit
        region, pos, limit = region[more], end[more], limit[more]
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    regions, item_starts, item_ends = (np.concatenate(parts) for parts in zip(*found))
    if len(found) > 1:  # round-major: the regions' own order is stable within each round
        order = np.argsort(regions, kind="stable")
        regions, item_starts, item_ends = regions[order], item_starts[order], item_ends[order]
    return regions, item_starts, item_ends


# ---- values -------------------------------------------------------------------------------------

Decoder = Callable[[_Bytes, np.ndarray, np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def _int64s(block: _Bytes, starts: np.ndarray, ends: np.ndarray, owner: np.ndarray,
            irregular: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Packed varints: (values per row, the values as int64, two's complement as protobuf has them)."""
    lengths = ends - starts
    if len(lengths) and (lengths == 1).all():  # one value under 128 a row: its byte is the value
        values = (block.words[starts] & np.uint64(0xFF)).astype(np.int64)
        cut = values >= 0x80
        if not cut.any():
            return np.ones(len(lengths), dtype=np.int64), values
    packed = _gather(block.data, starts, lengths)
    last = packed < 0x80  # a varint's last byte
    offsets = offsets_of(lengths)
    # a list must end with a varint's last byte, or its varint would run on into the next list's
    cut = (lengths > 0) & ~last[np.maximum(offsets[1:] - 1, 0)] if len(packed) else np.zeros(len(lengths), bool)
    if cut.any():
        irregular[owner[cut]] = True
        return _int64s(block, starts, np.where(cut, starts, ends), owner, irregular)
    seen = offsets_of(last)
    counts = seen[offsets[1:]] - seen[offsets[:-1]]
    if last.all():  # every value under 128: its byte is its value
        return counts, packed.astype(np.int64)
    stops = np.flatnonzero(last)
    begins = np.concatenate([[0], stops[:-1] + 1])
    sizes = stops - begins + 1
    # over 10 bytes, or a 10th byte past bit 63: the per-record reader doesn't fit these in 64 bits
    overlong = (sizes > 10) | ((sizes == 10) & (packed[stops] > 1))
    if overlong.any():
        irregular[owner[np.repeat(np.arange(len(counts)), counts)[overlong]]] = True
        sizes = np.minimum(sizes, 10)
    width = int(sizes.max())
    steps = np.arange(width)
    groups = packed[np.minimum(begins[:, None] + steps, len(packed) - 1)] & np.uint8(0x7F)
    groups = np.where(steps < sizes[:, None], groups, 0).astype(np.uint64)
    values = np.bitwise_or.reduce(groups << (steps.astype(np.uint64) * np.uint64(7)), axis=1)
    return counts, values.view(np.int64)


def _floats(block: _Bytes, starts: np.ndarray, ends: np.ndarray, owner: np.ndarray,
            irregular: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Packed little-endian float32s."""
    lengths = ends - starts
    if len(lengths) and (lengths == 4).all():  # one float a row: the low half of its word
        words = (block.words[starts] & np.uint64(0xFFFFFFFF)).astype("<u4")
        return np.ones(len(lengths), dtype=np.int64), words.view("<f4")
    ragged = lengths % 4 != 0
    if ragged.any():
        irregular[owner[ragged]] = True
        lengths = np.where(ragged, 0, lengths)
    return lengths // 4, _gather(block.data, starts, lengths).view("<f4")


_DECODERS: dict[str, Decoder] = {"int64": _int64s, "float": _floats}


# ---- helpers ------------------------------------------------------------------------------------

def _length(word: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The varint in the low bytes of each word: (its value, its bytes, whether it is a length
    our encoder could have written: at most five bytes)."""
    value = word & np.uint64(0x7F)
    size = np.ones(len(word), dtype=np.int64)
    more = (word & np.uint64(0x80)) != 0
    if more.any():
        for index in range(1, _LENGTH_BYTES):
            byte = word >> np.uint64(8 * index)
            value |= np.where(more, (byte & np.uint64(0x7F)) << np.uint64(7 * index), np.uint64(0))
            size += more
            more &= (byte & np.uint64(0x80)) != 0
    return value.astype(np.int64), size, ~more


def _gather(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The bytes of every region, one after another."""
    if not len(lengths):
        return np.zeros(0, dtype=np.uint8)
    width = int(lengths[0])
    if (lengths == width).all():  # one 2-D gather, no index per byte to build
        return data[starts[:, None] + np.arange(width)].reshape(-1)
    offsets = offsets_of(lengths)
    return data[np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])]
