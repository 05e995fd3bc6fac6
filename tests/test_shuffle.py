"""The shuffle (README "The shuffle", ``referee/cardcore/_shuffle.py``): published vectors in
``tests/vectors/shuffle.jsonl``, checked against the implementation AND against a second
implementation written here from the documented procedure with nothing but ``hashlib`` and
``struct`` (it imports none of the module's helpers).

The vectors were made with the implementation (``python tests/test_shuffle.py`` prints them);
they are the published contract: a change of any of them is a change of every deal of every
recorded match. Line kinds:

* ``deal``: ``seed``, ``game``, ``deal`` → ``deal_key`` and ``deck`` (``deck_for_deal``);
* ``shuffle``: ``key`` → ``deck`` (``shuffle`` of the 52 cards in index order);
* ``first_dealer``: ``seed``, ``game``, ``num_seats`` → ``dealer``;
* ``mix``: ``seed``, ``nonces`` → ``mixed`` (``mix_seed``);
* ``commitment``: ``seed`` → ``commitment``;
* ``uniform``: ``key``, ``n`` → ``values`` (the first draws of ``uniform(n)``, as decimal strings
  since they exceed 2**53; one ``n`` rejects about half of the words);
* ``reshuffle``: ``deal_key`` → ``reshuffle_key`` (the discard pile's reshuffle, RULES §8).

Byte strings are lowercase hex; cards are card text (RULES §1).
"""

from __future__ import annotations

import hashlib
import json
import random
import struct
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

from referee.cardcore import Uniform as _Uniform
from referee.gin import (
    DECK,
    Deal,
    Discard,
    DrawStock,
    Pass,
    RuleSet,
    commitment,
    deal_key,
    deck_for_deal,
    first_dealer,
    mix_seed,
    shuffle,
)
from referee.gin._shuffle import reshuffle_key

T = TypeVar("T")
VECTORS = Path(__file__).resolve().parent / "vectors" / "shuffle.jsonl"


# ---------------------------------------------------------------------------------------
# The second implementation, from the documentation only.
# ---------------------------------------------------------------------------------------

REF_DECK = [r + s for s in "shdc" for r in "A23456789TJQK"]
"""The 52 card texts in index order: As..Ks Ah..Kh Ad..Kd Ac..Kc."""
TWO_64 = 2**64


class RefUniform:
    """``uniform(n)`` on the stream ``SHA-256(key || u64be(0)) || SHA-256(key || u64be(1)) || …``,
    read 8 bytes at a time as unsigned big-endian integers, with rejection above the limit."""

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.buffer = b""
        self.counter = 0
        self.rejections = 0
        self.words_read = 0

    def word(self) -> int:
        if not self.buffer:
            self.buffer = hashlib.sha256(self.key + struct.pack(">Q", self.counter)).digest()
            self.counter += 1
        x: int = struct.unpack(">Q", self.buffer[:8])[0]
        self.buffer = self.buffer[8:]
        self.words_read += 1
        return x

    def __call__(self, n: int) -> int:
        limit = TWO_64 - TWO_64 % n
        while True:
            x = self.word()
            if x < limit:
                return x % n
            self.rejections += 1


def ref_shuffle(items: Sequence[T], key: bytes) -> list[T]:
    """Fisher–Yates from the end: for i = len-1 down to 1, j = uniform(i + 1), swap."""
    out = list(items)
    uniform = RefUniform(key)
    for i in range(len(out) - 1, 0, -1):
        j = uniform(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def label(name: str) -> bytes:
    return b"gin-arena/" + name.encode("ascii") + b"/v1\x00"


def ref_deal_key(seed: bytes, game: int, deal: int) -> bytes:
    return hashlib.sha256(label("deal") + seed + struct.pack(">I", game) + struct.pack(">I", deal)).digest()


def ref_deck(seed: bytes, game: int, deal: int) -> list[str]:
    return ref_shuffle(REF_DECK, ref_deal_key(seed, game, deal))


def ref_first_dealer(seed: bytes, game: int, num_seats: int = 2) -> int:
    return RefUniform(hashlib.sha256(label("dealer") + seed + struct.pack(">I", game)).digest())(num_seats)


def ref_mix(seed: bytes, nonces: Sequence[bytes]) -> bytes:
    data = label("mix") + seed + b"".join(struct.pack(">I", len(n)) + n for n in nonces)
    return hashlib.sha256(data).digest()


def ref_commitment(seed: bytes) -> bytes:
    return hashlib.sha256(seed).digest()


def ref_reshuffle_key(key: bytes) -> bytes:
    return hashlib.sha256(label("reshuffle") + key).digest()


def texts(cards: Sequence[object]) -> list[str]:
    return [str(c) for c in cards]


def load() -> list[dict[str, Any]]:
    with VECTORS.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def by_kind(kind: str) -> list[dict[str, Any]]:
    return [v for v in load() if v["kind"] == kind]


# ---------------------------------------------------------------------------------------
# The vectors
# ---------------------------------------------------------------------------------------


def test_vector_file_has_every_kind() -> None:
    kinds = [v["kind"] for v in load()]
    assert set(kinds) == {"deal", "shuffle", "first_dealer", "mix", "commitment", "uniform", "reshuffle"}
    assert len(kinds) >= 12


@pytest.mark.parametrize("v", by_kind("deal"), ids=lambda v: f"{v['seed'][:8]}-g{v['game']}-d{v['deal']}")
def test_deal_vectors(v: dict[str, Any]) -> None:
    seed = bytes.fromhex(v["seed"])
    assert ref_deal_key(seed, v["game"], v["deal"]).hex() == v["deal_key"]
    assert ref_deck(seed, v["game"], v["deal"]) == v["deck"]
    assert deal_key(seed, v["game"], v["deal"]).hex() == v["deal_key"]
    assert texts(deck_for_deal(seed, v["game"], v["deal"])) == v["deck"]
    assert sorted(v["deck"]) == sorted(REF_DECK)


@pytest.mark.parametrize("v", by_kind("shuffle"), ids=lambda v: v["key"][:8])
def test_shuffle_vectors(v: dict[str, Any]) -> None:
    key = bytes.fromhex(v["key"])
    assert ref_shuffle(REF_DECK, key) == v["deck"]
    assert texts(shuffle(DECK, key)) == v["deck"]


@pytest.mark.parametrize("v", by_kind("first_dealer"), ids=lambda v: f"{v['seed'][:8]}-g{v['game']}")
def test_first_dealer_vectors(v: dict[str, Any]) -> None:
    seed = bytes.fromhex(v["seed"])
    assert ref_first_dealer(seed, v["game"], v["num_seats"]) == v["dealer"]
    assert first_dealer(seed, v["game"], v["num_seats"]) == v["dealer"]


@pytest.mark.parametrize("v", by_kind("mix"), ids=lambda v: v["seed"][:8])
def test_mix_vectors(v: dict[str, Any]) -> None:
    seed = bytes.fromhex(v["seed"])
    nonces = [bytes.fromhex(n) for n in v["nonces"]]
    assert ref_mix(seed, nonces).hex() == v["mixed"]
    assert mix_seed(seed, nonces).hex() == v["mixed"]


@pytest.mark.parametrize("v", by_kind("commitment"), ids=lambda v: v["seed"][:8])
def test_commitment_vectors(v: dict[str, Any]) -> None:
    seed = bytes.fromhex(v["seed"])
    assert ref_commitment(seed).hex() == v["commitment"]
    assert commitment(seed).hex() == v["commitment"]


@pytest.mark.parametrize("v", by_kind("uniform"), ids=lambda v: str(v["n"]))
def test_uniform_vectors(v: dict[str, Any]) -> None:
    key = bytes.fromhex(v["key"])
    n = int(v["n"])
    values = [int(x) for x in v["values"]]
    ref, impl = RefUniform(key), _Uniform(key)
    assert [ref(n) for _ in values] == values
    assert [impl(n) for _ in values] == values
    if n > 2**63:
        assert ref.rejections >= 1, "this vector goes through the rejection path"


@pytest.mark.parametrize("v", by_kind("reshuffle"), ids=lambda v: v["deal_key"][:8])
def test_reshuffle_key_vectors(v: dict[str, Any]) -> None:
    key = bytes.fromhex(v["deal_key"])
    assert ref_reshuffle_key(key).hex() == v["reshuffle_key"]
    assert reshuffle_key(key).hex() == v["reshuffle_key"]


# ---------------------------------------------------------------------------------------
# The implementation against the second implementation, beyond the vectors
# ---------------------------------------------------------------------------------------


def test_implementation_matches_the_reference_on_many_seeds() -> None:
    rng = random.Random(2024)
    for _ in range(150):
        seed = rng.randbytes(rng.randint(1, 40))
        game, deal = rng.randint(1, 9), rng.randint(1, 30)
        assert deal_key(seed, game, deal) == ref_deal_key(seed, game, deal)
        assert texts(deck_for_deal(seed, game, deal)) == ref_deck(seed, game, deal)
        assert first_dealer(seed, game) == ref_first_dealer(seed, game)
        assert first_dealer(seed, game, 5) == ref_first_dealer(seed, game, 5)
        nonces = [rng.randbytes(rng.randint(0, 20)) for _ in range(rng.randint(0, 3))]
        assert mix_seed(seed, nonces) == ref_mix(seed, nonces)
        assert commitment(seed) == ref_commitment(seed)
        items = list(range(rng.randint(0, 70)))
        assert shuffle(items, seed) == ref_shuffle(items, seed)


def test_shuffle_does_not_change_its_input_and_handles_short_lists() -> None:
    items = list(range(10))
    out = shuffle(items, b"k")
    assert items == list(range(10)) and sorted(out) == items
    assert shuffle([], b"k") == [] and shuffle(["x"], b"k") == ["x"]
    assert shuffle((1, 2), b"k") in ([1, 2], [2, 1])


def test_every_deck_is_a_permutation_of_the_52_cards() -> None:
    for game in range(1, 4):
        for deal in range(1, 40):
            deck = deck_for_deal(b"permutation", game, deal)
            assert len(deck) == 52 and set(deck) == set(DECK)


def test_decks_differ_by_seed_game_and_deal() -> None:
    decks = {tuple(deck_for_deal(seed, g, d)) for seed in (b"a", b"b") for g in (1, 2) for d in (1, 2, 3)}
    assert len(decks) == 12
    keys = {deal_key(b"a", 1, 2), deal_key(b"a", 2, 1), deal_key(b"a\x00\x00\x00\x01", 1, 1)}
    assert len(keys) == 3, "fixed-width fields: no ambiguity between seed, game and deal"


def test_mix_seed_depends_on_every_nonce_and_their_order() -> None:
    base = mix_seed(b"s", [b"a", b"b"])
    assert base != mix_seed(b"s", [b"b", b"a"])
    assert base != mix_seed(b"s", [b"ab"]), "lengths are framed"
    assert base != mix_seed(b"s", [b"a", b"b", b""])
    assert base != mix_seed(b"t", [b"a", b"b"])


def test_first_card_position_is_roughly_uniform() -> None:
    # A sanity check of the whole procedure (fixed seeds: deterministic): over 5200 decks each
    # card is on top about 100 times.
    counts = [0] * 52
    for deal in range(1, 5201):
        counts[deck_for_deal(b"uniformity", 1, deal)[0].index] += 1
    assert min(counts) >= 60 and max(counts) <= 145, (min(counts), max(counts))


# ---------------------------------------------------------------------------------------
# uniform(n): the rejection path
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 7, 52, 2**32 + 1, 2**63, 2**63 + 1, 3 * 2**62, 2**64 - 1, 2**64])
def test_uniform_limit_arithmetic(n: int) -> None:
    limit = TWO_64 - TWO_64 % n
    assert limit % n == 0, "every value below the limit is equally likely mod n"
    assert TWO_64 - n < limit <= TWO_64, "fewer than n values are rejected"
    if n & (n - 1) == 0:
        assert limit == TWO_64, "a power of two never rejects"


def first_rejecting_key(n: int) -> bytes:
    """A key whose first stream word is rejected by uniform(n) (found with the reference)."""
    limit = TWO_64 - TWO_64 % n
    for i in range(1000):
        key = b"reject" + i.to_bytes(4, "big")
        (x,) = struct.unpack(">Q", hashlib.sha256(key + struct.pack(">Q", 0)).digest()[:8])
        if x >= limit:
            return key
    raise AssertionError("no rejecting key found")


@pytest.mark.parametrize("n", [2**63 + 1, 2**63 + 12345, 3 * 2**62 + 5])
def test_uniform_rejection_path(n: int) -> None:
    key = first_rejecting_key(n)
    ref = RefUniform(key)
    value = ref(n)
    assert ref.rejections >= 1
    words = RefUniform(key)
    skipped = [words.word() for _ in range(ref.rejections)]
    assert all(w >= TWO_64 - TWO_64 % n for w in skipped)
    assert value == words.word() % n, "the rejected word is skipped, the next one is used"
    assert _Uniform(key)(n) == value
    # Many draws in a row stay in step with the reference (rejections happen about 1 time in 2-4).
    a, b = RefUniform(key), _Uniform(key)
    assert [a(n) for _ in range(200)] == [b(n) for _ in range(200)]
    assert a.rejections >= 20


def test_uniform_rejection_through_first_dealer() -> None:
    # first_dealer(seed, game, num_seats) draws uniform(num_seats): with a huge number of seats
    # the public function goes through the rejection path too.
    n = 2**63 + 1
    found = 0
    for i in range(64):
        seed = bytes([i])
        ref = RefUniform(hashlib.sha256(label("dealer") + seed + struct.pack(">I", 1)).digest())
        expected = ref(n)
        assert first_dealer(seed, 1, n) == expected
        found += ref.rejections > 0
    assert found >= 10


def test_uniform_refuses_n_below_one() -> None:
    with pytest.raises(ValueError, match="n >= 1"):
        _Uniform(b"k")(0)


@pytest.mark.timeout(10)
def test_uniform_refuses_n_above_2_to_the_64() -> None:
    # For n > 2**64 the limit 2**64 - (2**64 % n) is 0: every word would be rejected forever.
    with pytest.raises(ValueError):
        _Uniform(b"k")(2**64 + 1)


# ---------------------------------------------------------------------------------------
# The reshuffle of the discard pile (RULES §8, stock_exhausted = "reshuffle")
# ---------------------------------------------------------------------------------------


def drawn_order_after_reshuffle(deck: Sequence[object], key: bytes) -> tuple[list[str], list[str]]:
    """Play a deal drawing from the stock and discarding the drawn card until the stock has been
    reshuffled; return the pile that was reshuffled and the cards drawn from the new stock."""
    deal = Deal.from_deck(deck, 0, RuleSet.classic(stock_exhausted="reshuffle"), key=key)  # type: ignore[arg-type]
    deal.apply(Pass())
    deal.apply(Pass())
    pile: list[str] = []
    drawn: list[str] = []
    while not deal.is_over:
        deal.apply(DrawStock())
        card = deal.history[-1].card
        assert card is not None
        if deal.reshuffled:
            drawn.append(str(card))
        else:
            pile = texts(deal.discard_pile)
        deal.apply(Discard(card))
    return pile, drawn


@pytest.mark.parametrize("key", [deal_key(b"reshuffle", 1, 1), b""])
def test_reshuffle_follows_the_documented_procedure(key: bytes) -> None:
    deck = deck_for_deal(b"reshuffle", 1, 1)
    pile, drawn = drawn_order_after_reshuffle(deck, key)
    # Before the 31st discard the pile is the upcard and the 30 drawn-and-discarded cards; the
    # 31st discard is its new top, the rest (bottom first) is shuffled into the new stock, which
    # is drawn from the END of the shuffled list. Without a key the deck's index bytes are used.
    assert len(pile) == 31
    effective = key or bytes(c.index for c in deck)
    new_stock = ref_shuffle(pile, ref_reshuffle_key(effective))
    assert drawn == list(reversed(new_stock))


# ---------------------------------------------------------------------------------------
# Making the vectors: ``PYTHONPATH=. python tests/test_shuffle.py > tests/vectors/shuffle.jsonl``
# ---------------------------------------------------------------------------------------


def generate() -> Iterator[dict[str, Any]]:
    """The vector records, made with the implementation."""
    seeds = [
        bytes(32),
        bytes(range(32)),
        b"gin-arena",
        bytes.fromhex("ff" * 16),
        hashlib.sha256(b"example match seed").digest(),
    ]
    for seed, game, deal in [
        (seeds[0], 1, 1), (seeds[1], 1, 1), (seeds[1], 1, 2), (seeds[1], 2, 1),
        (seeds[2], 3, 7), (seeds[4], 1, 1), (seeds[3], 1, 4294967295),
    ]:
        yield {"kind": "deal", "seed": seed.hex(), "game": game, "deal": deal,
               "deal_key": deal_key(seed, game, deal).hex(), "deck": texts(deck_for_deal(seed, game, deal))}
    for key in (b"", b"\x00", bytes(range(64))):
        yield {"kind": "shuffle", "key": key.hex(), "deck": texts(shuffle(DECK, key))}
    for seed, game, seats in [(seeds[0], 1, 2), (seeds[1], 1, 2), (seeds[1], 2, 2), (seeds[4], 5, 2),
                              (seeds[2], 1, 6)]:
        yield {"kind": "first_dealer", "seed": seed.hex(), "game": game, "num_seats": seats,
               "dealer": first_dealer(seed, game, seats)}
    for seed, nonces in [(seeds[4], [b"\x01" * 16, b"\x02" * 16]), (seeds[2], []), (seeds[0], [b"", b"abc"])]:
        yield {"kind": "mix", "seed": seed.hex(), "nonces": [n.hex() for n in nonces],
               "mixed": mix_seed(seed, nonces).hex()}
    for seed in (seeds[4], b"x"):
        yield {"kind": "commitment", "seed": seed.hex(), "commitment": commitment(seed).hex()}
    for key, n in [(b"uniform", 52), (b"uniform", 2**63 + 1)]:
        u = _Uniform(key)
        yield {"kind": "uniform", "key": key.hex(), "n": str(n), "values": [str(u(n)) for _ in range(10)]}
    dk = deal_key(seeds[4], 1, 1)
    yield {"kind": "reshuffle", "deal_key": dk.hex(), "reshuffle_key": reshuffle_key(dk).hex()}


if __name__ == "__main__":
    for record in generate():
        print(json.dumps(record, separators=(",", ":")))
