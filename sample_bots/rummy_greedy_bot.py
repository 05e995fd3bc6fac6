"""The greedy rummy bot: puts down what it can, as soon as it can.

- Lays every meld and layoff of the plan that leaves the least value in its hand, at once.
- Takes a discard only to use it: when the hand with it (and, from the row, every card above
  it) lays down to no more value than the hand now, the card itself among the laid (with table
  scoring, the taken cards it lays count for it).
- Discards its highest card that fits nothing (no meld, no layoff, no partner for a meld).
- Calls "stop" when the discard would help the next player (always, unless it is the next
  player itself: a stopped card lays off on the table, so the next player could take it).

Run: ``python -m sample_bots.rummy_greedy_bot --referee HOST:PORT --token T``.
"""

from __future__ import annotations

from .kit import RummyBot, run_bot
from .kit.rummy import (
    CALL_STOP,
    DECLINE_STOP,
    DRAW_STOCK,
    View,
    best_discard,
    best_plan,
    card_of,
    hand_value,
    kind_of,
    penalty,
)

MAX_TAKEN = 4
"""From the row, at most this many cards are taken at once (the chosen one and those above)."""


def stop_answer(view: View) -> str:
    """Call "stop" unless this seat plays next (it may want the card itself)."""
    return CALL_STOP if view.seat != view.next_seat else DECLINE_STOP


def _draw(view: View) -> str:
    r = view.rules
    best, best_score = DRAW_STOCK, penalty(view.hand, view.table, r.ace_high, r.face_values)
    for action in view.of_kind("take_discard"):
        card = card_of(action)
        taken = view.discard_pile[view.discard_pile.index(card):]
        if len(taken) > MAX_TAKEN:
            continue
        plan = best_plan([*view.hand, *taken], view.table, r.ace_high, r.face_values)
        score = hand_value(plan.rest, r.face_values)
        if r.table_scoring:  # Bozenkill: the cards it lays score for it, the taken ones too
            score -= hand_value([c for c in taken if c not in plan.rest], r.face_values)
        if card not in plan.rest and score <= best_score:
            best, best_score = action, score
    return best


def _play(view: View) -> str:
    r = view.rules
    plan = best_plan(view.hand, view.table, r.ace_high, r.face_values)
    plays = [a for a in view.legal if kind_of(a) in ("meld", "lay_off")]
    for action in plan.actions():
        if action in plays:
            return action
    discard = best_discard(view)
    if discard is None:  # a taken or stopped card to use, and the plan has no legal way: any use
        return plays[0]
    return discard


def choose(view: View) -> str:
    """The greedy choice among ``view.legal``."""
    if view.phase == "stop":
        return stop_answer(view)
    if view.phase == "draw":
        return _draw(view)
    return _play(view)


def main(argv: list[str] | None = None) -> int:
    """Run the greedy rummy bot from the command line."""
    return run_bot(RummyBot(choose, name="rummy-greedy"), argv=argv)


if __name__ == "__main__":
    raise SystemExit(main())
