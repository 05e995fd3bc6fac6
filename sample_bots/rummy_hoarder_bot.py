"""The hoarding rummy bot: keeps its melds in its hand until it can go out at once.

It puts nothing on the table until its whole hand goes down in one turn — so that with
``rummy_doubles`` (the ``open`` preset) it goes out "rummy" and is paid double. Meanwhile it
draws from the stock, takes a discard only when that lets it go out this turn, and discards
its highest card that fits nothing. A stopped card must be laid back (R8.3), and it calls
"stop" like the greedy bot.

Run: ``python -m sample_bots.rummy_hoarder_bot --referee HOST:PORT --token T``.
"""

from __future__ import annotations

from .kit import RummyBot, run_bot
from .kit.rummy import DRAW_STOCK, View, best_discard, card_of, discard_action, going_out, kind_of
from .rummy_greedy_bot import MAX_TAKEN, stop_answer


def _draw(view: View) -> str:
    r = view.rules
    for action in view.of_kind("take_discard"):
        card = card_of(action)
        taken = view.discard_pile[view.discard_pile.index(card):]
        hand = [*view.hand, *taken]
        if len(taken) > MAX_TAKEN:
            continue
        if going_out(hand, view.table, r.ace_high, r.out_needs_discard, use=card) is not None:
            return action
    return DRAW_STOCK


def _play(view: View) -> str:
    r = view.rules
    plays = [a for a in view.legal if kind_of(a) in ("meld", "lay_off")]
    out = going_out(view.hand, view.table, r.ace_high, r.out_needs_discard, use=view.must_use)
    if out is not None:
        plan, last = out
        for action in plan.actions():
            if action in plays:
                return action
        if last is not None and discard_action(last) in view.legal:
            return discard_action(last)
    discard = best_discard(view)
    if discard is None:  # a stopped card to lay back, or a taken card to use
        return plays[0]
    return discard


def choose(view: View) -> str:
    """The hoarder's choice among ``view.legal``."""
    if view.phase == "stop":
        return stop_answer(view)
    if view.phase == "draw":
        return _draw(view)
    return _play(view)


def main(argv: list[str] | None = None) -> int:
    """Run the hoarding rummy bot from the command line."""
    return run_bot(RummyBot(choose, name="rummy-hoarder"), argv=argv)


if __name__ == "__main__":
    raise SystemExit(main())
