"""Two European-style person registers with the phenomena real registers hold, to measure
linkage by phenomenon (issue: link as well as the best non-private linker).

People are drawn from seven of faker's locales (German, French, Italian, Spanish, Turkish,
Polish, Dutch: names, streets, postcodes and cities of each country; faker is an optional
extra, pinned, because its lists decide what a seed gives). Spanish people carry two
surnames ("García López") and some Germans a hyphenated one; Dutch surnames keep their
particles ("van der Berg"). File A holds `size` people; file B holds copies of `overlap` of
them and other people, some of them namesakes of A's people (same first and last name,
another person).

Each copy in B gets one phenomenon (PHENOMENA, with the share of true pairs it is drawn for;
one that does not apply to the person, a compound cut for a single surname, say, falls back
to `none`), then 0 to 3 typos (ERRORS_PER_RECORD). The typos are this module's own simple
keyboard errors, not the project's error model, so the data is not made by the generator
the method trains on. B writes dates as DD.MM.YYYY, A as YYYY-MM-DD: every real pair of
registers has such a difference. truth.csv names each true pair's phenomenon.
"""

from __future__ import annotations

import csv
import io
import random
import unicodedata
from dataclasses import dataclass, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from pprl.protocol.data.reference_builder import build_reference, parse_column, reference_csv

LOCALES = ("de_DE", "fr_FR", "it_IT", "es_ES", "tr_TR", "pl_PL", "nl_NL")
FIELDS = ("first_name", "last_name", "sex", "date_of_birth", "postcode", "city", "street")
DATE_FORMATS = {"a": "%Y-%m-%d", "b": "%d.%m.%Y"}
# The phenomenon of each true pair and the share of pairs it is drawn for (the issue's
# measured set: 10% movers, 17% with a blank non-name field).
PHENOMENA = {
    "none": 0.30,
    "mover": 0.10,
    "blank": 0.17,
    "swap": 0.05,
    "compound_cut": 0.10,
    "married": 0.08,
    "diacritics": 0.12,
    "nfd": 0.08,
}
ERRORS_PER_RECORD = {0: 0.45, 1: 0.35, 2: 0.15, 3: 0.05}
# Shares of people: Spanish with two surnames, Germans with a hyphenated one; and of B's
# people without a partner, those sharing an A person's first and last name.
SPANISH_TWO_SURNAMES = 0.8
GERMAN_HYPHENATED = 0.15
NAMESAKES = 0.25
BLANKABLE = ("date_of_birth", "postcode", "city", "street")
TYPED = ("first_name", "last_name", "city", "street")
KEYBOARD = "qwertyuiopasdfghjklzxcvbnm"
# Letters without a Unicode decomposition, as registers transliterate them.
TRANSLITERATED = str.maketrans(
    {"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue", "ß": "ss", "ł": "l",
     "Ł": "L", "\u0131": "i", "\u0130": "I", "ø": "o", "Ø": "O", "ğ": "g", "ş": "s", "ç": "c"}
)  # fmt: skip


@dataclass(frozen=True)
class Person:
    locale: str
    first_name: str
    last_name: str
    sex: str
    born: date | None
    postcode: str
    city: str
    street: str

    def row(self, ident: str, side: str) -> dict[str, str]:
        return {
            "id": ident,
            "first_name": self.first_name,
            "last_name": self.last_name,
            "sex": self.sex,
            "date_of_birth": self.born.strftime(DATE_FORMATS[side]) if self.born else "",
            "postcode": self.postcode,
            "city": self.city,
            "street": self.street,
        }


@dataclass(frozen=True)
class Registers:
    alice: list[dict[str, str]]
    bob: list[dict[str, str]]
    truth: list[tuple[str, str, str]]  # (alice id, bob id, phenomenon)


class _People:
    """Faker generators per locale, seeded."""

    def __init__(self, rng: random.Random) -> None:
        from faker import Faker  # the optional extra, only when data is generated

        self.rng = rng
        self.fakers: dict[str, Any] = {}
        for k, locale in enumerate(LOCALES):
            self.fakers[locale] = Faker(locale)
            self.fakers[locale].seed_instance(rng.randrange(2**31) + k)

    def surname(self, locale: str) -> str:
        fake = self.fakers[locale]
        if locale == "es_ES" and self.rng.random() < SPANISH_TWO_SURNAMES:
            return f"{fake.last_name()} {fake.last_name()}"
        if locale == "de_DE" and self.rng.random() < GERMAN_HYPHENATED:
            return f"{fake.last_name()}-{fake.last_name()}"
        return str(fake.last_name())

    def address(self, locale: str) -> tuple[str, str, str]:
        fake = self.fakers[locale]
        street = f"{fake.street_name()} {fake.building_number()}"
        return str(fake.postcode()), self.city(locale), street

    def city(self, locale: str) -> str:
        """A town. faker's Italian provider lists its towns from a set, whose order changes
        with Python's string hashing from one process to the next: drawn here from them
        sorted, so that a seed gives the same registers in every process."""
        fake = self.fakers[locale]
        listed = [p for p in fake.providers if hasattr(p, "cities") and p.cities]
        if locale == "it_IT" and listed:
            return str(fake.random_element(sorted(listed[0].cities)))
        return str(fake.city())

    def person(self) -> Person:
        locale = self.rng.choice(LOCALES)
        fake = self.fakers[locale]
        sex = self.rng.choice("FM")
        first = fake.first_name_female() if sex == "F" else fake.first_name_male()
        born = date(1930, 1, 1) + timedelta(days=self.rng.randrange(75 * 365))
        return Person(locale, str(first), self.surname(locale), sex, born, *self.address(locale))


def _typo(text: str, rng: random.Random) -> str:
    """One keyboard error: a letter substituted, inserted, deleted, or two exchanged."""
    if len(text) < 2:
        return text + rng.choice(KEYBOARD)
    i = rng.randrange(len(text) - 1)
    kind = rng.randrange(4)
    if kind == 0:
        return text[:i] + rng.choice(KEYBOARD) + text[i + 1 :]
    if kind == 1:
        return text[:i] + rng.choice(KEYBOARD) + text[i:]
    if kind == 2:
        return text[:i] + text[i + 1 :]
    return text[:i] + text[i + 1] + text[i] + text[i + 2 :]


def _plain(text: str) -> str:
    """Accents dropped or transliterated, as a register without them writes the name."""
    decomposed = unicodedata.normalize("NFD", text.translate(TRANSLITERATED))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _with(person: Person, phenomenon: str, people: _People) -> tuple[Person, str]:
    """The copy of `person` with `phenomenon`, or unchanged and "none" where it cannot apply."""
    rng = people.rng
    if phenomenon == "mover":
        postcode, city, street = people.address(person.locale)
        return replace(person, postcode=postcode, city=city, street=street), phenomenon
    if phenomenon == "blank":
        field = rng.choice(BLANKABLE)
        if field == "date_of_birth":
            return replace(person, born=None), phenomenon
        blank: dict[str, Any] = {field: ""}
        return replace(person, **blank), phenomenon
    if phenomenon == "swap":
        return replace(person, first_name=person.last_name, last_name=person.first_name), phenomenon
    if phenomenon == "compound_cut":
        parts = person.last_name.replace("-", " ").split()
        if len(parts) > 1:
            return replace(person, last_name=parts[0]), phenomenon
    if phenomenon == "married" and person.sex == "F":
        return replace(person, last_name=people.surname(person.locale)), phenomenon
    accented = _plain(person.first_name + person.last_name) != person.first_name + person.last_name
    if phenomenon == "diacritics" and accented:
        first, last = _plain(person.first_name), _plain(person.last_name)
        return replace(person, first_name=first, last_name=last), phenomenon
    first = unicodedata.normalize("NFD", person.first_name)
    last = unicodedata.normalize("NFD", person.last_name)
    if phenomenon == "nfd" and first + last != person.first_name + person.last_name:
        return replace(person, first_name=first, last_name=last), phenomenon
    return person, "none"


def _typos(person: Person, rng: random.Random) -> Person:
    count = rng.choices(list(ERRORS_PER_RECORD), weights=list(ERRORS_PER_RECORD.values()))[0]
    for _ in range(count):
        field = rng.choice(TYPED)
        value = getattr(person, field)
        if value:
            typed: dict[str, Any] = {field: _typo(value, rng)}
            person = replace(person, **typed)
    return person


def generate(size: int, overlap: float, seed: int) -> Registers:
    """A's `size` people and B's as many: copies of `overlap` of A's, the rest others."""
    rng = random.Random(seed)
    people = _People(rng)
    alice = [people.person() for _ in range(size)]
    partnered = sorted(rng.sample(range(size), round(overlap * size)))
    names = list(PHENOMENA)
    shares = list(PHENOMENA.values())
    bob: list[tuple[Person, int | None, str]] = []
    for k in partnered:
        copy, phenomenon = _with(alice[k], rng.choices(names, weights=shares)[0], people)
        bob.append((_typos(copy, rng), k, phenomenon))
    for _ in range(size - len(partnered)):
        other = people.person()
        if rng.random() < NAMESAKES:
            twin = alice[rng.randrange(size)]
            other = replace(other, first_name=twin.first_name, last_name=twin.last_name)
        bob.append((_typos(other, rng), None, ""))
    rng.shuffle(bob)
    alice_rows = [p.row(f"A{k + 1:06d}", "a") for k, p in enumerate(alice)]
    bob_rows = [p.row(f"B{k + 1:06d}", "b") for k, (p, _, _) in enumerate(bob)]
    truth = [
        (alice_rows[partner]["id"], bob_rows[k]["id"], phenomenon)
        for k, (_, partner, phenomenon) in enumerate(bob)
        if partner is not None
    ]
    return Registers(alice_rows, bob_rows, sorted(truth))


# The reference set the registers' columns are mapped to (benchmarks/european/schema.toml),
# as `pprl reference --column` specifies it: census names, generated dates, codes and places.
REFERENCE_COLUMNS = (
    "first_name=first-name",
    "last_name=surname",
    "sex=category:F,M",
    "date_of_birth=date:1930-2005",
    "postcode=code:4-6",
    "city=suburb",
    "street=street",
)
REFERENCE_ROWS = 2000


def write_reference(out: Path, rows: int = REFERENCE_ROWS, seed: int = 7) -> Path:
    """reference.csv for the registers, as `pprl reference` writes it (a column's values do
    not depend on which other columns are built beside it)."""
    path = out / "reference.csv"
    columns = build_reference([parse_column(c) for c in REFERENCE_COLUMNS], rows, seed)
    path.write_text(reference_csv(columns), encoding="utf-8")
    return path


# Draws per locale and kind that estimate each name's chance: a name of a list of up to a few
# thousand is drawn about ten times or more (Polish surnames, a longer list, are not all).
NAME_DRAWS = 50000


def name_lists(locales: tuple[str, ...] = LOCALES) -> dict[str, dict[str, float]]:
    """Every first name and every surname faker's person providers of `locales` give, each
    with its chance under the generator's draw (a locale in `locales` evenly, then faker's
    own first_name() or last_name(), counted over NAME_DRAWS draws): the lists the people are
    drawn from, which a peer attacking these registers would use (the census lists of the
    privacy gate's default are the United States')."""
    # lazy: faker (the registers extra) loads only when the registers are drawn
    from faker import Faker

    found: dict[str, dict[str, float]] = {"first": {}, "surname": {}}
    for k, locale in enumerate(locales):
        fake = Faker(locale)
        fake.seed_instance(k)
        for kind, draw in (("first", fake.first_name), ("surname", fake.last_name)):
            for name in (str(draw()) for _ in range(NAME_DRAWS)):
                found[kind][name] = found[kind].get(name, 0.0) + 1.0 / NAME_DRAWS / len(locales)
    return found


def names_csv(lists: dict[str, dict[str, float]]) -> str:
    """A header (name, kind, weight), then every name of `lists` (`name_lists`) with its
    chance: the form `[privacy] dictionary` and `pprl audit --dictionary` read as two lists
    with frequencies."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["name", "kind", "weight"])
    for kind, weights in lists.items():
        writer.writerows([name, kind, f"{weights[name]:.6g}"] for name in sorted(weights))
    return buffer.getvalue()


def write_names(out: Path, locales: tuple[str, ...] = LOCALES) -> Path:
    """names.csv in `out`: `names_csv` of `locales`."""
    path = out / "names.csv"
    path.write_text(names_csv(name_lists(locales)), encoding="utf-8")
    return path


def write(registers: Registers, out: Path) -> list[Path]:
    """records_a.csv, records_b.csv and truth.csv (alice_id, bob_id, phenomenon) in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "records_a.csv", out / "records_b.csv", out / "truth.csv"]
    for path, rows in zip(paths, (registers.alice, registers.bob), strict=False):
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, ["id", *FIELDS])
            writer.writeheader()
            writer.writerows(rows)
    with paths[2].open("w", newline="", encoding="utf-8") as handle:
        writer_t = csv.writer(handle)
        writer_t.writerow(["alice_id", "bob_id", "phenomenon"])
        writer_t.writerows(registers.truth)
    return paths
