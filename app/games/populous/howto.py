"""ポピュラス 草案21's 遊び方 page as data (app/games/kit/howto.py): its verbs, its house
content (races, skills, area tiles, the epic deck's mix; read from content/ when the page is
drawn) and a worked first turn."""

from __future__ import annotations

from app.games.base import N_
from app.games.kit.howto import Auto, CommandHelp, Entry, Howto, Post, Section
from app.games.populous.content import load


def content() -> list[Section]:
    loaded = load()
    return [
        Section(
            N_("種族"),
            tuple(
                Entry(
                    race.name,
                    f"{race.text} 適性: {race.aptitude} / 基本スキル: " + "・".join(race.basic),
                )
                for race in loaded.races.values()
            ),
            N_(
                "ゲームの初めに1人1つ選びます。適性のある地形ではワーカーの配置に食料が要りません。"
            ),
        ),
        Section(
            N_("スキルカード"),
            tuple(Entry(skill.name, skill.text) for skill in loaded.skills.values()),
            N_(
                "種族の基本スキル2枚と、ドラフトで選ぶ5枚。伏せて持ち、決算で1枚ずつ表にすると"
                "そのときから働きます。"
            ),
        ),
        Section(
            N_("エリアタイル"),
            tuple(
                Entry(
                    tile.id,
                    " / ".join(
                        f"{tile.id.replace('-', '')}{letter} {terrain}"
                        for letter, terrain in zip(("a", "b", "c"), tile.squares, strict=True)
                    ),
                )
                for tile in loaded.tiles.values()
            ),
            N_("タイルごとに3つのマス。マスは 24a のようにタイルの番号と a・b・c で書きます。"),
        ),
        Section(
            N_("エピックカード"),
            tuple(Entry(kind, f"×{count}") for kind, count in loaded.epic.counts.items()),
            N_("5種類の山。手札は最大4枚で、手番の終わりに補充します。"),
        ),
    ]


HOWTO = Howto(
    summary=N_(
        "神となって種族を導き、大地を創り、世代を重ねるゲーム。ワーカーとタウンを広げて"
        "勝利点を集めます。3〜5人、12ラウンド。"
    ),
    players=("あかり", "ベン", "チカ"),
    commands=(
        CommandHelp(
            "RACE", N_("準備: 種族を選びます（順番に1人ずつ）。"), ("RACE 人間", "種族 ドワーフ")
        ),
        CommandHelp(
            "PICK",
            N_("準備: スキルのドラフトで1枚を選び、残りを左隣に渡します（封印して送ります）。"),
            ("PICK 凱旋", "ドラフト 王都"),
            "sealed",
        ),
        CommandHelp(
            "CUBES",
            N_("準備: 7個のキューブを情熱・食料・信仰に分けます（各6まで、封印して送ります）。"),
            ("CUBES 情熱 2 食料 3 信仰 2", "配分 情熱2 食料3 信仰2"),
            "sealed",
        ),
        CommandHelp(
            "AREA",
            N_(
                "エリア選択: マーカーのない創世カードを2枚選びます。小さい数が先の番号が"
                "創世エリアです（2 と 4 なら 2−4）。F はフリー（どの数にもなり、信仰1）。"
            ),
            ("AREA 2 4", "エリア 1 F3", "AREA F 3"),
        ),
        CommandHelp(
            "WRATH",
            N_(
                "神の怒り（1手番にどちらか1回）: 信仰3で神の怒り1を買うか、神の怒り3以上を払って"
                "天変地異を起こし、エリアに地形リングを置きます。"
            ),
            ("WRATH BUY", "WRATH 3 RING 海", "怒り 4 SQUARE 24b RING 平地"),
        ),
        CommandHelp(
            "PLACE",
            N_(
                "ワーカー配置: 創世エリアのマスにワーカーを置きます。追加のワーカーは食料1で"
                "+1、3で+2、6で+3。"
            ),
            ("PLACE 24a", "配置 24a 24c"),
        ),
        CommandHelp(
            "PLAY",
            N_(
                "手札配置: カードを表で現代の世代に置き、その種類のアクションをします。"
                "EXTRA で情熱を払ってアクションを増やせます。"
            ),
            ("PLAY 祝福", "通常 労働 EXTRA 1"),
        ),
        CommandHelp(
            "FACEDOWN",
            N_(
                "手札配置: カードを裏で置き、好きな種類のアクションをします。"
                "CARD でどのカードを伏せるか選ぶときは、封印して送ります。"
            ),
            ("FACEDOWN 繁栄", "裏 啓示 CARD 祝福"),
        ),
        CommandHelp(
            "NEWGEN",
            N_(
                "世代交代（2ラウンド目から）: 新しい現代を始めてそこにカードを置きます。"
                "この手番の終わりに決算があります。"
            ),
            ("NEWGEN 奇跡", "NEWGEN FACEDOWN 繁栄", "世代交代 祝福"),
        ),
        CommandHelp(
            "MOVE",
            N_("啓示のアクション: 創世エリアにいる自分のワーカーを1マスずつ動かします。"),
            ("MOVE 24a 25b", "移動 24c 34a"),
        ),
        CommandHelp(
            "DISCARD",
            N_("繁栄のアクションや世代交代のあとに、手札を捨てます。"),
            ("DISCARD 労働", "捨てる 祝福 奇跡"),
        ),
        CommandHelp(
            "WAR",
            N_("争いのあるマスがあるとき、戦争を選びます。"),
            ("WAR", "戦争"),
        ),
        CommandHelp(
            "MEDIATE",
            N_("争いのあるマスがあるとき、調停を選びます（相手1人に食料3）。"),
            ("MEDIATE", "調停"),
        ),
        CommandHelp(
            "TOWN",
            N_("決算: 自分のワーカーのいるマスにタウンを建てます。"),
            ("TOWN 24a", "建設 35c"),
        ),
        CommandHelp(
            "REVEAL",
            N_("決算: 伏せたスキルを1枚表にします。"),
            ("REVEAL 交易", "公開 開拓"),
        ),
        CommandHelp(
            "END",
            N_("手番を終えます（まだ書いていない手はボットが既定の手で進めます）。"),
            ("END", "手番終了"),
        ),
    ),
    first_turn=(
        Post(0, ("RACE 人間",), N_("順番に種族を選びます。")),
        Post(2, ("RACE ドワーフ",), N_("次の人も選びます。")),
        Post(1, ("RACE 海の民",), N_("最後の人が選ぶと、スキルのドラフトが始まります。")),
        Auto(
            15,
            N_(
                "（スキルのドラフト: 5回、全員が封印して PICK で1枚選び、残りを左隣へ渡します。"
                "ここでは省きます。）"
            ),
        ),
        Post(
            0,
            ("CUBES 情熱 2 食料 3 信仰 2",),
            N_("キューブの配分を封印して送ります。"),
            sealed=True,
        ),
        Post(1, ("CUBES 情熱 2 食料 3 信仰 2",), N_("次の人も配分します。"), sealed=True),
        Post(
            2,
            ("CUBES 情熱 2 食料 3 信仰 2",),
            N_("最後の人が送ると配分が公開され、スタートプレイヤーが決まります。"),
            sealed=True,
        ),
        Post(
            1,
            ("AREA 2 4", "PLACE 24c", "PLAY 祝福"),
            N_(
                "スタートプレイヤーの手番: 創世カード 2 と 4 を選んで創世エリア 2−4 に、"
                "平地の 24c に"
                "ワーカーを置き（平地なので食料は要りません）、祝福を表で置いて情熱を1得ます。"
                "アクションを使い切ったので手番が終わり、手札が補充されて次の人の手番です。"
            ),
        ),
    ),
    content=content,
)
