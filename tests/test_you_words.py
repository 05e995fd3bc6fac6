"""Grammar: every text of the games that can have the reader as its subject is said in the second
person, in every language the web speaks ("you knock", "вие чукате", "вы стучите"; "you draw 4s
from the stock", never "you draws"): each "you" form of the games' catalogs is rendered (as the
web's ``t.game`` and ``arena play`` do, through ``arena.replays.game_words.game_text``) with sample
fields and compared with the sentence expected; the same text about another seat keeps the third
person; the web's own "you" sentences (the game's end) too; and ``arena play`` says the human's own
move as "You draw 4s from the stock"."""

from __future__ import annotations

import io
import re

import pytest

from arena.replays import game_words
from arena.run.play import Screen
from arena.web import i18n
from gin_arena.v2 import common_pb2
from gin_arena.v2.games import gin_pb2

SAMPLE = {"card": "7h", "cards": "7h 8h 9h", "points": "25", "n": "12", "meld": "2", "end": "high", "action": "lay off"}
"""The fields of the sample texts (a template's ``{who}`` is the reader's seat, ``{0}``)."""
EXPECTED = {
    ('gin', 'passes the upcard'): (
        'you pass the upcard',
        'вие пропускате откритата карта',
        'вы пропускаете открытую карту',
    ),
    ('gin', 'takes the upcard'): (
        'you take the upcard',
        'вие вземате откритата карта',
        'вы берёте открытую карту',
    ),
    ('gin', 'draws from the stock'): (
        'you draw from the stock',
        'вие теглите от тестето',
        'вы берёте из колоды',
    ),
    ('gin', 'takes from the discard pile'): (
        'you take from the discard pile',
        'вие вземате от изхвърлените',
        'вы берёте из сброса',
    ),
    ('gin', 'discards'): (
        'you discard',
        'вие изхвърляте',
        'вы сбрасываете',
    ),
    ('gin', 'knocks, discarding face down'): (
        'you knock, discarding face down',
        'вие чукате, като изхвърляте карта с лицето надолу',
        'вы стучите, сбрасывая карту рубашкой вверх',
    ),
    ('gin', 'declares big gin'): (
        'you declare big gin',
        'вие обявявате голям джин',
        'вы объявляете большой джин',
    ),
    ('gin', 'takes the upcard {card}'): (
        'you take the upcard 7h',
        'вие вземате откритата карта 7h',
        'вы берёте открытую карту 7h',
    ),
    ('gin', 'draws {card} from the stock'): (
        'you draw 7h from the stock',
        'вие теглите 7h от тестето',
        'вы берёте 7h из колоды',
    ),
    ('gin', 'takes {card} from the discard pile'): (
        'you take 7h from the discard pile',
        'вие вземате 7h от изхвърлените',
        'вы берёте 7h из сброса',
    ),
    ('gin', 'discards {card}'): (
        'you discard 7h',
        'вие изхвърляте 7h',
        'вы сбрасываете 7h',
    ),
    ('gin', 'knocks, discarding {card} face down'): (
        'you knock, discarding 7h face down',
        'вие чукате, като изхвърляте 7h с лицето надолу',
        'вы стучите, сбрасывая 7h рубашкой вверх',
    ),
    ('gin', '{who} knocks'): (
        'you knock',
        'вие чукате',
        'вы стучите',
    ),
    ('gin', '{who} knocks and is undercut'): (
        'you knock and are undercut',
        'вие чукате, но сте подрязани',
        'вы стучите, но вас подрезали',
    ),
    ('gin', '{who} goes gin'): (
        'you go gin',
        'вие правите джин',
        'вы делаете джин',
    ),
    ('gin', '{who} declares big gin'): (
        'you declare big gin',
        'вие обявявате голям джин',
        'вы объявляете большой джин',
    ),
    ('gin', '{who} scores {points}'): (
        'you score 25',
        'вие печелите 25',
        'вы получаете 25',
    ),
    ('gin', '{who} scores {points} (doubled: spade upcard)'): (
        'you score 25 (doubled: spade upcard)',
        'вие печелите 25 (двойно: открита пика)',
        'вы получаете 25 (вдвойне: открытая пика)',
    ),
    ('rummy', 'draws {cards} from the stock'): (
        'you draw 7h 8h 9h from the stock',
        'вие теглите 7h 8h 9h от тестето',
        'вы берёте 7h 8h 9h из колоды',
    ),
    ('rummy', 'draws from the stock'): (
        'you draw from the stock',
        'вие теглите от тестето',
        'вы берёте из колоды',
    ),
    ('rummy', 'takes {cards} from the discards'): (
        'you take 7h 8h 9h from the discards',
        'вие вземате 7h 8h 9h от изхвърлените',
        'вы берёте 7h 8h 9h из сброса',
    ),
    ('rummy', 'lays the meld {cards}'): (
        'you lay the meld 7h 8h 9h',
        'вие сваляте комбинацията 7h 8h 9h',
        'вы выкладываете комбинацию 7h 8h 9h',
    ),
    ('rummy', 'lays off {cards} on meld #{meld} ({end})'): (
        'you lay off 7h 8h 9h on meld #2 (high)',
        'вие добавяте 7h 8h 9h към комбинация №2 (отгоре)',
        'вы докладываете 7h 8h 9h к комбинации №2 (сверху)',
    ),
    ('rummy', 'discards {cards}'): (
        'you discard 7h 8h 9h',
        'вие изхвърляте 7h 8h 9h',
        'вы сбрасываете 7h 8h 9h',
    ),
    ('rummy', 'calls stop'): (
        'you call stop',
        'вие казвате «стоп»',
        'вы говорите «стоп»',
    ),
    ('rummy', 'declines to call stop'): (
        'you decline to call stop',
        'вие не казвате «стоп»',
        'вы не говорите «стоп»',
    ),
    ('rummy', 'pays {who} {n}'): (
        'pays you 12',
        'плаща ви 12',
        'платит вам 12',
    ),
    ('rummy', '{who} has the lowest hand when the stock runs out · scores {n}'): (
        'you have the lowest hand when the stock runs out · you score 12',
        'вие имате най-ниската ръка, когато тестето свършва · печелите 12',
        'у вас меньшая рука, когда кончилась колода · вы получаете 12',
    ),
    ('rummy', '{who} goes out rummy (paid double) · scores {n}'): (
        'you go out rummy (paid double) · you score 12',
        'вие излизате с рами (плаща се двойно) · печелите 12',
        'вы выходите рамми (оплата вдвойне) · вы получаете 12',
    ),
    ('rummy', '{who} goes out · scores {n}'): (
        'you go out · you score 12',
        'вие излизате · печелите 12',
        'вы выходите · вы получаете 12',
    ),
    ('rummy', '{action} {cards} on meld #{meld} of {who} ({end})'): (
        'lay off 7h 8h 9h on your meld #2 (high)',
        'добави 7h 8h 9h към вашата комбинация №2 (отгоре)',
        'доложить 7h 8h 9h к вашей комбинации №2 (сверху)',
    ),
}
"""Each "you" text of each game, with :data:`SAMPLE`'s fields: in English, Bulgarian and Russian."""
LANGS = ("en", "bg", "ru")


def _sample(msgid: str, who: str) -> tuple[str, dict[str, list[object]]]:
    fields = {f: (who if f == "who" else SAMPLE[f]) for f in re.findall(r"\{(\w+)\}", msgid)}
    text = msgid.format(**fields)
    return text, ({text: [msgid, fields]} if fields else {})


@pytest.mark.parametrize("game", ["gin", "rummy"])
def test_every_you_text_reads_in_the_second_person_in_every_language(game: str) -> None:
    yours = {key.split("\x04", 1)[1] for key in game_words.game_words("en")[game]}
    assert yours == {m for g, m in EXPECTED if g == game}, "a you text without its expected sentences (or gone)"
    for msgid in sorted(yours):
        text, texts = _sample(msgid, "{0}")
        subject = "{who}" not in msgid  # a move's words: the reader made the move
        said = tuple(game_words.game_text(text, texts, game_words.game_words(code)[game], (), "{0}", subject)
                     for code in LANGS)
        assert said == EXPECTED[(game, msgid)], (msgid, said)
        # about another seat (or not the reader's move): the third person, as the catalog translates it
        other, other_texts = _sample(msgid, "{1}")
        for code in LANGS:
            words = game_words.game_words(code)[game]
            plain = game_words.game_text(other, other_texts, words, (), "{0}", False)
            assert plain not in EXPECTED[(game, msgid)], (code, msgid, plain)
            assert plain == game_words.game_text(other, other_texts, {k: v for k, v in words.items()
                                                                      if not k.startswith("you\x04")}), (code, msgid)


def test_the_games_end_is_said_plainly_in_every_language() -> None:
    said = {code: (i18n.lang(code)._("You won the game {score}", score="134–57"),
                   i18n.lang(code)._("{name} won the game {score}", name="greedy", score="134–57")) for code in LANGS}
    assert said == {"en": ("You won the game 134–57", "greedy won the game 134–57"),
                    "bg": ("Вие спечелихте играта 134–57", "greedy спечели играта 134–57"),
                    "ru": ("Вы выиграли игру 134–57", "greedy выигрывает игру 134–57")}


def test_arena_play_says_the_humans_own_move_in_the_second_person() -> None:
    out = io.StringIO()
    screen = Screen(out, 0, "gin")
    screen.names = ["you", "greedy"]
    screen.event(common_pb2.Event(seat=0, gin=gin_pb2.Event(kind=gin_pb2.ACTION_KIND_DRAW_STOCK, card="4s")))
    screen.event(common_pb2.Event(seat=1, gin=gin_pb2.Event(kind=gin_pb2.ACTION_KIND_DRAW_STOCK)))
    screen.event(common_pb2.Event(seat=0, gin=gin_pb2.Event(kind=gin_pb2.ACTION_KIND_DISCARD, card="Kh")))
    lines = out.getvalue().splitlines()
    assert lines[0] == "  You draw 4s from the stock" and lines[2] == "  You discard Kh", lines
    assert lines[1].startswith("  greedy: draw") and "You" not in lines[1], lines  # the others as before
