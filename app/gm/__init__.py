"""The game master: post → commands → apply → reply. The only place that joins forum and games.

One post, in the order it goes (docs/gm.md, "One post, one transaction"):

- ``service``     the services the routes call (``submit_post``, ``submit_sealed``, …): store
                  the post, then the steps below, in the caller's transaction;
- ``lines``       which lines of a post are commands, and misspelt verbs (the card registry
                  reads its thread the same way);
- ``store``       the game locked and read afresh; what a submission did written back;
- ``play``        one submission to a game, all or nothing, through ``submission``'s loop
                  (shared with the card registry, app/gm/cards.py);
- ``platform``    JOIN, START, UNDO, KICK, … : one handler per command type;
- ``working``     the working copy a submission changes, and the game's own commands on it;
- ``reply``       what the bot says; ``legal``: the lines a user may give now.

Beside them: ``deadlines`` (the bot's moves when a turn's time is up), ``options`` (a new
game's options), ``replay`` and ``results`` (the log folded back into a state, the ranking),
``pictures`` and ``text`` (the board as SVG and as text).
"""
