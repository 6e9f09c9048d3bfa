"""えいつく's 遊び方 page as data (app/games/kit/howto.py): its verbs, its event cards (from
events.py, so the page says what the rules run) and a worked first week."""

from __future__ import annotations

from app.games.base import N_
from app.games.eitsuku.events import EVENT_CARDS
from app.games.kit.howto import CommandHelp, Entry, Howto, Post, Section


def content() -> list[Section]:
    return [
        Section(
            N_("イベントカード"),
            tuple(Entry(card.name, card.effect) for card in EVENT_CARDS),
            N_("15種類が4枚ずつ、60枚の山です。行動フェイズに EVENT で場に出すと効果が働きます。"),
        )
    ]


HOWTO = Howto(
    summary=N_(
        "映画をつくるゲーム。予算をやりくりして役者・脚本家・音楽家・演出家を集め、"
        "早く良い作品を公開した人が勝ちます。2〜6人、最大12週。"
    ),
    players=("あかり", "ベン"),
    commands=(
        CommandHelp(
            "EVENT",
            N_("行動フェイズ: ストックのイベントカードを場に出し、その効果を使います。"),
            (
                "EVENT タイアップキャンペーン",
                "イベント プロモーターの介入 3",
                "EVENT 新たなるチャンス 役者3",
                "EVENT ストライキ ベン",
                "EVENT 方針転換 主演 役者5",
            ),
        ),
        CommandHelp(
            "SCOUT",
            N_("スカウトフェイズ: 役割カードの山から1枚引いてストックに加えます。"),
            ("SCOUT 役者", "スカウト 脚本家"),
        ),
        CommandHelp(
            "BUY",
            N_(
                "スカウトフェイズ（SCOUT の代わり）: ストックの予算カードを裏返して予算カードを"
                "1枚得ます（小は0以上、中は3以上、大は6以上）。WITH で裏返すカードを選べます。"
            ),
            ("BUY 中", "購入 大 WITH 中×3"),
        ),
        CommandHelp(
            "DRAW",
            N_("セットフェイズ: イベントカードを1枚引きます。"),
            ("DRAW", "ドロー"),
        ),
        CommandHelp(
            "SET",
            N_(
                "セットフェイズ（DRAW の代わり）: 役割カードを役割場に置き、数字＋2 ぶんの予算"
                "カードを払います。PAY で払うカードを選べます。"
            ),
            ("SET 主演 役者3", "SET 音楽家 音楽家5 PAY 中 中 小×3"),
        ),
        CommandHelp(
            "HAICHI",
            N_("日本語の「配置」: 役割場の名前が続けば SET、イベント名が続けば EVENT です。"),
            ("配置 助演 役者2", "配置 タイアップキャンペーン"),
        ),
        CommandHelp(
            "RELEASE",
            N_(
                "終了フェイズ: 主演・脚本家・音楽家・演出家がそろっていれば作品を公開します。"
                "公開した人は次の週から手番がありません。"
            ),
            ("RELEASE", "公開"),
        ),
        CommandHelp("END", N_("終了フェイズ: この週を終えます。"), ("END", "終了")),
        CommandHelp(
            "CHOOSE",
            N_("準備のダイスで6が出た人が、役割カードを引く山を選びます。"),
            ("CHOOSE 役者", "選択 音楽家"),
        ),
        CommandHelp(
            "SHUFFLE",
            N_("GM が裏向きの山を切り直します。"),
            ("SHUFFLE 役者", "SHUFFLE EVENT"),
            "gm",
        ),
    ),
    first_turn=(
        Post(
            0,
            ("SCOUT 役者", "SET 主演 役者3", "END"),
            N_(
                "役者の山から1枚スカウトし、最初から持っていた役者3を主演に置いて"
                "（3＋2＝5 ぶんの予算を払います）、週を終えます。"
            ),
        ),
        Post(
            1,
            ("CHOOSE 役者", "CHOOSE 脚本家", "BUY 中", "DRAW", "END"),
            N_(
                "準備のダイスが2回とも6だったので、役割カードを引く山を2つ選びます。"
                "スカウトの代わりに予算・中を買い、イベントカードを1枚引いて週を終えます。"
                "全員が終えたので第2週になり、全員が予算・小を1枚もらいます。"
            ),
        ),
    ),
    content=content,
)
