"""RULES-RUMMY R8.1 (``ace = low_or_high``): which end of a run an ace sits at decides its table
value — above the king 15, even when it completes a 13-card run (2..K, then the ace laid off at
the high end), below the two 1 (A..K laid at once, or the ace laid off below a 2..K run).

The cases are ``tests/vectors/rummy-ace-ends.jsonl``, one a line: ``ace`` and ``face_values``
(the rule set's fields), ``meld`` (the cards laid as a new meld), ``layoffs`` (``[card, end]``
laid off after it, in order; ``end`` ``low``, ``high`` or ``set``), ``ace_value`` (the table
value of each of the meld's aces, R8.1/R9.4) and ``case`` (in words). This file is the project's own, not a
copy of the shared vectors (those stay byte-identical)."""

from __future__ import annotations

from typing import Any

import pytest

from referee.rummy import parse_card
from referee.rummy._melds import fits, lay_off, new_meld, table_value
from tests._vectors import load

CASES = load("rummy-ace-ends.jsonl")


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_an_aces_table_value_follows_the_end_it_sits_at(case: dict[str, Any]) -> None:
    ace_high = case["ace"] == "low_or_high"
    meld = new_meld(0, 0, [parse_card(c) for c in case["meld"]], ace_high)
    assert meld is not None, f"{case['case']}: the meld is refused"
    for text, end in case["layoffs"]:
        card = parse_card(text)
        assert (card, end) in fits(meld, ace_high), f"{case['case']}: {text} does not fit at {end}"
        meld = lay_off(meld, card, 1, end)
    aces = [p for p in meld.placed if p.card.rank == 1]
    assert aces and all(table_value(meld, a, case["face_values"]) == case["ace_value"] for a in aces), case["case"]


def test_the_vectors_hold_both_ends_of_a_13_card_run() -> None:
    full = [c for c in CASES if len(c["meld"]) + len(c["layoffs"]) == 13]
    assert {c["ace_value"] for c in full} == {1, 15}
