"""msgpack written the ways the protocol's encoder never writes it, for the tests of canonical
decoding: each form below reads back (with msgpack's own reader) as the value a canonical
encoding holds, from other bytes.

    pack(Pairs([("a", 1), ("a", 2)]))   a map with a key twice (msgpack keeps the last)
    pack(Wide(3))                        an integer in 9 bytes, not 1
    pack(LongHeader("abc"))              a str, bin, array or map with a 2-byte length header
    pack(AsFloat(3))                     an integer written as a float

Anything else is written as msgpack.packb writes it; dicts and lists are walked, so that a
loose form can sit anywhere inside a message.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import msgpack


class Pairs(list[tuple[Any, Any]]):
    """A map given as its (key, value) pairs, written in this order, repeats and all."""


class Wide(int):
    """An integer written as an int64 (0xd3 and 8 bytes), however small it is."""


@dataclass(frozen=True)
class LongHeader:
    """A str, bytes, list or dict written with a 2-byte length (str16, bin16, array16, map16)."""

    value: Any


@dataclass(frozen=True)
class AsFloat:
    """An integer written as a float64."""

    value: int


def pack(value: Any) -> bytes:
    if isinstance(value, Wide):
        return b"\xd3" + struct.pack(">q", value)
    if isinstance(value, AsFloat):
        return b"\xcb" + struct.pack(">d", value.value)
    if isinstance(value, LongHeader):
        return _long(value.value)
    if isinstance(value, dict):
        value = Pairs(value.items())
    if isinstance(value, Pairs):
        return _header(len(value), 0x80, b"\xde", b"\xdf") + _items(x for kv in value for x in kv)
    if isinstance(value, list | tuple):
        return _header(len(value), 0x90, b"\xdc", b"\xdd") + _items(value)
    packed: bytes = msgpack.packb(value, use_bin_type=True)
    return packed


def _items(values: Any) -> bytes:
    return b"".join(pack(v) for v in values)


def _header(count: int, fix: int, two: bytes, four: bytes) -> bytes:
    """The shortest header of a map or array of `count` items, as msgpack writes it."""
    if count < 16:
        return bytes([fix | count])
    return two + struct.pack(">H", count) if count < 2**16 else four + struct.pack(">I", count)


def _long(value: Any) -> bytes:
    if isinstance(value, str):
        data = value.encode()
        return b"\xda" + struct.pack(">H", len(data)) + data
    if isinstance(value, bytes):
        return b"\xc5" + struct.pack(">H", len(value)) + value
    if isinstance(value, dict):
        pairs = [x for kv in value.items() for x in kv]
        return b"\xde" + struct.pack(">H", len(value)) + _items(pairs)
    return b"\xdc" + struct.pack(">H", len(value)) + _items(value)
