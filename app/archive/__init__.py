"""The archive: finished games to browse, search, replay, export, import and verify.

- ``listing``: the archive list (filters, dates, sorting) and what each row shows.
- ``search``: full-text search over thread titles and posts (FTS5 trigram / pg_trgm).
- ``fold``: replaying a game from its seed and moves, without the database.
- ``frames``: the replay page's frame after move N, from a stored game.
- ``records``: the versioned export document (docs/export.md): its schema, reading, writing.
- ``verify``: provably fair randomness checked: seed hash, full replay, final view, result.
- ``importer``: ``bbsgm import``: a game and its thread re-created from a verified record.
- ``dat``: read-only 2ch-style ``subject.txt`` and ``dat`` for dedicated BBS browsers.
"""
