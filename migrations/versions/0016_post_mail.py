"""posts.mail: the メール欄 a 専ブラ sends with a post (``sage`` and the like)

Shown in the dat's mail field; ``sage`` keeps the thread's place in the lists
(app/web/bbs_cgi.py). Posts made before, and every post of the web page, the API and the bot,
have none (NULL).

Revision ID: 0016_post_mail
Revises: 0015_search_file
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_post_mail"
down_revision: str | None = "0015_search_file"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Plain ALTER TABLE on both databases: a batch operation would rebuild the posts table on
# SQLite and lose its full-text triggers (as 0009_board_at).


def upgrade() -> None:
    op.add_column("posts", sa.Column("mail", sa.String(length=64), nullable=True))


def downgrade() -> None:
    op.drop_column("posts", "mail")
