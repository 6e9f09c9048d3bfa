"""The platform commands' messages (grammar/common.lark): display names of the shared terminals
and the friendly syntax-error table. They sit beside `commands.py`, which holds the commands
themselves; every game's parser (`base.CommandParser`) adds them after its own tables."""

from __future__ import annotations

__all__ = ["COMMON_SYNTAX_EXAMPLES", "COMMON_TERMINAL_LABELS"]

# Display names for the shared terminals (grammar/common.lark) in "expected one of" messages.
COMMON_TERMINAL_LABELS: dict[str, str] = {
    "JOIN": "JOIN(参加)",
    "LEAVE": "LEAVE(離脱)",
    "START": "START(開始)",
    "UNDO": "UNDO(取消)",
    "AS": "AS(代理)",
    "KICK": "KICK(追放)",
    "REPLACE": "REPLACE(交代)",
    "PAUSE": "PAUSE(中断)",
    "RESUME": "RESUME(再開)",
    "ABORT": "ABORT(中止)",
    "DEADLINE": "DEADLINE(期限)",
    "ADJUST": "ADJUST(調整)",
    "ABSENT": "ABSENT(不在)",
    "BOT": "BOT(ボット)",
    "BOARD": "BOARD(盤面)",
    "NAME": "名前",
    "INT": "数字",
    "SIGNED_INT": "±数字",
    "REASON": "理由",
    "_SEP": "区切り(, 、)",
}

# Friendly messages for the platform commands: label -> malformed examples that fail in the
# same parser state (Lark `match_examples`). Game tables are tried before these.
COMMON_SYNTAX_EXAMPLES: dict[str, list[str]] = {
    "命令が分かりません。行の最初には命令(JOIN、END など)を書いてください。": [
        "こんにちは",
        "+1",
    ],
    "この命令には続きを書きません(例: JOIN)。": [
        "JOIN x",
        "LEAVE x",
        "START x",
        "UNDO x",
        "PAUSE x",
        "RESUME x",
        "ABORT x",
        "BOARD x",
    ],
    "AS の後にはプレイヤーの名前と命令を書いてください(例: AS 太郎 END)。": ["AS"],
    "AS <名前> の後には代わりに行う命令を書いてください(例: AS 太郎 END)。": [
        "AS 太郎",
        "AS 太郎 x",
    ],
    "KICK の後には追放するプレイヤーの名前を書いてください(例: KICK 太郎)。": ["KICK"],
    "KICK に書ける名前は1人だけです(例: KICK 太郎)。": ["KICK 太郎 次郎"],
    "REPLACE の後には交代するプレイヤーと新しいプレイヤーの名前を書いてください"
    "(例: REPLACE 太郎 次郎)。": ["REPLACE", "REPLACE 太郎"],
    "REPLACE に書ける名前は2人だけです(例: REPLACE 太郎 次郎)。": ["REPLACE 太郎 次郎 三郎"],
    "DEADLINE の後には時間数を数字で書いてください(例: DEADLINE 24)。": [
        "DEADLINE",
        "DEADLINE x",
        "DEADLINE 24 x",
    ],
    "ABSENT の後には不在にする時間数を数字で書いてください(例: ABSENT 48)。": [
        "ABSENT",
        "ABSENT x",
        "ABSENT 48 x",
    ],
    "BOT の後には席に着けるボットの数を数字で書いてください(例: BOT 2)。": [
        "BOT x",
        "BOT 2 x",
    ],
    "ADJUST の後にはプレイヤーの名前、点数の増減(+5 や -3)、理由を書いてください"
    "(例: ADJUST 太郎 -3 ストライキの読み違い)。": ["ADJUST"],
    "ADJUST <名前> の後には点数の増減を +5 や -3 のように書いてください"
    "(例: ADJUST 太郎 -3 ストライキの読み違い)。": ["ADJUST 太郎", "ADJUST 太郎 x"],
    "ADJUST <名前> <増減> の後には理由を書いてください"
    "(例: ADJUST 太郎 -3 ストライキの読み違い)。": ["ADJUST 太郎 +3"],
}
