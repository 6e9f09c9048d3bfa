"""Shared pieces for card and board games: the parts every new game would otherwise rewrite.

- `decks`: piles of card ids — shuffle, draw (reshuffling the discards), deal, put back, discard.
- `dice`: numbered and labelled dice, and their sums.
- `legal`: legal commands found by trying each candidate on a copy of the state.
- `seats`: turn rotation, round and snake orders, passing hands left or right.
- `secret`: a simultaneous secret step (everyone seals a choice, then all are revealed at once).
- `content`: house content (tiles, cards, idols …) read from TOML/JSON files and validated by
  pydantic models at start-up, with errors that name the file and line to fix.

The game state is plain JSON, so the pieces are functions over lists and dicts rather than
objects: they mutate the lists and dicts they are given (the caller's working copy of the state,
since `apply` must never touch the state it was handed), and every random choice comes from the
move's `app.games.base.Rng`, so a game replays exactly from its log. Like the games themselves,
the kit imports nothing of the app. The submodules are imported one by one (``from
app.games.kit import decks``), so a game that needs only dice does not load pydantic.
"""
