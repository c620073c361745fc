"""Sealed linkage as two daemons run it, step by step, with no file and no network: what each
step takes from the agreement and gives the next (pprl.party.phases.sealed runs them).

1. Each party derives blocking keys from its own plaintext by the agreed recipes, per row of
   its secretly shuffled records, and blinds them once with a fresh scalar (`blinded_rows`).
2. Each sends them to the other, which blinds them again and returns them (`reblinded`); the
   re-blinder keeps what it returns. Both now hold both parties' doubly blinded keys and
   derive the same candidate pairs (`candidates`): the rows that share a key.
3. Each party scores its own classifier on the candidates under CKKS with the peer as the
   evaluator (`scoring`), in the layout both derive from the candidates (`score_layout`), and
   learns each pair's bucket among the agreed thresholds, nothing else.
4. Each keeps a one-to-one assignment of the accepted pairs, highest bucket first, ties broken
   the same way on both sides (`one_to_one`); REVEAL and LINK then run as for any encoding.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from pprl.protocol.data.error_model import MODELS
from pprl.protocol.data.kinds import KINDS
from pprl.protocol.errors import SettingError
from pprl.protocol.linkage import matching
from pprl.protocol.linkage.matching import GREEDY, Matches
from pprl.protocol.sealed.blinding import POINT_BYTES, Blinder, split
from pprl.protocol.sealed.joins import DEFAULT_JOIN, HIDDEN, default_join, join_named
from pprl.protocol.sealed.layout import Layout, best_rounds, layout
from pprl.protocol.sealed.parameters import CRYPTO, DEFAULT_CRYPTO, CkksSetting
from pprl.protocol.sealed.recipes import (
    BLANKS_AGREE,
    FALLBACK,
    TRANSFORMS,
    UNORDERED,
    Recipe,
    parse_recipes,
    prefixed,
    recipe_keys,
    written_recipes,
)
from pprl.protocol.sealed.shared_keys import shared_key_pairs

# The scores each candidate pair's is compared with: 0 decides; the others give the bucket
# the one-to-one step orders by. Evenly spaced, for scores each party scales to put its
# identity score at 12 (linear_form.score_scale): on FEBRL4 names as good as exact scores
# (docs/research/sealed.md).
DEFAULT_THRESHOLDS = "0,1.6,3.2,4.8,6.4,8,9.6,11.2,12.8,14.4,16"
# Random features per entry of a kernel model (kernel_features); 0: a model linear in the
# distances, the default for names alone when training never swaps names (the paper's
# one-error model). There the kernel links worse: the demo's data 0.9624 against 0.9832 (one
# process, its keys in field order; 0.9643 in either order).
DEFAULT_KERNEL_FEATURES = 0
# ... and the default when the records hold more than names: there a value a typo moved far
# (a date, a postcode) is what the kernel's saturation forgives. Through two daemons, FEBRL4's
# ten fields with the README's generated reference set 0.9986 against 0.9887, names with date
# of birth and postcode 0.9671 against 0.9547; the European registers 0.9937 against 0.9942;
# MATCH +2-3 s and +37% bytes at 5,000 a side (docs/research/sealed.md, "The model"). 48 features an
# entry, not 64, since 2026-11-28: beyond names the extra draws linked no better (through two
# daemons, 48 / 64: FEBRL4's ten fields 0.9997 / 0.9997, names and date of birth 0.9592 /
# 0.9593, the European registers 0.9971 / 0.9969) and each entry is D + 1 ciphertexts a
# batch, so 48 send 22% fewer bytes.
KERNEL_FEATURES_BEYOND_NAMES = 48
# On names alone trained on copies that swap names (the register model, itself the default
# for a register's records), a kernel too, with the names' keys read in either order: each
# alone costs, together they link the swapped pairs (one process, register training, hidden
# join; F1 linear/kernel with keys in field order, then in either order: FEBRL4 names
# 0.7977/0.7819, 0.7929/0.8073; generated namesakes 0.8068/0.7962, 0.8073/0.8165; the demo's
# data 0.9801/0.9858, 0.9801/0.9855; JSON docs/research/results/sealed_order_kernel_*.json). Through
# two daemons FEBRL4 names 0.8099 against 0.7938, the namesakes 0.8178 against 0.8084
# (medians of 3). Here the names are all the kernel sees, and 48 features cost about 0.003
# (48 / 64, two runs each: FEBRL4 names 0.8283, 0.8246 / 0.8270, 0.8314; the namesakes
# 0.8261, 0.8254 / 0.8278, 0.8292; 50,000 a side 0.7912 / 0.7942 for 1.70 / 2.18 GB). With
# a cosine and a sine a frequency (kernel_features) 48 link as 64 at 5,000 a side in one
# process, but 50,000 a side 0.8221 / 0.8268 for 0.92 / 1.09 GB the larger party
# (docs/research/sealed.md,
# "A cosine and a sine a frequency"; 64 send 0.99 GB since ciphertexts are packed, "Coefficients
# packed at their primes' widths"). An initial's entry takes 26 of them, exactly
# (pprl.protocol.sealed.exact_entries).
KERNEL_FEATURES_NAMES = 64
# More than this many an entry is refused: the scoring party's ciphertexts grow with it.
MAX_KERNEL_FEATURES = 4096
# Below one bucket: a tie-break never lifts a pair over a higher bucket.
_TIE_SCALE = 1e-3


def thresholds(text: str) -> tuple[float, ...]:
    """The agreed thresholds, written as numbers separated by commas, rising from 0."""
    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise SettingError(
            f"must be numbers separated by commas, got {text!r}", setting="sealed_thresholds"
        ) from None
    if not all(math.isfinite(v) for v in values) or values[0] != 0.0:
        raise SettingError(f"must start at 0, got {text!r}", setting="sealed_thresholds")
    if list(values) != sorted(set(values)):
        raise SettingError(f"must rise, got {text!r}", setting="sealed_thresholds")
    return values


def thresholds_text(values: Iterable[float]) -> str:
    """Thresholds written as the default writes them ("0,1.6", not "0.0,1.6"): the text goes
    into the agreement's digest, so a party that writes the default out must agree with one
    that leaves it out."""
    texts = (repr(float(v)) for v in values)
    return ",".join(t.removesuffix(".0") for t in texts)


def check_settings(settings: Mapping[str, Any]) -> None:
    """The sealed settings' own checks; the recipes' attributes are checked at AGREE, against
    the records (`recipes`)."""
    thresholds(str(settings.get("sealed_thresholds", DEFAULT_THRESHOLDS)))
    crypto = settings.get("sealed_crypto", DEFAULT_CRYPTO)
    if crypto not in CRYPTO:
        raise SettingError(
            f"unknown parameter set {crypto!r}; expected one of {', '.join(CRYPTO)}",
            setting="sealed_crypto",
        )
    features = settings.get("sealed_kernel_features", DEFAULT_KERNEL_FEATURES)
    if (
        not isinstance(features, int)
        or isinstance(features, bool)
        or not 0 <= features <= MAX_KERNEL_FEATURES
        or features % 2
    ):
        raise SettingError(
            f"must be an even whole number (a cosine and a sine a frequency) from 0 (a model "
            f"linear in the distances) to {MAX_KERNEL_FEATURES}, got {features!r}",
            setting="sealed_kernel_features",
        )
    join_named(str(settings.get("sealed_join", DEFAULT_JOIN)))
    written = str(settings.get("sealed_keys", ""))
    if not written.strip():
        raise SettingError(
            'encoding "sealed" needs blocking-key recipes, e.g. sealed_keys = '
            '["date_of_birth+surname:soundex", "surname:soundex+given_name:soundex+postcode"] '
            "(docs/research/sealed.md)",
            setting="sealed_keys",
        )
    for _, meaning in written_recipes(written):
        for _, name in meaning.parts:
            if name not in TRANSFORMS:
                raise SettingError(
                    f"unknown transform {name!r} (known: {', '.join(TRANSFORMS)})",
                    setting="sealed_keys",
                )


def _names_only(kinds: Mapping[str, str]) -> bool:
    """Whether every attribute is a name: the schemas whose model depends on training."""
    return all(kind == "name" for kind in kinds.values())


def default_kernel_features(kinds: Mapping[str, str], error_model: str) -> int:
    """Random features per entry when the operator names none: a kernel model where the
    records hold an attribute that is not a name, or where they hold names alone and
    training (`error_model`) swaps them; a linear one otherwise."""
    if not _names_only(kinds):
        return KERNEL_FEATURES_BEYOND_NAMES
    return KERNEL_FEATURES_NAMES if MODELS[error_model].swaps else DEFAULT_KERNEL_FEATURES


def default_recipes(kinds: Mapping[str, str], error_model: str, hidden: bool | None = None) -> str:
    """Blocking-key recipes for a schema (attribute -> kind, in the records' order), when the
    operator names none. Each needs two or three attributes to agree, the date of birth or
    both names among them, so that people without a partner rarely share one (measured on
    FEBRL4's ten fields: docs/research/sealed.md):

    - a date with any name's Soundex code (`given_name|surname`: a name's code under one
      recipe whichever field holds it, so a pair whose names were swapped between the fields
      shares it; FEBRL4 names and date of birth through two daemons: F1 0.9401 against
      0.9027 with a recipe per name, 89.7% of the true pairs joined against 83.1%, 0.5% of the
      people without a partner re-identified against 0.4%); its year, and its month and day,
      with the first and last names' codes; the date with each place or number;
    - the first and last names' codes with each place or number;
    - any name's code with each two numbers (a street number and a postcode, say): these
      hold pairs whose date and one name both changed (FEBRL4: 4,944 of its 5,000 true pairs
      joined against 4,803 without them, no more pairs without a partner);
    - with names only, the codes of every two names together, and nothing looser: keys that
      find more partners on names alone leak (docs/research/sealed.md); those with the first
      name read
      in either order where `error_model` swaps names (FEBRL4's two names joined in 77.3% of
      true pairs against 71.5%; KERNEL_FEATURES_NAMES for what they link); with the
      hidden join (`hidden`; by default the join `joins.default_join` gives the kinds), also
      every two names' first three letters: FEBRL4 names through two daemons F1 0.7956
      against 0.7286 with the codes alone, the generated namesakes 0.8068 against 0.7743 (in
      one process), 4.5% and 3.7% of the people without a partner re-identified where the
      keys' graph let 13.7% and 16.1%;
    - with two names and a date or a place, both names' codes as a fallback: only rows that
      no other recipe keys (a blank date) look for the peer's rows by it, and the peer's rows
      are found by it (recipes.recipe_keys; FEBRL4 names and date of birth through two
      daemons: F1 0.9579 against 0.9401, the people without a partner re-identified 1.0%
      against 0.5%, where the same codes as an ordinary key give 0.9659 and 8.0%);
    - an identifier (kind "identifier": a social security number) alone: one that two
      records share names one person (FEBRL4 through the daemons: F1 0.9984 with it, 0.9936
      without);
    - without an identifier, each of these that reads a name's code again with the name's
      first three letters (through two daemons, FEBRL4 names, date of birth and postcode:
      F1 0.9721 against 0.9671, 95.0% of the true pairs joined against 93.8%, 0.5% of the
      people without a partner re-identified either way; the European registers 0.9952
      against 0.9937 at 5,000 a side, 0.9954 against 0.9940 at 50,000, 171 s against 129 s;
      both measured before the recipes read either name, which gave 0.9756, 0.9959 and
      0.9953).
    """
    identifiers = [a for a, kind in kinds.items() if KINDS[kind].identifies]
    # Each attribute's part (Kind.blocking_role): a number is also a place, and two numbers
    # with one name still single a person out, where free text (a street name) would join
    # look-alikes.
    roles = {a: KINDS[kind].blocking_role for a, kind in kinds.items()}
    names = [a for a, role in roles.items() if role == "name"]
    dates = [a for a, role in roles.items() if role == "date"]
    places = [a for a, role in roles.items() if role in ("place", "number")]
    # The first and the last name attribute: a given name and a surname, usually.
    pair = [names[0], names[-1]] if len(names) >= 2 else []
    both = [f"{n}:soundex" for n in pair]
    # Any name's code: one part that reads every name attribute (recipes.Recipe).
    either = "|".join(names)
    recipes = list(identifiers)
    for date in dates:
        recipes += [f"{date}+{either}:soundex"] if names else []
        if len(both) == 2:
            recipes += [f"{date}:year+{'+'.join(both)}", f"{date}:month-day+{'+'.join(both)}"]
        recipes += [f"{date}+{place}" for place in places]
    if len(both) == 2:
        recipes += [f"{'+'.join(both)}+{place}" for place in places]
    numbers = [a for a in places if roles[a] == "number"]
    recipes += [
        f"{either}:soundex+{first}+{second}"
        for first, second in itertools.combinations(numbers, 2)
        if names
    ]
    # Without an identifier, each recipe above that reads a name's code again with the name's
    # first three letters: a typo that changes a code mostly falls after them, and with a
    # date or a place beside the name such a key is as rare as the coded one. An identifier
    # keyed alone already joins the pairs a typo hides (FEBRL4's ten fields: the same F1 with
    # the twins, 10 s more of blinding).
    if not identifiers:
        recipes += [prefixed(r) for r in recipes if ":soundex" in r]
    if len(both) == 2 and (dates or places):
        # A row the recipes above leave without a key (its date blank, and no place) looks for
        # the peer's rows by both names' codes, and is found by them (a fallback recipe,
        # recipes.recipe_keys). Its prefixed twin added 0.003 for 0.7 points more of the
        # people without a partner re-identified, so it has none (docs/research/sealed.md).
        recipes.append(f"{FALLBACK}{'+'.join(both)}")
    if len(both) == 2 and not dates and not places:
        # Two names' codes per key, every two of the names: each name with the other's
        # initial found more partners on FEBRL4 names (F1 0.79 against 0.73) but let the
        # list-of-people attack re-identify 46% of the people without a partner, against
        # 7.5%; with a middle name, its code with each other name's holds the pairs whose
        # first name or surname changed (generated namesakes: F1 0.7753, 9.6%;
        # docs/research/sealed.md).
        # Those with the first name read in either order where training swaps names (a swap
        # moves the first name to another name's field; the kernel model then links the
        # swapped pairs they join: KERNEL_FEATURES_NAMES). The middle and last names'
        # recipe stays in order: no swap joins it, and either order would join more namesakes
        # for no F1 (generated namesakes through two daemons 0.8178 against 0.8174, medians of
        # 3; 19.9% of the people without a partner hold a key of the peer's, against 20.6%,
        # and 13.7% with every recipe in order: docs/research/privacy.md).
        # The first and last names' codes let blanks agree: a pair blank in one of them on
        # both sides shares the other's code, which few rows blank alike share (FEBRL4
        # names: 91 more of the non-private linker's pairs joined for 3% more slots, and the
        # people without a partner sharing a key of the peer's 12.1% -> 12.4%). Not with a
        # middle name, often blank, beside them: the blank middle's recipes then act as one
        # name's key (the generated namesakes, the middle and last names' too: 99 pairs more,
        # but 22.6% -> 32.4% of those people sharing a key, and no F1); nor in the prefixed
        # twins (FEBRL4: 11 for 4% more slots; docs/research/sealed.md, "Blank names").
        swapped = UNORDERED if MODELS[error_model].swaps else ""
        codes = [
            (swapped if a == names[0] else "", f"{a}:soundex+{b}:soundex", [a, b] == pair)
            for a, b in itertools.combinations(names, 2)
        ]
        recipes += [
            f"{marks}{BLANKS_AGREE if first_last else ''}{parts}"
            for marks, parts, first_last in codes
        ]
        if default_join(kinds) == HIDDEN.name if hidden is None else hidden:
            # The first and last names' first letters, and the two names one edit apart (a
            # typo anywhere, the first letter too, which changes both the code and the
            # prefix) with the other's code: under the hidden join a row's such keys are one
            # entry, so a pair takes one slot for each (recipes.entry_groups). Through two
            # daemons, medians of 3: FEBRL4 names 0.8359 -> 0.8442, the European registers'
            # names 0.8520 -> 0.9107; docs/research/sealed.md, "Names one edit apart". With them the
            # middle name's first letters add nothing (the generated namesakes in one process
            # 0.8534 either way, 28,310 slots against 37,366; at 50,000 a side 369,000 slots a
            # direction against 516,000 for the recipes before), so only the first and last
            # names' are read.
            recipes += [prefixed(marks + parts) for marks, parts, first_last in codes if first_last]
            first, last = pair
            recipes += [f"{first}:neighbours+{last}:soundex", f"{first}:soundex+{last}:neighbours"]
            # A middle name's code with the last name one edit apart: it holds the pairs whose
            # first name was replaced and whose surname took a typo (the generated namesakes
            # in one process: F1 0.8562 -> 0.8628, the people without a partner re-identified
            # 4.1% -> 4.0% and found in the file with certainty 16.4% either way). Not the
            # first name one edit apart with the middle name's code: 0.0025 more beside it
            # for 0.8 points more re-identified and 1.6 more found
            # (docs/research/sealed.md, "A middle
            # name with the last name one edit apart").
            recipes += [f"{middle}:soundex+{last}:neighbours" for middle in names[1:-1]]
    if not recipes:
        raise SettingError(
            "no default blocking keys for these attributes (they need two names, or a date "
            "with a name or a place): name them in sealed_keys",
            setting="sealed_keys",
        )
    return ",".join(recipes)


def setting(crypto: str, written_thresholds: str) -> CkksSetting:
    """The agreed CKKS parameters with the agreed thresholds."""
    base = CRYPTO[crypto]
    return CkksSetting(
        poly_modulus_degree=base.poly_modulus_degree,
        coeff_mod_bit_sizes=base.coeff_mod_bit_sizes,
        scale_bits=base.scale_bits,
        factor_bits=base.factor_bits,
        flood_bits=base.flood_bits,
        thresholds=thresholds(written_thresholds),
    )


def recipes(written: str, attributes: Sequence[str]) -> tuple[Recipe, ...]:
    """The agreed recipes, each part an attribute of these records."""
    try:
        return parse_recipes(written, attributes)
    except SettingError as error:
        raise SettingError(str(error), setting="sealed_keys") from None


def row_keys(
    chosen: Sequence[Recipe], columns: Mapping[str, Sequence[str]], order: np.ndarray, first: bool
) -> list[list[str]]:
    """Per released row (the records in the secret `order`), its blocking keys; `first`: this
    party's identity is the lower of the two (a fallback recipe's side, recipes.recipe_keys)."""
    shuffled = {a: [values[i] for i in order] for a, values in columns.items()}
    return recipe_keys(shuffled, chosen, first)


def key_context(digest: str, run_id: str) -> bytes:
    """What binds every key to this run: equal keys of two runs hash apart."""
    return f"pprl sealed keys|{digest}|{run_id}".encode()


def blinded_rows(
    blinder: Blinder, context: bytes, rows: Sequence[Sequence[str]]
) -> tuple[np.ndarray, bytes]:
    """Each row's keys blinded once, as (keys per row, their values concatenated): every
    distinct key is blinded once and reused."""
    distinct = sorted({key for keys in rows for key in keys})
    blinded = dict(zip(distinct, blinder.blind_keys(context, distinct), strict=True))
    counts = np.fromiter((len(keys) for keys in rows), dtype=np.int64, count=len(rows))
    return counts, b"".join(blinded[key] for keys in rows for key in keys)


def reblinded(blinder: Blinder, values: bytes, what: str) -> bytes:
    """The peer's once-blinded values blinded again, in the same order (a repeated value is
    blinded once)."""
    received = split(values, len(values) // POINT_BYTES, what)
    distinct = sorted(set(received))
    again = dict(zip(distinct, blinder.reblind(distinct, what), strict=True))
    return b"".join(again[value] for value in received)


def grouped(counts: np.ndarray, values: bytes) -> list[list[bytes]]:
    """(keys per row, values) back into each row's keys."""
    if int(counts.sum()) * POINT_BYTES != len(values):
        raise ValueError(f"{len(values)} bytes for {int(counts.sum())} keys")
    out, start = [], 0
    for count in counts.tolist():
        end = start + count * POINT_BYTES
        out.append([values[i : i + POINT_BYTES] for i in range(start, end, POINT_BYTES)])
        start = end
    return out


def candidates(own: Sequence[Sequence[bytes]], peer: Sequence[Sequence[bytes]]) -> np.ndarray:
    """(pairs, 2) (own row, peer row), sorted: the rows sharing a doubly blinded key."""
    return shared_key_pairs(own, peer)


def candidates_sha256(pairs: np.ndarray) -> bytes:
    """Of the pairs in the scoring party's orientation, sorted: both sides compute it."""
    ordered = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))] if len(pairs) else pairs
    return hashlib.sha256(np.ascontiguousarray(ordered, dtype="<i8").tobytes()).digest()


def score_layout(
    pairs: np.ndarray, ckks: CkksSetting, coordinates: int, returned: int | None = None
) -> Layout:
    """Where the scoring party's pairs ((its row, the evaluator's row)) sit in the slots, for
    `coordinates` ciphertexts a batch (the constant included; both parties know it: the
    peer's vectors are as wide as its own) and `returned` a round (two thresholds each, and the
    movers' alternative's score)."""
    back = ckks.threshold_ciphertexts if returned is None else returned
    rounds = best_rounds(pairs, ckks.slots, coordinates, back)
    return layout(pairs, ckks.slots, rounds)


def one_to_one(
    pairs: np.ndarray, buckets: np.ndarray, first: bool, digest: str, assignment: str = GREEDY
) -> Matches:
    """The accepted pairs (bucket > 0) one to one by the agreed `assignment` on their
    buckets: greedy, highest bucket first, or the matching of largest total bucket (the
    default with register training, as for the other encodings: on FEBRL4 names, in
    plaintext, 0.7735 against greedy's 0.7609; docs/research/sealed.md). Ties in an order both
    parties derive from the run (`first`: this party's rows come first in it), so that equal
    buckets do not make the two sides choose differently."""
    accepted = np.flatnonzero(buckets > 0)
    chosen = pairs[accepted]
    canonical = chosen if first else chosen[:, ::-1]
    tie = _tie(canonical, digest)
    scores = buckets[accepted].astype(np.float64) - _TIE_SCALE * tie
    return matching.one_to_one(Matches(chosen[:, 0], chosen[:, 1], scores), assignment)


def _tie(pairs: np.ndarray, digest: str) -> np.ndarray:
    """A value in [0, 1) per pair from the pair and the run alone (SplitMix64 of both rows)."""
    seed = np.uint64(int.from_bytes(hashlib.sha256(digest.encode()).digest()[:8], "big"))
    with np.errstate(over="ignore"):
        x = (pairs[:, 0].astype(np.uint64) << np.uint64(32)) ^ pairs[:, 1].astype(np.uint64)
        x = x ^ seed
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(11)).astype(np.float64) / float(1 << 53)
