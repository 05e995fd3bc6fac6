"""Deterministic shuffles: every deck order comes from a seed by a documented procedure, the
same for every game. Meant to be re-implemented in any language:

* ``stream(key)``: the bytes ``SHA-256(key || 0) || SHA-256(key || 1) || …`` where the counter
  is an unsigned 64-bit big-endian integer.
* ``uniform(n)``: take the next 8 bytes of the stream as an unsigned 64-bit big-endian integer
  ``x``; if ``x >= 2**64 - (2**64 % n)`` discard it and take the next 8 bytes; else ``x % n``.
* ``shuffle(items, key)``: Fisher–Yates from the end — for ``i`` from ``len-1`` down to ``1``,
  ``j = uniform(i + 1)``, swap ``items[i]`` and ``items[j]``.
* ``label(name) = "gin-arena/" || name || "/v1\\0"``; a deal's deck is ``shuffle(the 52 cards
  in index order As..Ks Ah..Kh Ad..Kd Ac..Kc, deal_key(seed, game, deal))``.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator, Sequence
from typing import Final, TypeVar

T = TypeVar("T")

_U64: Final = 1 << 64
_TWO32: Final = 1 << 32
_ONES32: Final = (1 << 32) - 1
# Final: compiled by mypyc these are C statics (other module globals are dictionary lookups).
_SHA256: Final = hashlib.sha256
_PACK_COUNTER: Final = struct.Struct(">Q").pack
_PACK_GAME_DEAL: Final = struct.Struct(">II").pack


def label(name: str) -> bytes:
    """The domain-separation prefix of a key: ``"gin-arena/" || name || "/v1\\0"``."""
    return b"gin-arena/" + name.encode() + b"/v1\x00"


_DEAL_LABEL: Final = label("deal")


def commitment(seed: bytes) -> bytes:
    """The public commitment to a secret seed: ``SHA-256(seed)``."""
    return hashlib.sha256(seed).digest()


def _stream(key: bytes) -> Iterator[int]:
    counter = 0
    while True:
        block = hashlib.sha256(key + struct.pack(">Q", counter)).digest()
        yield from struct.unpack(">4Q", block)
        counter += 1


class Uniform:
    """Unbiased integers in ``[0, n)`` drawn from the key's SHA-256 stream: ``uniform(n)``."""

    __slots__ = ("_words",)

    def __init__(self, key: bytes) -> None:
        self._words = _stream(key)

    def __call__(self, n: int) -> int:
        if not 1 <= n <= _U64:
            raise ValueError(f"uniform(n) needs n >= 1 and n <= 2**64; got {n}")
        limit = _U64 - (_U64 % n)
        while True:
            x = next(self._words)
            if x < limit:
                return x % n


def _halves(key: bytes, first: int, blocks: int) -> list[int]:
    """Blocks ``first`` to ``first + blocks - 1`` of ``stream(key)`` (four words each), every word
    as its two 32-bit halves, high first."""
    blob = b"".join([_SHA256(key + _PACK_COUNTER(c)).digest() for c in range(first, first + blocks)])
    return list(struct.unpack(f">{8 * blocks}I", blob))


def shuffle(items: Sequence[T], key: bytes) -> list[T]:
    """A new list: ``items`` shuffled by Fisher–Yates driven by ``key`` (see module doc).

    Each word ``x = hi * 2**32 + lo`` is used as its halves, which stay small integers (native
    ones, compiled): ``x % m == (hi * c + lo) % m`` with ``c = 2**32 % m``, and ``x`` is rejected
    (``x >= 2**64 - 2**64 % m``, where ``2**64 % m == c * c % m``) only when ``hi`` is all ones and
    ``lo >= 2**32 - c * c % m``, as ``m`` (at most the number of items) is below ``2**32``."""
    out = list(items)
    n = len(out)
    halves = _halves(key, 0, (n + 3) // 4)  # at least n words: one spare
    h = 0
    for i in range(n - 1, 0, -1):
        m = i + 1
        c = _TWO32 % m
        hi = halves[h]
        lo = halves[h + 1]
        h += 2
        while hi == _ONES32 and lo >= _TWO32 - c * c % m:  # rejected: the next word (about never)
            halves.extend(_halves(key, len(halves) // 8, 1))  # one more block keeps enough for the rest
            hi = halves[h]
            lo = halves[h + 1]
            h += 2
        j = (hi * c + lo) % m
        out[i], out[j] = out[j], out[i]
    return out


def deal_key(seed: bytes, game: int, deal: int) -> bytes:
    """The key of deal ``deal`` (1-based, void deals count) of game ``game`` (1-based):
    ``SHA-256(label("deal") || seed || u32be(game) || u32be(deal))``."""
    return _SHA256(_DEAL_LABEL + seed + _PACK_GAME_DEAL(game, deal)).digest()


def mix_seed(seed: bytes, nonces: Sequence[bytes]) -> bytes:
    """Mix the seats' nonces (in seat order) into the operator's seed, so that no single party
    chooses the cards: ``SHA-256(label("mix") || seed || for each nonce: u32be(len) || nonce)``."""
    h = hashlib.sha256(label("mix") + seed)
    for n in nonces:
        h.update(struct.pack(">I", len(n)) + n)
    return h.digest()


def first_dealer(seed: bytes, game: int, num_seats: int = 2) -> int:
    """The random first dealer of a game: ``uniform(num_seats)`` on the key
    ``SHA-256(label("dealer") || seed || u32be(game))``."""
    key = hashlib.sha256(label("dealer") + seed + struct.pack(">I", game)).digest()
    return Uniform(key)(num_seats)
