"""The options of a new game: which ones there are (for the /games/new form), and their checking
with a Japanese message naming the option and what it allows (for the form and the JSON API).

A game's own options are its pydantic ``Options`` model (app/games/base.py); the platform's
(``deadline_hours``, ``mute_spectators``) are ``PlatformOptions`` below, given in the same
``options`` object. Each field becomes an ``OptionField``: its kind of input (from the field's
type), bounds, default, and a Japanese label and help — the field's own ``title`` and
``description`` when the model gives them (marked ``N_``), else ``GAME_TEXTS`` here. Options the
app sets (the card pool, the rules' edition) are neither offered nor taken from a creator.
pydantic's own error text (English, with its URL) never reaches a reader: every problem is said
again from the field's description (docs/gm.md, "New games").
"""

from __future__ import annotations

import types
import typing
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

from app.errors import Invalid
from app.games.base import N_
from app.games.base import Game as GameImpl
from app.gm.platform import DEADLINE_HOURS

Widget = Literal["int", "bool", "text", "choice", "lines"]
# The form value of a field left empty: the option is not given (its default applies).
MISSING: Any = object()
CARD_POOL = "pool"  # put in by the app for the kinds that play with the card registry
CARD_COLLECTIONS = "collections"  # and the players' collections, at START (docs/cards.md)
EDITION = "edition"  # the rules' edition (Game.edition), put in by the app for every new game

DEADLINE_LOW, DEADLINE_HIGH = DEADLINE_HOURS


class PlatformOptions(BaseModel):
    """The options every game has, beside its own (the API takes them in the same object)."""

    model_config = ConfigDict(extra="ignore", strict=True)

    deadline_hours: int | None = Field(
        default=None,
        ge=DEADLINE_LOW,
        le=DEADLINE_HIGH,
        title=N_("手番の期限"),
        description=N_(
            "手番ごとの期限を時間で。空欄なら期限なし。過ぎると、まだ動いていない人の分を"
            "ボットが決まった手で進めます。GM は後から DEADLINE で変えられます。"
        ),
    )
    mute_spectators: bool = Field(
        default=False,
        title=N_("観戦者の書き込みを断る"),
        description=N_("進行中は、プレイヤーと GM のほかはスレッドに書き込めません。"),
    )


PLATFORM_OPTIONS: tuple[str, ...] = tuple(PlatformOptions.model_fields)

# Labels and help of the games' own options, for fields whose model gives no title or
# description (the models stay the games' own: app/games/<kind>/rules.py): kind -> field ->
# (label, help). Choices of a Literal field: (kind, field) -> value -> label.
GAME_TEXTS: dict[str, dict[str, tuple[str, str]]] = {
    "eleusis": {
        "parent": (
            N_("最初の親"),
            N_("最初のラウンドの親になるプレイヤーの名前。空欄なら最初の席の人です。"),
        ),
        "rounds": (
            N_("ラウンド数"),
            N_("空欄なら人数と同じ。親は席順に交代します。"),
        ),
        "rules": (
            N_("親が封印できるルール"),
            N_("形式ルールはボットが、手書きのルールは親が判定します。"),
        ),
    },
    "idolwp": {
        "idols": (
            N_("アイドルの指定"),
            N_(
                "GM が全員のアイドルを決めるときだけ、1行に1人「名前 アイドル アイドル」と"
                "書きます。空欄ならドラフト（PICK）で選びます。"
            ),
        ),
    },
}
CHOICE_TEXTS: dict[tuple[str, str], dict[str, str]] = {
    ("eleusis", "rules"): {
        "any": N_("どちらでも（親が選ぶ）"),
        "formal": N_("形式ルールだけ（ボットが判定）"),
        "hand": N_("手書きのルールだけ（親が判定）"),
    },
}

# What a bad value is told, by the kind of input: the option's label and key, and what it allows.
INT_RANGE = N_("%(label)s（%(name)s）は %(low)s〜%(high)s の整数で書いてください。")
INT_LOW = N_("%(label)s（%(name)s）は %(low)s 以上の整数で書いてください。")
INT_HIGH = N_("%(label)s（%(name)s）は %(high)s 以下の整数で書いてください。")
INT_ANY = N_("%(label)s（%(name)s）は整数で書いてください。")
BOOL = N_("%(label)s（%(name)s）は true か false で書いてください。")
CHOICE = N_("%(label)s（%(name)s）は %(choices)s のどれかです。")
TEXT_MAX = N_("%(label)s（%(name)s）は%(max)s文字以内の文字列で書いてください。")
TEXT = N_("%(label)s（%(name)s）は文字列で書いてください。")
LINES = N_(
    "%(label)s（%(name)s）は、名前ごとに文字列のリストを書いたオブジェクトにしてください"
    "（フォームでは1行に「名前 値 値」）。"
)
OTHER = N_("%(label)s（%(name)s）の値が正しくありません。")
UNKNOWN = N_("「%(name)s」というオプションはありません（使えるのは %(names)s）。")
WHOLE = N_("オプションの組み合わせが正しくありません。")
NOT_AN_OBJECT = N_('options は JSON のオブジェクト（{"rounds": 3} の形）で書いてください。')
SUMMARY = N_("オプションが正しくありません: %(reason)s")


@dataclass(frozen=True)
class OptionField:
    """One option as the form offers it."""

    name: str
    label: str  # Japanese, a msgid
    help: str  # Japanese, a msgid; "" for none
    widget: Widget | None  # None: not in the form (the JSON API takes it)
    default: Any
    low: int | None = None
    high: int | None = None
    max_length: int | None = None
    # A Literal's values as the form writes them, each with its label (a msgid), and as they are
    choices: tuple[tuple[str, str], ...] = ()
    values: tuple[Any, ...] = ()

    def problem(self) -> Problem:
        """What this option allows, said as the answer to a bad value."""
        values: dict[str, Any] = {"label": self.label, "name": self.name}
        if self.widget == "int":
            if self.low is not None and self.high is not None:
                return Problem(self.name, INT_RANGE, {**values, "low": self.low, "high": self.high})
            if self.low is not None:
                return Problem(self.name, INT_LOW, {**values, "low": self.low})
            if self.high is not None:
                return Problem(self.name, INT_HIGH, {**values, "high": self.high})
            return Problem(self.name, INT_ANY, values)
        if self.widget == "bool":
            return Problem(self.name, BOOL, values)
        if self.widget == "choice":
            choices = " / ".join(value for value, _label in self.choices)
            return Problem(self.name, CHOICE, {**values, "choices": choices})
        if self.widget == "text" and self.max_length is not None:
            return Problem(self.name, TEXT_MAX, {**values, "max": self.max_length})
        if self.widget == "text":
            return Problem(self.name, TEXT, values)
        if self.widget == "lines":
            return Problem(self.name, LINES, values)
        return Problem(self.name, OTHER, values)

    def shown(self) -> str:
        """The default as the form's input shows it."""
        if self.default is None or self.widget in ("bool", "lines"):
            return ""
        return str(self.default)

    def from_form(self, raw: str | None) -> Any:
        """The option's value from the form's text, ``MISSING`` when left empty; text that is
        not a value of its kind is passed on as it is, for the check to refuse with the
        message."""
        if self.widget == "bool":
            word = (raw or "").strip().lower()
            if word in ("", "off", "false", "0", "no"):
                return MISSING if raw is None or word == "" else False
            return True if word in ("on", "true", "1", "yes") else raw
        if raw is None or not raw.strip():
            return MISSING
        text = raw.strip()
        if self.widget == "int":
            try:
                return int(unicodedata.normalize("NFKC", text))
            except ValueError:
                return text
        if self.widget == "lines":
            return lines_value(text)
        if self.widget == "choice":  # the value itself, whatever its type (Literal[1, 2])
            return next((value for value in self.values if str(value) == text), text)
        return text


@dataclass(frozen=True)
class Problem:
    """A bad option: which (``name``; "" for the options as a whole), and the message as a
    msgid with its values (the label a msgid too), so a page can say it in its reader's
    language."""

    name: str
    msgid: str
    values: Mapping[str, Any] = field(default_factory=dict)

    @property
    def message(self) -> str:
        """In Japanese, as the services speak."""
        return self.msgid % dict(self.values) if self.values else self.msgid


class OptionsInvalid(Invalid):
    """Bad options (422): ``problems`` one per option; the message says them all."""

    def __init__(self, problems: list[Problem]) -> None:
        reason = " ".join(problem.message for problem in problems)
        super().__init__(SUMMARY % {"reason": reason}, field="options")
        self.problems = problems


@dataclass(frozen=True)
class Chosen:
    """Checked options: the game's own (JSON, as stored) and the platform's."""

    game: dict[str, Any]
    deadline_hours: int | None
    mute_spectators: bool


def lines_value(text: str) -> dict[str, list[str]]:
    """「名前 値 値」 lines as {名前: [値, 値]} (blank lines skipped; full-width spaces too)."""
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        words = line.split()
        if words:
            found[words[0]] = words[1:]
    return found


def _bounds(info: FieldInfo) -> tuple[int | None, int | None, int | None]:
    """The field's ``ge``/``gt``, ``le``/``lt`` and ``max_length`` (pydantic keeps them as
    annotated-types constraints in ``metadata``: read by name)."""
    low = high = longest = None
    for rule in info.metadata:
        ge, gt = getattr(rule, "ge", None), getattr(rule, "gt", None)
        le, lt = getattr(rule, "le", None), getattr(rule, "lt", None)
        if isinstance(ge, int):
            low = ge
        elif isinstance(gt, int):
            low = gt + 1
        if isinstance(le, int):
            high = le
        elif isinstance(lt, int):
            high = lt - 1
        if isinstance(getattr(rule, "max_length", None), int):
            longest = rule.max_length
    return low, high, longest


def _widget(annotation: Any) -> tuple[Widget | None, tuple[Any, ...]]:
    """The kind of input for a field's type (``None`` inside a union is "may be left
    empty"), and a Literal's values."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        kept = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return _widget(kept[0]) if len(kept) == 1 else (None, ())
    if origin is Literal:
        return "choice", typing.get_args(annotation)
    if annotation is bool:
        return "bool", ()
    if annotation is int:
        return "int", ()
    if annotation is str:
        return "text", ()
    if origin is dict and typing.get_args(annotation) == (str, list[str]):
        return "lines", ()
    return None, ()


def fields_of(
    model: type[BaseModel], texts: Mapping[str, tuple[str, str]], kind: str = ""
) -> list[OptionField]:
    found = []
    for name, info in model.model_fields.items():
        widget, values = _widget(info.annotation)
        label, help_text = texts.get(name, (name, ""))
        low, high, longest = _bounds(info)
        labels = CHOICE_TEXTS.get((kind, name), {})
        found.append(
            OptionField(
                name=name,
                label=info.title or label,
                help=info.description or help_text,
                widget=widget,
                default=info.get_default(call_default_factory=True),
                low=low,
                high=high,
                max_length=longest,
                choices=tuple((str(v), labels.get(str(v), str(v))) for v in values),
                values=values,
            )
        )
    return found


PLATFORM_FIELDS: tuple[OptionField, ...] = tuple(fields_of(PlatformOptions, {}))


def app_set(impl: GameImpl) -> set[str]:
    """The options of ``impl``'s model the app sets, never a creator: the card pool of a kind
    that plays with the card registry (docs/cards.md), the rules' edition (``Game.edition``)."""
    found = {CARD_POOL, CARD_COLLECTIONS} if impl.uses_card_registry else set()
    if EDITION in impl.Options.model_fields:
        found.add(EDITION)
    return found


def game_fields(impl: GameImpl) -> list[OptionField]:
    """The game's own options a creator may give."""
    managed = app_set(impl)
    texts = GAME_TEXTS.get(impl.kind, {})
    return [o for o in fields_of(impl.Options, texts, impl.kind) if o.name not in managed]


def form_fields(impl: GameImpl) -> list[OptionField]:
    """The game's own options the /games/new form offers."""
    return [option for option in game_fields(impl) if option.widget is not None]


def _problems(
    error: ValidationError, fields: Mapping[str, OptionField], known: list[str]
) -> list[Problem]:
    problems: list[Problem] = []
    said: set[str] = set()
    for item in error.errors(include_url=False):
        where = item["loc"]
        name = str(where[0]) if where else ""
        if name in said:
            continue
        said.add(name)
        if item["type"] == "extra_forbidden":
            names = " / ".join(known)
            problems.append(Problem(name, UNKNOWN, {"name": name, "names": names}))
        elif name in fields:
            problems.append(fields[name].problem())
        else:
            problems.append(Problem(name, WHOLE))
    return problems


def check(impl: GameImpl, options: Any, *, injected: Mapping[str, Any] | None = None) -> Chosen:
    """The options of a new game of ``impl``'s kind, checked; ``injected`` are the app's
    (the card pool), put in whatever the creator sent, as is the rules' edition. Raises
    ``OptionsInvalid`` naming every bad option."""
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise OptionsInvalid([Problem("", NOT_AN_OBJECT)])
    own = {key: value for key, value in options.items() if key not in PLATFORM_OPTIONS}
    injected = dict(injected or {})
    if EDITION in app_set(impl):
        injected[EDITION] = impl.edition  # whatever the creator sent: games start on the newest
    own.update(injected)
    platform_fields = {option.name: option for option in PLATFORM_FIELDS}
    texts = GAME_TEXTS.get(impl.kind, {})
    fields = {option.name: option for option in fields_of(impl.Options, texts, impl.kind)}
    known = [option.name for option in game_fields(impl)] + list(PLATFORM_OPTIONS)
    problems: list[Problem] = []
    platform: PlatformOptions | None = None
    try:
        platform = PlatformOptions.model_validate(dict(options))
    except ValidationError as exc:
        problems += _problems(exc, platform_fields, known)
    checked: dict[str, Any] = {}
    try:
        checked = impl.Options.model_validate(own).model_dump(mode="json")
    except ValidationError as exc:
        problems += _problems(exc, fields, known)
    if problems or platform is None:
        raise OptionsInvalid(problems)
    for key, value in injected.items():
        checked.setdefault(key, value)
    return Chosen(
        game=checked,
        deadline_hours=platform.deadline_hours,
        mute_spectators=platform.mute_spectators,
    )


def from_form(impl: GameImpl, form: Mapping[str, str]) -> dict[str, Any]:
    """The ``options`` of the /games/new form for ``impl``'s kind: its own inputs are named
    ``<kind>.<option>``, the platform's by the option; the other kinds' inputs are ignored."""
    found: dict[str, Any] = {}
    for option in form_fields(impl):
        value = option.from_form(form.get(f"{impl.kind}.{option.name}"))
        if value is not MISSING:
            found[option.name] = value
    for option in PLATFORM_FIELDS:
        value = option.from_form(form.get(option.name))
        if value is not MISSING:
            found[option.name] = value
    return found


def input_name(kind: str, problem: Problem) -> str:
    """The form input a problem is about."""
    if problem.name in PLATFORM_OPTIONS or not problem.name:
        return problem.name
    return f"{kind}.{problem.name}"
