"""No game's word in the arena, in any of its files' languages (issue 30): the games' words —
their names, their terms, in English and in the languages the web speaks — travel with each game
(its presentation's texts, its declared ``result_words``, its catalogs), never in ``arena/``'s
Python, scripts, pages, style sheets or catalogs. (tests/test_structure.py checks the Python
modules for the games' names; this adds their vocabulary and the other languages.)"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ARENA = Path(__file__).resolve().parent.parent / "arena"
GAME_VOCABULARY = frozenset({
    # the first-party games' names, and their presets'
    "gin", "rummy", "oklahoma", "michigan", "bozenkill",
    # their terms
    "deadwood", "knock", "knocks", "knocked", "knocker", "undercut", "shutout",
    # the same in the web's other languages (the games' catalogs hold them)
    "джин", "руми", "рамми", "несъбрани", "несобранные", "почукал", "постучавший", "чукане", "стуке", "всухую",
})
"""Words that belong to a game, never to the arena."""
PROJECT = re.compile(r"gin[_-]arena|Gin Arena|\bGIN_[A-Z_]+\b", re.IGNORECASE)
"""The project's own name (its package, distribution, environment variables) contains ``gin``."""
HELP_KEYWORDS = frozenset({"help", "description", "epilog", "usage"})
"""argparse's help texts may name a game (as tests/test_structure.py allows)."""
OTHER_FILES = ("*.js", "*.html", "*.po", "*.css")


def game_words(text: str) -> set[str]:
    """The game words ``text`` holds (the project's own name aside), as whole words: split at
    anything but letters and at case changes (``RummyView``, ``deadwood_cards``)."""
    text = PROJECT.sub(" ", text)
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return {w for w in re.findall(r"[^\W\d_]+", text.lower()) if w in GAME_VOCABULARY}


def _python_hits(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    allowed = {id(n.value) for n in ast.walk(tree)
               if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}
    allowed |= {id(c) for n in ast.walk(tree) if isinstance(n, ast.keyword) and n.arg in HELP_KEYWORDS
                for c in ast.walk(n.value) if isinstance(c, ast.Constant)}
    hits = []
    for node in ast.walk(tree):
        words: set[str] = set()
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in allowed:
            words = game_words(node.value)
        elif isinstance(node, ast.Name):
            words = game_words(node.id)
        elif isinstance(node, ast.Attribute):
            words = game_words(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            words = game_words(node.name)
        if words:
            hits.append(f"{path.relative_to(ARENA.parent)}:{getattr(node, 'lineno', 0)}: {sorted(words)}")
    return hits


def test_the_word_finder() -> None:
    assert game_words("the gin-arena kit, Gin Arena, GIN_TOKEN") == set()
    assert game_words("RummyView deadwood_cards 'несъбрани' Knocker") == {"rummy", "deadwood", "несъбрани", "knocker"}
    assert game_words("begin, origin, engine, knockout") == set()


def test_no_file_of_the_arena_holds_a_games_word() -> None:
    hits = [hit for path in sorted(ARENA.rglob("*.py")) for hit in _python_hits(path)]
    for pattern in OTHER_FILES:
        for path in sorted(ARENA.rglob(pattern)):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                words = game_words(line)
                if words:
                    hits.append(f"{path.relative_to(ARENA.parent)}:{n}: {sorted(words)}")
    assert hits == [], "a game's words in arena/ (they travel with the game: its presentation, its result_words, " \
                       "its catalogs):\n" + "\n".join(hits)
