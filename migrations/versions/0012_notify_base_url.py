"""webhooks.base_url, users.email_base_url: where a subscription was made from

Links in webhook and mail messages are built by the delivery worker, away from any request.
When BBSGM_BASE_URL is unset they use the site's address as the request that registered the
webhook (or set up the mail) saw it; rows from before this revision have none and fall back to
``http://127.0.0.1:8000`` as before (docs/notifications.md).

Revision ID: 0012_notify_base_url
Revises: 0011_author_name_trip
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_notify_base_url"
down_revision: str | None = "0011_author_name_trip"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A nullable column without a default: a plain ADD COLUMN on both databases, no rewrite.
    op.add_column("webhooks", sa.Column("base_url", sa.String(length=200), nullable=True))
    op.add_column("users", sa.Column("email_base_url", sa.String(length=200), nullable=True))


def downgrade() -> None:
    op.drop_column("users", "email_base_url")
    op.drop_column("webhooks", "base_url")
