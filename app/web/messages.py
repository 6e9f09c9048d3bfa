"""Japanese text made outside the templates that pages show, in the reader's language.

Services (accounts, forum, games, archive, limits, notifications) speak Japanese, and the JSON
API hands their messages on unchanged (../shared/API.md). Pages translate them on the way out:
a message is its own msgid, looked up as it is, or — when it carries values — matched against
the parameterised messages below, whose ``%(name)s`` places give the values back to be put into
the translation. The values themselves are looked up too (the rate limit's "書き込み", "1分間").
``tests/test_i18n.py`` checks that every message those services can raise is covered here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from app.db.models import Board
from app.games import GAMES, Game
from app.gm.results import breakdown_message
from app.i18n import DEFAULT_LANGUAGE, N_, current_language, gettext

# Messages of services and of app/main.py's error handlers that reach pages. Only the list's
# members with values are needed for matching; the others are here so the catalog has them.
SERVICE_MESSAGES: tuple[str, ...] = (
    # app/main.py
    N_("ページが見つかりません。"),
    N_("その操作はできません。"),
    N_("リクエストの形式が正しくありません。"),
    N_("サーバー内部でエラーが起きました。"),
    N_("データベースが応答しません。しばらくしてからもう一度お試しください。"),
    # app/accounts/users.py
    N_("名前を入力してください。"),
    N_("名前は%(max)s文字以内にしてください。"),
    N_("名前に空白は使えません。"),
    N_("名前に制御文字は使えません。"),
    N_("名前に < > & \" ' は使えません。"),
    N_("その名前は予約されています。"),
    N_("パスワードは%(min)s文字以上にしてください。"),
    N_("パスワードは%(max)s文字以内にしてください。"),
    N_("その名前はすでに使われています。"),
    N_("名前かパスワードが違います。"),
    # app/accounts/ratelimit.py: the sentence, then what is limited and over which window
    N_("%(what)sが多すぎます（%(per)sに%(limit)s回まで）。%(wait)s秒後にもう一度お試しください。"),
    N_("書き込み"),
    N_("この接続元からの書き込み"),
    N_("この接続元からの登録"),
    N_("この接続元からのログイン"),
    N_("この名前へのログインの試み"),
    N_("設定の変更"),
    N_("1分間"),
    N_("1時間"),
    N_("%(seconds)s秒間"),
    # app/forum/service.py (and the seeded boards)
    N_("本文が空です。"),
    N_("本文が長すぎます（%(length)s文字）。%(max)s文字以内にしてください。"),
    N_("本文に使えない文字（NUL）が含まれています。"),
    N_("タイトルが空です。"),
    N_("タイトルが長すぎます（%(length)s文字）。%(max)s文字以内にしてください。"),
    N_("タイトルに使えない文字（NUL）が含まれています。"),
    N_("板「%(slug)s」はありません。"),
    N_("スレッド %(id)s はありません。"),
    N_("ロビー"),
    N_("はじめての方へ、募集、お知らせ。"),
    N_("雑談"),
    N_("ゲームの話も、そうでない話も。"),
    # app/forum/names.py and forum.shown_author: the 名前欄
    N_("名前欄に制御文字は使えません。"),
    N_("名前欄の名前は%(max)s文字以内にしてください。"),
    N_("トリップキーは%(max)s文字以内にしてください。"),
    N_("トリップキーに制御文字は使えません。"),
    N_("「%(name)s」は予約された名前です。名前欄には使えません。"),
    N_("「%(name)s」は別のアカウントの名前です。名前欄には使えません。"),
    # app/archive/players.py (the player page, /users/{name})
    N_("利用者「%(name)s」はいません。"),
    # app/gm/cards.py (and the registry's board)
    N_("カード登録"),
    N_("掲示板進行カードゲームのカードを提案し、公式（サイトの管理者）が承認する板。"),
    N_("カード「%(name)s」はありません。"),
    N_("kind は %(choices)s のどれかです。"),
    N_("コストは 0 以上の整数で書いてください（「%(text)s」は読めません）。"),  # app/web/card_pages
    # app/gm/service.py
    N_("ゲームの種類「%(kind)s」はありません。"),
    N_("ボットの数は0〜%(high)sで指定してください。"),  # docs/bots.md
    N_("ボットの数は0以上の整数で書いてください。"),  # app/web/game_pages.py
    # (a new game's bad options: app/gm/options.py, said by the /games/new page itself)
    N_("ゲーム %(id)s はありません。"),
    N_("このゲームの進行中、観戦者はスレッドに書き込めません（GM の設定）。"),
    N_("封印コマンドを送れるのは、このゲームのプレイヤーと GM だけです。"),
    N_("命令の行がありません（封印コマンドには1行以上の命令が必要です）。"),
    N_("検索語に使えない文字（NUL）が含まれています。"),
    N_("status は %(choices)s のどれかです。"),
    N_("sort は %(choices)s のどれかです。"),
    # app/forum/moderation.py
    N_("書き込みを隠せるのはサイト管理者と、このゲームの GM だけです。"),
    N_("%(number)s番の書き込みはありません。"),
    N_("その書き込みはもう隠されています。"),
    N_("隠されていません。"),
    N_("利用者「%(name)s」はいません。"),
    # app/notify/delivery.py, app/notify/feeds.py
    N_("Webhook の URL は http:// か https:// で始まる完全な URL にしてください。"),
    N_("Webhook の URL が長すぎるか、空白や制御文字を含んでいます。"),
    N_("Webhook の URL に利用者名やパスワードは書けません。"),
    N_("Webhook は%(max)s個までです。"),
    N_("その URL はもう登録されています。"),
    N_("その Webhook はありません。"),
    N_("メールアドレスの形が正しくありません。"),
    N_("メール通知を受けるにはメールアドレスが必要です。"),
    N_("このフィードはありません（取り消されたか、URL が違います）。"),
    # app/notify/notices.py: notifications are stored in Japanese and shown on /notifications
    N_("「%(title)s」が終わりました。"),
    N_("「%(title)s」であなたの手番です（%(turn)s）。"),
    N_("「%(title)s」であなたの手番です。"),
    # ... whose %(turn)s is a game's Game.turn_label: every form the games write
    N_("第%(n)s週"),
    N_("第%(n)sラウンド"),
    N_("アイドル指名"),
    N_("最後の特訓"),
    N_("デッキ封印"),
    N_("魔法の宣言"),
    N_("第%(n)s手番"),
    N_("種族選択"),
    N_("スキルのドラフト"),
    N_("リソースの配分"),
    N_("「%(title)s」の手番の期限まであと6時間を切りました。"),
    # ... and the GM's (issue #43)
    N_("「%(title)s」に %(name)s さんが参加しました（%(count)s人）。"),
    N_("「%(title)s」から %(name)s さんが抜けました（%(count)s人）。"),
    N_("「%(title)s」の期限が過ぎ、%(names)s さんの手をボットが既定の手で進めました。"),
    # app/web/archive_pages.py: the 2ch-style files' addresses
    N_("スレッド %(id)s はこの板にありません。"),
    # app/archive/listing.py: the archive's filters and sort orders, and their errors
    N_("終わった順（新しい順）"),
    N_("作られた順（新しい順）"),
    N_("作られた順（古い順）"),
    N_("手数の多い順"),
    N_("手数の少ない順"),
    N_("タイトル順"),
    N_("終了と中止"),
    N_(
        "%(name)s は 2026-11-22 のような日付か ISO 8601 の日時で書いてください"
        "（「%(text)s」は読めません）。"
    ),
    N_("from は to より前の日付にしてください。"),
    # app/archive/search.py
    N_("検索語は%(max)s文字までです。"),
    N_("検索語は%(max)s語までです。"),
    # app/archive/frames.py: the replay's viewpoints and errors
    N_("公開情報"),
    N_("すべて（GM の視点）"),
    N_("%(seat)s. %(name)s の視点"),
    N_("（封印）"),
    N_("viewer は %(choices)s のどれかです。"),
    N_("at は 0〜%(total)s です（適用された手は%(total)s手）。"),
    N_("ゲームの進行中は公開情報だけを再生できます。"),
    N_("この記録は%(at)s手目まで再生できません: %(reason)s"),
    # app/archive/records.py: reading an uploaded record
    N_("記録が JSON のオブジェクトではありません（bbsgm-game の書き出しが必要です）。"),
    N_("format が %(format)s ではありません（bbsgm の書き出した記録ではない）。"),
    N_("version %(version)s の記録は読めません（読めるのは %(supported)s）。"),
    N_("記録に使えない文字（NUL）が含まれています。"),
    N_("記録の形式が正しくありません: %(problems)s"),
    N_("記録が大きすぎます（%(size)s MB まで）。"),
    N_("JSON として読めません: %(reason)s"),
    # app/archive/verify.py: the checks' names and messages
    N_("種のハッシュ"),
    N_("開始時に公開されたハッシュ"),
    N_("再生"),
    N_("ゲームの種類"),
    N_("乱数の種"),
    N_("終局"),
    N_("最終盤面"),
    N_("結果"),
    N_("記録に seed_hash がありません。"),
    N_("sha256(種) = %(digest)s"),
    N_("sha256(種) = %(digest)s が記録の %(recorded)s と違います"),
    N_("スレッドにボットの公開したハッシュがありません。"),
    N_(">>%(number)s で公開された %(value)s が sha256(種) と違います"),
    N_("公開（>>%(number)s）が最初の手（>>%(first)s）より後です"),
    N_(">>%(number)s で公開されたものと一致"),
    N_("「%(kind)s」というゲームはありません。"),
    N_("種は終わるまで公開されないので、終わったゲームだけ検証できます。"),
    N_("開始していないのに手があります。"),
    N_("開始前に終わったゲームです（手はありません）。"),
    N_("封印されたままの手があります（手番号 %(seqs)s）。"),
    N_("同じ手番号の手が二つあります。"),
    N_("再生した盤面は%(outcome)s"),
    N_("終局していません"),
    N_("終局していますが、記録は中止です"),
    N_("記録に final_view がありません。"),
    N_("一致"),
    N_("再生した最終盤面が記録と違います"),
    N_("再計算した順位・得点が記録と違います"),
    N_("手番号 %(seq)s が適用できません: %(reason)s"),
    N_("記録の内容では再生できません: %(reason)s"),
    N_("%(replayed)s手を再生し、%(count)s手で出目・結果が違います"),
    N_("%(replayed)s手を種から再生し、出目・結果はすべて一致"),
    N_("手番号 %(seq)s（%(command)s）: 記録 %(recorded)s ／ 再生 %(replayed)s"),
    N_("（なし）"),
    N_(
        "手番号 %(seq)s（%(command)s）: >>%(post)s へのボットの返信に"
        "再生した結果「%(text)s」がありません"
    ),
    # app/archive/verify.py: what the bot wrote (issue #40)
    N_("ボットの書き込み"),
    # app/archive/verify.py: a game started in an older wording of its kind's replies
    N_("返信の文面"),
    N_(
        "このゲームのボットの返信は以前の文面で書かれています。手の結果は再生（最終盤面・"
        "結果の順位と得点）で照合し、返信の文面とは照合しません。"
    ),
    N_("記録にスレッドがありません。"),
    N_("%(count)s件、手から再計算したボットの書き込みと違います"),
    N_("返信・知らせ・最終結果はすべて手から再計算したとおり"),
    N_("%(number)s番: ★GM の名前ですが、ボットの書き込みではありません"),
    N_("%(number)s番: ★GM の書き込みですが、名前が %(name)s です"),
    N_(
        "%(number)s番: >>%(post)s への★GM の返信ですが、ボットは"
        "命令の書き込みのすぐ次にだけ返信します"
    ),
    N_("%(number)s番: ボットの返信の先頭に >>%(post)s がありません"),
    N_(
        "%(number)s番: ★GM の書き込みですが、ボットの返信・封印の知らせ・期限の"
        "知らせのどれでもありません（「%(text)s」）"
    ),
    N_("%(number)s番: 命令の書き込みにボットの返信がありません"),
    N_("%(number)s番: 手番号 %(seq)s の「%(command)s」がボットの書き込みにありません"),
    N_("%(number)s番: 公開された種 %(value)s が記録の種と違います"),
    N_("最終結果の書き込み（【最終結果】）がスレッドにありません"),
    N_("最終結果の書き込みが二つ以上あります（%(numbers)s）"),
    N_("%(number)s番の最終結果: 「%(posted)s」ですが、再計算では「%(wanted)s」です"),
    N_("%(number)s番の最終結果: 順位の行が足りません"),
    N_("%(number)s番の最終結果: 再計算にない順位「%(line)s」があります"),
)

GAME_STATUS: dict[str, str] = {
    "recruiting": N_("募集中"),
    "active": N_("進行中"),
    "finished": N_("終了"),
    "aborted": N_("中止"),
}
DELIVERY_STATUS: dict[str, str] = {
    "pending": N_("待機"),
    "sending": N_("送信中"),
    "sent": N_("送信済み"),
    "failed": N_("失敗"),
}
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_NESTING = 2  # a value inside a message may itself be a message, once


@functools.cache
def _patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    """The messages with values as regular expressions, the most literal text first (a longer
    fixed text is the more specific message)."""
    found: list[tuple[int, re.Pattern[str], str]] = []
    for msgid in SERVICE_MESSAGES:
        if not _PLACEHOLDER.search(msgid):
            continue
        parts: list[str] = []
        seen: set[str] = set()
        position = 0
        for place in _PLACEHOLDER.finditer(msgid):
            parts.append(re.escape(msgid[position : place.start()]))
            name = place.group(1)
            parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
            seen.add(name)
            position = place.end()
        parts.append(re.escape(msgid[position:]))
        literal = len(_PLACEHOLDER.sub("", msgid))
        found.append((literal, re.compile("".join(parts), re.DOTALL), msgid))
    found.sort(key=lambda entry: -entry[0])
    return tuple((pattern, msgid) for _, pattern, msgid in found)


def translate(text: str | None, _depth: int = 0) -> str:
    """A Japanese message from elsewhere in the reader's language (unchanged when unknown)."""
    if not text:
        return ""
    if current_language() == DEFAULT_LANGUAGE:
        return text
    exact = gettext(text)
    if exact != text:
        return exact
    for pattern, msgid in _patterns():
        match = pattern.fullmatch(text)
        if match is None:
            continue
        values = {
            name: translate(value, _depth + 1) if _depth < _NESTING else value
            for name, value in match.groupdict().items()
        }
        translated: str = gettext(msgid) % values
        return translated
    return text


def game_title(game: Game | str) -> str:
    """A game's name: its English title in English, else its Japanese one."""
    impl = GAMES.get(game) if isinstance(game, str) else game
    if impl is None:
        return str(game)
    return impl.title_ja if current_language() == DEFAULT_LANGUAGE else impl.title_en


def board_title(board: Board) -> str:
    """Seeded boards are named by the site (ロビー, 雑談, one per game kind)."""
    if board.slug in GAMES:
        return game_title(board.slug)
    return translate(board.title)


def board_description(board: Board) -> str:
    if board.slug in GAMES and current_language() != DEFAULT_LANGUAGE:
        impl = GAMES[board.slug]
        described: str = gettext(N_("%(title)sの卓。")) % {"title": impl.title_en}
        return described
    return translate(board.description or "")


NO_VALUE = "—"


def breakdown_label(key: str, game: Game | str | None) -> str:
    """A result's breakdown key in words: the game's label (Game.breakdown_labels) or the
    app's (the GM's ADJUST line), in the reader's language; an unknown key as it is."""
    impl = GAMES.get(game) if isinstance(game, str) else game
    found = breakdown_message(key, impl)
    if found is None:
        return key
    label, params = found
    said: str = gettext(label) % params if params else gettext(label)
    return said


def breakdown_lines(breakdown: Mapping[str, Any] | None, game: Game | str | None) -> list[Any]:
    """(label, value) for each line of a result's breakdown, as the result table shows them:
    a missing value (a 未完成 player's) as —, and nothing at all when no line has a value."""
    items = list((breakdown or {}).items())
    if all(value is None for _, value in items):
        return []
    impl = GAMES.get(game) if isinstance(game, str) else game
    return [
        (
            breakdown_label(key, game),
            NO_VALUE if value is None else value if impl is None else impl.breakdown_words(value),
        )
        for key, value in items
    ]


def game_status(status: str) -> str:
    return gettext(GAME_STATUS[status]) if status in GAME_STATUS else status


def delivery_status(status: str) -> str:
    return gettext(DELIVERY_STATUS[status]) if status in DELIVERY_STATUS else status
