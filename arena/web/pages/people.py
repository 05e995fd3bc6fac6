"""The people's pages: the doors (sign in, sign up) and the people's standings and games."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena.web.i18n import Lang
from arena.web.pages import Page


def signin(tr: Lang, failed: bool, problem: str = "", name: str = "") -> Page:
    """The sign-in forms: a person's (name and password) and the operator's (its token sets a
    cookie; ``Authorization: Bearer`` works too). ``failed``: the operator's token was refused;
    ``problem``: why a person's sign-in was (already in ``tr``'s language)."""
    return Page("signin.html", tr._("Sign in"), "signin", {"failed": failed, "problem": problem, "name": name})


def signup(tr: Lang, problem: str = "", name: str = "", *, names: tuple[int, int],
           passwords: tuple[int, int]) -> Page:
    """The sign-up form (``names``, ``passwords``: their shortest and longest lengths)."""
    return Page("signup.html", tr._("Sign up"), "signup",
                {"problem": problem, "name": name, "names": names, "passwords": passwords})


def people(tr: Lang, rows: Sequence[Mapping[str, Any]]) -> Page:
    """The people's standings (people's games only; the bots' ladder is apart)."""
    return Page("people.html", tr._("People"), "people", {"rows": rows})


def person(tr: Lang, name: str, standing: Mapping[str, Any] | None, games: Sequence[Mapping[str, Any]]) -> Page:
    """A person's people's rating and games, newest first, each linked to its replay."""
    return Page("person.html", name, "person", {"standing": standing, "games": games})
