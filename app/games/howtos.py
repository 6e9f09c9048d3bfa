"""Each kind's 遊び方 (``app/games/<kind>/howto.py``) by kind, and what its page and the game
panel take from it: the 遊び方 page (app/web/howto_pages.py) shows all of it; the game panel
(templates/games/panel.html) heads each verb's buttons with the verb's one-line help."""

from __future__ import annotations

import functools

from app.games import GAMES
from app.games.cardbattle.howto import HOWTO as CARDBATTLE
from app.games.eitsuku.howto import HOWTO as EITSUKU
from app.games.eleusis.howto import HOWTO as ELEUSIS
from app.games.idolwp.howto import HOWTO as IDOLWP
from app.games.kit.howto import PLATFORM_COMMANDS, Howto, verb_groups
from app.games.populous.howto import HOWTO as POPULOUS

HOWTOS: dict[str, Howto] = {
    "eitsuku": EITSUKU,
    "eleusis": ELEUSIS,
    "populous": POPULOUS,
    "idolwp": IDOLWP,
    "cardbattle": CARDBATTLE,
}


@functools.cache
def verb_legends(kind: str) -> dict[str, str]:
    """What each verb does (its help's msgid, translated where shown), by the word a legal
    line starts with (the verb's English spelling, as ``legal_commands`` writes it): ``AREA``
    → 「エリア選択: マーカーのない創世カードを2枚選びます。…」. The platform's verbs too."""
    game = GAMES.get(kind)
    howto = HOWTOS.get(kind)
    if game is None or howto is None:
        return {}
    groups = verb_groups(game)
    legends: dict[str, str] = {}
    for help in (*howto.commands, *PLATFORM_COMMANDS):
        words = groups.get(help.verb)
        if words and help.what:
            legends.setdefault(words[0], help.what)
    return legends
