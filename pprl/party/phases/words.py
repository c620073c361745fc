"""What a daemon tells its operator about a run, in one place: the data report, the noise, the
privacy gate's attack, the expected linkage and the result. Each sentence names what the
operator can change; none carries a record's value."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pprl.protocol.model.classifier import TRAINER_WORDS
from pprl.protocol.privacy.audit import ATTACK_NAMES, AuditReport
from pprl.protocol.sealed.match_cost import SECONDS_PER_SLOT, MatchCost

REGISTERS_BY_DEFAULT = (
    "training will corrupt records with the register error model (nicknames, initials, "
    "swapped fields, blanks, changed surnames: docs/research/error-model.md), the default for "
    "a register's records; error_model = \"one-error\" in [method] gives the paper's single "
    "edit"
)


def data_words(report: dict[str, Any]) -> str:
    """The data report as one progress line."""
    shared = report["reference_shared"]
    parts = [
        "reference values shared with the records: "
        + (", ".join(f"{entry} {count}" for entry, count in shared.items()) or "none")
    ]
    if report["repeated_groups"]:
        parts.append(
            f"{report['repeated_records']} records in {report['repeated_groups']} groups share "
            "every compared value (kept; their pairs are marked for review)"
        )
    missing = {a: n for a, n in report["missing_values"].items() if n}
    if missing:
        parts.append("missing values: " + ", ".join(f"{a} {n}" for a, n in missing.items()))
    if report["unreadable_values"]:
        unreadable = ", ".join(f"{a} {n}" for a, n in report["unreadable_values"].items())
        parts.append(f"unreadable cells counted as missing: {unreadable}")
        # Most of a column unreadable is a format, not typos: a file that writes its dates
        # its own way loses them all, and TRAIN then expects a poor linkage without saying why.
        records = report.get("records", 0)
        for attribute, count in report["unreadable_values"].items():
            if records and count * 2 > records:
                parts.append(
                    f"{count:,} of {records:,} {attribute} cells cannot be read as its kind "
                    f"reads them: if it is a date written another way, [records] date_formats "
                    f'names the format (e.g. {{ {attribute} = "%d.%m.%Y" }})'
                )
    return "; ".join(parts)


def choosing_noise_words(sampled: int, limit: float) -> str:
    return (
        f"choosing the noise: the smallest sigma at which the gate's attack on {sampled} "
        f"sampled records stays within {limit:.1%}"
    )


def no_noise_passes_words(source: object, why: object) -> str:
    return (
        f'noise_sigma = "auto" in {source}: {why}; nothing was sent. Raise '
        "[privacy] max_reidentification or use a larger reference set (docs/research/privacy.md)"
    )


def agreed_noise_words(agreed: float, own: str, peer: str, proposed: float) -> str:
    return f"noise chosen for this run: sigma {agreed:g} (here {own}; {peer} proposed {proposed:g})"


def agreed_words(digest: str, peer: str, noise: str, seed: int | None) -> str:
    """AGREE's last line: the digest both hold and what the release will be."""
    seeded = (
        f"; development seed {seed}: this run's shuffle, noise and training are replayable, "
        "never use it with real records"
        if seed is not None
        else ""
    )
    return f"digest {digest[:16]}… matches {peer}'s; {noise}{seeded}"


def attack_words(report: AuditReport) -> str:
    """Which attacker the rate is of, when more than one ran."""
    if len(report.by_attack) < 2:
        return ""
    others = ", ".join(f"{a} {r:.1%}" for a, r in report.by_attack.items() if a != report.attack)
    return f"; strongest attacker: {ATTACK_NAMES[report.attack]} (others: {others})"


def recovered_words(report: AuditReport) -> str:
    """What the peer recovers besides whole records: each attacked attribute's values (a
    surname, say), and records with at least one name."""
    if not report.attributes:
        return "no name attribute attacked"
    each = ", ".join(
        f"{a.attribute} {a.recovered:.1%}" + (f" (with the {a.prior} list)" if a.prior else "")
        for a in report.attributes
    )
    return f"values recovered: {each}; records with any name recovered {report.record_exposed:.1%}"


def gate_words(
    report: AuditReport,
    measure: str,
    sampled: int,
    unaudited: list[str],
    combined: Sequence[str] = (),
) -> str:
    """What the privacy gate's attack found on the sampled records, and a warning when
    `combined` entries of attacked names that its joint attacker cannot read make that
    figure an understatement."""
    rate = report.rate(measure)
    counted = "every name" if measure == "every-name" else "at least one name"
    words = (
        f"a dictionary attack re-identified {rate:.1%} of {sampled} sampled records "
        f"({counted} recovered); {recovered_words(report)}{attack_words(report)}"
    )
    if unaudited:
        words += f"; not attacked by the name dictionary: {', '.join(unaudited)}"
    if combined:
        words += (
            f"; WARNING: {', '.join(combined)} is a further noisy look at names the gate "
            "attacks, which the gate cannot read with them here (its joint attacker needs the "
            "projected release and an entry of each name alone): an attacker who does "
            "re-identified up to twice the gate's figure (docs/research/privacy.md); map each name "
            "alone too, or leave combined entries out of [reference] mapping, where this "
            "limit must hold"
        )
    return words + coverage_words(report)


# Below this share of an attribute's values in the attacker's dictionary, the gate's figure
# says little: a peer with lists that fit the records learns more (docs/research/privacy.md measures
# four times as many European records re-identified with their countries' lists).
MIN_DICTIONARY_COVERAGE = 0.8


def coverage_words(report: AuditReport) -> str:
    """A warning when the dictionary misses many of the attacked values, else nothing."""
    thin = [a for a in report.attributes if a.audited and a.in_dictionary < MIN_DICTIONARY_COVERAGE]
    if not thin:
        return ""
    shares = ", ".join(f"{a.attribute} {a.in_dictionary:.1%}" for a in thin)
    return (
        f"; WARNING: the dictionary holds only {shares} of these values (the rest misspelt, "
        "or names from lists it lacks), so this figure holds only for an attacker with that "
        "list: if your records' names come from other countries' lists, one with those "
        "learns more; give [privacy] dictionary a list of them (`pprl dictionary --locales` "
        "writes one from faker's lists; docs/research/privacy.md)"
    )


def gate_refused_words(found: str, limit: float, source: object) -> str:
    return (
        f"privacy gate: {found}, above the limit of {limit:.1%} "
        f"([privacy] max_reidentification in {source}); nothing was sent. "
        "Add noise ([method] noise_sigma or attack_success) or, knowing what the peer "
        "learns (docs/research/privacy.md), raise the limit"
    )


def whose_noise_words(peer: str, agreed: float, own: float) -> str:
    """When the peer's gate asked for more noise than this party's: the linkage this party
    expects is then the peer's choice's."""
    return (
        f"; the noise is {peer}'s proposal, sigma {agreed:g}, where this party's own gate "
        f"needed sigma {own:g}"
    )


def scored_words(scored: int, share: float, bounded: bool, kept: int) -> str:
    """How many pairs MATCH scored, and kept."""
    what = (
        f"scored {scored:,} candidate pairs ({100 * share:.3f}% of all pairs)"
        if bounded
        else f"no bound applies to this classifier: scored all {scored:,} pairs"
    )
    return f"{what}, kept {kept}"


def linkage_words(agreed: int, review: int) -> str:
    return f"{agreed} pairs accepted by both ({review} marked for review in linkage.csv)"


# -- progress: what each phase is doing ------------------------------------------------
def waiting_words(peer: str) -> str:
    return f"waiting for {peer}'s agreement"


def own_noise_words(choice: str) -> str:
    return f"own noise: {choice}"


SMASHING = "computing edit distances to the reference set"
GATE_ATTACKING = "privacy gate: dictionary attack on a sample of the tensor"
PEER_RECEIVED = "peer received them"


def smashed_words(shape: tuple[int, ...]) -> str:
    return f"smashed tensor {shape}"


def gate_passed_words(found: str, limit: float) -> str:
    return f"privacy gate passed: {found}, limit {limit:.1%}"


def training_words(classifier: str, records: int) -> str:
    fitted = TRAINER_WORDS[classifier]
    return f"training {fitted} on synthetic pairs of {records} own records (Algorithm 2)"


def trained_words(pairs: int, movers: Sequence[str] = (), odds: float = 0.0) -> str:
    """`movers`: the address attributes a second model leaves out (`mover_odds`)."""
    said = f"trained on {pairs} pairs"
    if movers:
        said += (
            f", and a second model without {', '.join(movers)}: a pair whose address "
            f"disagrees (a move) still links at log-odds >= {odds:g} from its other fields "
            "([method] mover_odds; docs/research/error-model.md)"
        )
    return said


def estimating_words(trained: str) -> str:
    return f"{trained}; estimating the linkage it will give"


def sending_tensor_words(peer: str) -> str:
    return f"sending smashed tensor to {peer}"


def checksum_words(megabytes_per_second: float) -> str:
    return f"peer confirmed the checksum ({megabytes_per_second:.0f} MB/s)"


def soft_linkage_words(top_k: int) -> str:
    return f"soft linkage: the {top_k} best peer records of each"


def soft_kept_words(pairs: int) -> str:
    return f"soft linkage: kept {pairs} pairs"


def sending_pairs_words(peer: str) -> str:
    return f"sending accepted pairs to {peer}"


# -- why a phase stops ------------------------------------------------------------------
def digests_differ_words(why: str) -> str:
    return f"agreement digests differ ({why}); the run cannot go on"


def records_changed_words(path: object) -> str:
    return f"{path} changed since this run's agreement; start a new run"


def peer_gone_words(run_id: str, stored: str, configured: list[str]) -> str:
    return (
        f"run {run_id} links with {stored or 'an unnamed peer'!r}, which is no longer among "
        f"the configured peers ({', '.join(configured)}); abandon the run"
    )


def match_cost_words(cost: MatchCost, projected: bool) -> str:
    """MATCH's cost for this party's scoring (the peer's as much again) and, where the keys'
    look-alikes make it grow with the product of the files, a warning with the remedies."""
    lead = "MATCH projected from the simulated join" if projected else "MATCH will take"
    said = (
        f"{lead}: {cost.candidates:,} candidate pairs in {cost.slots:,} slots "
        f"({cost.batches:,} batches), {_bytes(cost.bytes_both_ways)} both ways, about "
        f"{_duration(cost.seconds)} at {SECONDS_PER_SLOT * 1000:g} ms a slot (measured on 2 "
        "cores running both parties; the peer's scoring as much again)"
    )
    if not cost.quadratic:
        return said
    return said + (
        f"; WARNING: the blocking keys join each record with about {cost.lookalikes:.0f} "
        "look-alikes besides its partner, so MATCH grows with the product of the files "
        "(ten times the records, about a hundred times the slots): add a date of birth or a "
        "place to the compared attributes and keys ([method] sealed_keys), or split both files "
        "by a value both hold (a region, a birth year) and link each part on its own"
    )


def _bytes(count: int) -> str:
    return f"{count / 1e9:.1f} GB" if count >= 1e8 else f"{count / 1e6:.0f} MB"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
