"""ポピュラス 草案21's house content: the tiles' terrains, the races, the skills and the epic
cards' mix (docs/rules/populous.md, "House content"). The files are
``app/games/populous/content/*.toml``; a group may replace any of them without touching code.
Each is validated once, at start-up (`load`), with the file and line of a bad entry.

The draft gives the components' numbers (15 tiles, 5 races, 10 + 30 skills, 90 epic cards) but
prints no terrain, race, skill or mix: all of that is house content, marked so in its file.
Skills are built from a small vocabulary of effects (`EFFECTS`) that the rules apply at fixed
moments, so a new skill is a new entry, not new code.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.games.kit.content import (
    ContentError,
    EntryError,
    content_dir,
    entry_lines,
    line_of,
    load_content,
    require_unique,
)

__all__ = [
    "EFFECTS",
    "KINDS",
    "RESOURCES",
    "SQUARE_LETTERS",
    "TERRAINS",
    "Content",
    "Race",
    "Skill",
    "Tile",
    "load",
]

Terrain = Literal["平地", "山岳", "砂漠", "凍土", "海"]
TERRAINS: tuple[Terrain, ...] = ("平地", "山岳", "砂漠", "凍土", "海")
Kind = Literal["祝福", "労働", "奇跡", "啓示", "繁栄"]
KINDS: tuple[Kind, ...] = ("祝福", "労働", "奇跡", "啓示", "繁栄")
Resource = Literal["情熱", "食料", "信仰"]
RESOURCES: tuple[Resource, ...] = ("情熱", "食料", "信仰")
SQUARE_LETTERS = ("a", "b", "c")

Effect = Literal[
    "hand_size",
    "aptitude",
    "action_bonus",
    "prosperity_cap",
    "wrath_discount",
    "mediate_discount",
    "war_strength",
    "newgen_resource",
    "settle_vp",
    "end_vp_town",
    "end_vp_worker",
    "end_vp_terrain",
    "end_vp_generation",
    "end_vp_resource",
]
# The parameters each effect needs besides `amount` (skills.toml explains each effect).
EFFECTS: dict[str, tuple[str, ...]] = {
    "hand_size": (),
    "aptitude": ("terrain",),
    "action_bonus": ("kind",),
    "prosperity_cap": (),
    "wrath_discount": (),
    "mediate_discount": (),
    "war_strength": (),
    "newgen_resource": ("resource",),
    "settle_vp": (),
    "end_vp_town": (),
    "end_vp_worker": (),
    "end_vp_terrain": ("terrain",),
    "end_vp_generation": (),
    "end_vp_resource": ("resource",),
}

Word = Annotated[str, Field(min_length=1, max_length=16, pattern=r"^\S+$")]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Tile(_Frozen):
    id: Annotated[str, Field(pattern=r"^[1-5]-[1-5]$")]
    squares: tuple[Terrain, Terrain, Terrain]

    @property
    def numbers(self) -> tuple[int, int]:
        low, high = self.id.split("-")
        return int(low), int(high)

    @property
    def double(self) -> bool:
        low, high = self.numbers
        return low == high


class Tiles(_Frozen):
    dice: dict[Literal["a", "b", "c"], tuple[Annotated[int, Field(ge=1, le=6)], ...]]
    tiles: list[Tile]


class Race(_Frozen):
    name: Word
    colour: Annotated[str, Field(pattern=r"^#[0-9a-fA-F]{6}$")]
    aptitude: Terrain
    basic: tuple[Word, Word]
    text: str


class Races(_Frozen):
    races: list[Race]


class Skill(_Frozen):
    name: Word
    basic: bool = False
    effect: Effect
    amount: Annotated[int, Field(ge=1, le=6)] = 1
    terrain: Terrain | None = None
    kind: Kind | None = None
    resource: Resource | None = None
    text: str

    @model_validator(mode="after")
    def _parameters(self) -> Skill:
        needed = EFFECTS[self.effect]
        for name in ("terrain", "kind", "resource"):
            given = getattr(self, name) is not None
            if name in needed and not given:
                raise ValueError(f"effect {self.effect} needs {name}")
            if name not in needed and given:
                raise ValueError(f"effect {self.effect} takes no {name}")
        return self


class Skills(_Frozen):
    skills: list[Skill]


class Epic(_Frozen):
    hand_size: Annotated[int, Field(ge=1, le=10)]
    counts: dict[Kind, Annotated[int, Field(ge=0, le=99)]]


@dataclass(frozen=True)
class Content:
    tiles: dict[str, Tile]
    dice: dict[str, tuple[int, ...]]
    races: dict[str, Race]
    skills: dict[str, Skill]
    epic: Epic

    @property
    def drafted(self) -> list[str]:
        """The skills dealt in the draft, in file order (the basic ones are the races')."""
        return [name for name, skill in self.skills.items() if not skill.basic]

    def letter_for(self, face: int) -> str:
        """The square a catastrophe die face hits (a for 1–2, …)."""
        return next(letter for letter, faces in self.dice.items() if face in faces)


def _check_tiles(tiles: Tiles) -> None:
    require_unique(tiles.tiles, "id", "tiles")
    for index, tile in enumerate(tiles.tiles):
        low, high = tile.numbers
        if low > high:
            raise EntryError(("tiles", index, "id"), f"write the low number first: {high}-{low}")
    wanted = {f"{a}-{b}" for a in range(1, 6) for b in range(a, 6)}
    missing = sorted(wanted - {tile.id for tile in tiles.tiles})
    if missing:
        raise EntryError(("tiles",), f"the 15 tiles 1-1 … 5-5 are all needed; missing {missing}")
    faces = sorted(face for faces in tiles.dice.values() for face in faces)
    if faces != [1, 2, 3, 4, 5, 6]:
        raise EntryError(("dice",), "the faces 1–6 must be shared out among a, b and c, once each")


def _check_races(races: Races) -> None:
    require_unique(races.races, "name", "races")
    require_unique(races.races, "colour", "races")
    if len(races.races) < 5:
        raise EntryError(("races",), "5 races or more: 5 players choose one each")


def _check_skills(skills: Skills) -> None:
    require_unique(skills.skills, "name", "skills")
    drafted = [skill for skill in skills.skills if not skill.basic]
    if len(drafted) < 25:
        raise EntryError(("skills",), "25 drafted skills or more: 5 players are dealt 5 each")


def _check_epic(epic: Epic) -> None:
    if sum(epic.counts.values()) < 5 * epic.hand_size + 10:
        raise EntryError(("counts",), "too few epic cards for five hands and their refills")


@functools.cache
def load() -> Content:
    """Every content file, validated (raises kit.content.ContentError naming file and line)."""
    folder = content_dir("populous")
    tiles = load_content(folder / "tiles.toml", Tiles, _check_tiles)
    races = load_content(folder / "races.toml", Races, _check_races)
    skills = load_content(folder / "skills.toml", Skills, _check_skills)
    epic = load_content(folder / "epic.toml", Epic, _check_epic)
    by_name = {skill.name: skill for skill in skills.skills}
    for index, race in enumerate(races.races):
        for name in race.basic:
            if name not in by_name or not by_name[name].basic:
                path = folder / "races.toml"
                lines = entry_lines(path, path.read_text(encoding="utf-8"))
                raise ContentError(
                    path,
                    line_of(lines, ("races", index, "basic")),
                    f"races[{index}].basic: {name} is not a basic skill of skills.toml",
                )
    return Content(
        tiles={tile.id: tile for tile in tiles.tiles},
        dice={str(letter): faces for letter, faces in tiles.dice.items()},
        races={race.name: race for race in races.races},
        skills=by_name,
        epic=epic,
    )
