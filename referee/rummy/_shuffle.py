"""Seed → deck: the project's shuffle procedure (the one the first game documents), so that
audits work the same way for every game. Re-implementable in any language:

* ``stream(key)``: ``SHA-256(key || u64be(0)) || SHA-256(key || u64be(1)) || …``.
* ``uniform(n)``: the next 8 bytes as a u64 big-endian ``x``; if ``x >= 2**64 - (2**64 % n)``
  take the next 8 bytes, else ``x % n``.
* ``shuffle(items, key)``: Fisher–Yates from the end, ``j = uniform(i + 1)`` for ``i`` from
  ``len-1`` down to 1.
* ``label(name) = "gin-arena/" || name || "/v1\\0"``; a deal's deck is ``shuffle(DECK,
  SHA-256(label("deal") || seed || u32be(game) || u32be(deal)))``.
* RULES-RUMMY R3: the first dealer is ``uniform(n)`` on ``SHA-256(label("dealer") || seed ||
  u32be(game))``; R6: the k-th reshuffle of a deal's discard pile uses the key
  ``SHA-256(label("reshuffle") || deal_key || u32be(k))``.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator, Sequence
from typing import TypeVar

from ._cards import DECK, Card

T = TypeVar("T")

_U64 = 1 << 64


def _label(name: str) -> bytes:
    return b"gin-arena/" + name.encode() + b"/v1\x00"


def _stream(key: bytes) -> Iterator[int]:
    counter = 0
    while True:
        block = hashlib.sha256(key + struct.pack(">Q", counter)).digest()
        yield from struct.unpack(">4Q", block)
        counter += 1


def _uniform(words: Iterator[int], n: int) -> int:
    limit = _U64 - (_U64 % n)
    while True:
        x = next(words)
        if x < limit:
            return x % n


def shuffle(items: Sequence[T], key: bytes) -> list[T]:
    """A new list: ``items`` shuffled by Fisher–Yates driven by ``key`` (module doc)."""
    out = list(items)
    words = _stream(key)
    for i in range(len(out) - 1, 0, -1):
        j = _uniform(words, i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def deal_key(seed: bytes, game: int, deal: int) -> bytes:
    """The key of deal ``deal`` (from 1, void deals count) of game ``game`` (from 1)."""
    return hashlib.sha256(_label("deal") + seed + struct.pack(">II", game, deal)).digest()


def deck_for_deal(seed: bytes, game: int, deal: int) -> list[Card]:
    """The deck order of one deal of a match (R3's convention deals it)."""
    return shuffle(DECK, deal_key(seed, game, deal))


def deck_key(deck: Sequence[Card]) -> bytes:
    """The ``deal_key`` of a deal rebuilt from a deck order without a key: the 52 bytes of
    its card indexes (R6)."""
    return bytes(c.index for c in deck)


def reshuffle_key(key: bytes, k: int) -> bytes:
    """The key of the ``k``-th reshuffle (from 1) of a deal's discard pile (R6)."""
    return hashlib.sha256(_label("reshuffle") + key + struct.pack(">I", k)).digest()


def first_dealer(seed: bytes, game: int, num_seats: int) -> int:
    """The random first dealer of a game (R3)."""
    key = hashlib.sha256(_label("dealer") + seed + struct.pack(">I", game)).digest()
    return _uniform(_stream(key), num_seats)


def commitment(seed: bytes) -> bytes:
    """The public commitment to a secret seed: ``SHA-256(seed)``."""
    return hashlib.sha256(seed).digest()


def mix_seed(seed: bytes, nonces: Sequence[bytes]) -> bytes:
    """The seats' nonces (in seat order) mixed into the operator's seed: ``SHA-256(label("mix")
    || seed || for each nonce: u32be(len) || nonce)``."""
    h = hashlib.sha256(_label("mix") + seed)
    for n in nonces:
        h.update(struct.pack(">I", len(n)) + n)
    return h.digest()
