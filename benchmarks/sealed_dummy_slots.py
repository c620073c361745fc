"""Can a scorer tell a fixed count's dummy slot from a real reject, from what it decrypts?

With a fixed count C (benchmarks/sealed_hidden_join.py --fixed-count) the evaluator tells
every entry C slots and fills those its rows do not with dummies, which must decrypt as
rejects the scorer cannot tell from real ones, or the count is given back. Per slot the
scorer decrypts, for each agreed threshold t_k, r_k (s - t_k) + e: r_k log-uniform within
the setting's factor bits, independently per threshold, e Gaussian at 2^flood_bits
(pprl.protocol.sealed.scoring; every slot of the hidden join is ranked, so every threshold's
value comes back). A reject's values are all negative and their sizes bound |s - t_k|.

Simulated here in plaintext, both directions, on the scaled scores sealed scoring computes
(lab.in_process.scoring_forms) and the hidden join's entries and rows (joined on the keys in
the clear, which joins as the blinded ones do), each entry cut to C rows (the evaluator's
first, a random choice) and the rest of its C slots dummies. Compared: the real slots that
decrypt to a reject, and the dummies that do, filled by each rule (`RULES`). The attackers,
trained on half the slots and measured on the other half, then the other way round, over
`--repeats` draws of the factors and noise (mean AUC, 0.5 is chance): the mean of
the log2 magnitudes; the interval of |s| the magnitudes allow (its geometric middle); a
logistic regression on the log2 magnitudes; and gradient boosting on them with the scorer's
own row's constant and its mean score against its own file (which it can compute). The
ceiling: the AUC of the exact score. Also reported: the share of a rule's dummies that
decrypt to an accept (a named dummy is refused, which tells the scorer), and how well the
bucket alone tells a dummy from any real slot, accepted or not (`all_slots_bucket`): what
the decisions give back of the counts whatever the dummies' magnitudes.

    python benchmarks/sealed_dummy_slots.py --records-a A.csv --records-b B.csv \\
        --truth T.csv --reference REF.csv --schema SCHEMA.toml --count 1 --json out.json
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from lab.in_process import (
    ScoringForm,
    add_table_arguments,
    run_command,
    scoring_forms,
    sealed_inputs,
    sealed_parties,
)
from lab.result_file import write_result
from pprl.protocol.sealed import hidden_join, linear_form, session
from pprl.protocol.sealed.parameters import CkksSetting
from pprl.protocol.sealed.recipes import group_size

# How the evaluator fills a dummy slot of entry e, scored against the scorer's row of e:
#   random   a random row of its own (that does not hold e's key)
#   holder   the row of a random real slot of another entry: a row that holds some key the
#            scorer sent (slots weighted alike)
#   scaled   a random row's vector times lambda, the lambda (of LAMBDAS) at which the
#            evaluator's own model scores its own rows' rejected near misses and such dummies
#            most alike (a check entry, scored on no vector, still decrypts to its bucket)
#   sampled  no vector: the score of one of its own model's rejected near misses among its own
#            rows, put in the slot as a constant (a check entry's slot then fails its check)
#   oracle   a row that holds another key of the scorer's row (not computable by the
#            evaluator, which cannot tell which entries share a row): a reference
RULES = ("random", "holder", "scaled", "sampled", "oracle")
LAMBDAS = np.round(np.arange(0.0, 3.0001, 0.05), 2)


def decrypted(scores: np.ndarray, setting: CkksSetting, rng: np.random.Generator) -> np.ndarray:
    """(slots, thresholds) what the scorer decrypts of each slot's score: r_k (s - t_k) + e."""
    low, high = setting.factor_bits
    shape = (len(scores), len(setting.thresholds))
    factors = 2.0 ** rng.uniform(low, high, shape)
    noise = rng.normal(0.0, 2.0**setting.flood_bits, shape)
    return factors * (scores[:, None] - np.asarray(setting.thresholds)[None, :]) + noise


def interval_middle(values: np.ndarray, setting: CkksSetting) -> np.ndarray:
    """log2 of the geometric middle of the |s| every threshold's value allows, for rejects
    (|s - t_k| = |s| + t_k, r_k within the factor bits)."""
    low, high = setting.factor_bits
    t = np.asarray(setting.thresholds)[None, :]
    size = np.abs(values)
    lowest = np.maximum(np.max(size / 2.0**high - t, axis=1), 1e-6)
    highest = np.maximum(np.min(size / 2.0**low - t, axis=1), lowest)
    return 0.5 * (np.log2(lowest) + np.log2(highest))


def oriented_auc(train_y: np.ndarray, train_s: np.ndarray, y: np.ndarray, s: np.ndarray) -> float:
    """A statistic's AUC on the test half, its direction chosen on the training half."""
    sign = 1.0 if roc_auc_score(train_y, train_s) >= 0.5 else -1.0
    return float(roc_auc_score(y, sign * s))


def attacks(
    values: np.ndarray,
    own_row: np.ndarray,
    dummy: np.ndarray,
    setting: CkksSetting,
    train: np.ndarray,
    test: np.ndarray,
) -> dict[str, float]:
    """Each attacker's AUC on `test` at telling the dummies (`dummy` 1) from real rejects,
    trained on `train`; `own_row` holds what the scorer knows of each slot's own row."""
    logs = np.log2(np.abs(values) + 1e-9)
    stats = {"mean_log": logs.mean(axis=1), "interval": interval_middle(values, setting)}
    out = {
        name: oriented_auc(dummy[train], s[train], dummy[test], s[test])
        for name, s in stats.items()
    }
    logistic = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    logistic.fit(logs[train], dummy[train])
    out["logistic"] = float(roc_auc_score(dummy[test], logistic.predict_proba(logs[test])[:, 1]))
    both = np.concatenate([logs, own_row], axis=1)
    boosting = HistGradientBoostingClassifier(random_state=0).fit(both[train], dummy[train])
    out["boosting_with_own_row"] = float(
        roc_auc_score(dummy[test], boosting.predict_proba(both[test])[:, 1])
    )
    return out


def repeated_attacks(
    scores: np.ndarray,
    own_row: np.ndarray,
    dummy: np.ndarray,
    setting: CkksSetting,
    repeats: int,
    rng: np.random.Generator,
) -> dict[str, float]:
    """`attacks` averaged over `repeats` draws of the decrypted values, each split in two
    halves (stratified) that train and test in turn: a few hundred real rejects are few."""
    runs: list[dict[str, float]] = []
    for _ in range(repeats):
        # One thread: boosting's OpenMP threads spin against a second run on 2 cores.
        values = decrypted(scores, setting, rng)
        seed = int(rng.integers(2**31))
        a, b = train_test_split(
            np.arange(len(dummy)), test_size=0.5, random_state=seed, stratify=dummy
        )
        for train, test in ((a, b), (b, a)):
            with threadpool_limits(limits=1, user_api="openmp"):
                runs.append(attacks(values, own_row, dummy, setting, train, test))
    return {name: float(np.mean([run[name] for run in runs])) for name in runs[0]}


def scored(form: ScoringForm, y: np.ndarray, own: np.ndarray, peer: np.ndarray) -> np.ndarray:
    """The scaled scores of (own row, peer row) pairs: what sealed scoring computes."""
    return form.c[own] + np.einsum("ij,ij->i", form.x[own], y[peer])


def near_misses(
    form: ScoringForm, y: np.ndarray, keys: list[list[str]], group: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(own rows, their scores) of every pair of distinct rows of one file sharing a key,
    under `form` against `y` (the same file's evaluator side)."""
    mine = hidden_join.entries(keys, rng, group)
    join = hidden_join.joined(mine.keys, keys, rng)
    own = np.repeat(mine.rows, join.counts())
    keep = own != join.rows
    return own[keep], scored(form, y, own[keep], join.rows[keep])


def calibrated_lambda(
    form: ScoringForm, y: np.ndarray, own: np.ndarray, scores: np.ndarray, rng: np.random.Generator
) -> tuple[float, float]:
    """The lambda of LAMBDAS at which a party's own model scores its own rows' rejected near
    misses and (own row, random own row times lambda) rejects most alike (AUC nearest 0.5),
    and that AUC: all the evaluator computes for `scaled`, on its own model and file."""
    near, own = scores[scores < 0], own[scores < 0]
    peer = rng.integers(0, len(y), len(own))
    products = np.einsum("ij,ij->i", form.x[own], y[peer])
    best = (1.0, 1.0)
    for lam in LAMBDAS:
        dummy = form.c[own] + lam * products
        dummy = dummy[dummy < 0]
        if len(dummy) < 100:
            continue
        labels = np.r_[np.zeros(len(near)), np.ones(len(dummy))]
        auc = float(roc_auc_score(labels, -np.r_[near, dummy]))
        if abs(auc - 0.5) < abs(best[1] - 0.5):
            best = (float(lam), auc)
    return best


@dataclass(frozen=True)
class Slots:
    """One direction's slots at a fixed count: the real ones (each entry's first rows, in the
    evaluator's random order) and the dummies filling the rest, each with its scorer's row."""

    entry_rows: np.ndarray  # the scorer's row of each entry
    join: hidden_join.Join  # every entry's rows, uncut
    real_own: np.ndarray  # the scorer's row of each real slot
    real_peer: np.ndarray  # the evaluator's row in it
    dummy_entry: np.ndarray  # the entry of each dummy slot

    @property
    def dummy_own(self) -> np.ndarray:
        return self.entry_rows[self.dummy_entry]


def fixed_slots(
    scorer_keys: list[list[str]],
    evaluator_keys: list[list[str]],
    count: int,
    group: int,
    rng: np.random.Generator,
) -> Slots:
    """Each entry's rows cut to its first `count` (as sealed_hidden_join.capped), the rest
    of its `count` slots dummies."""
    mine = hidden_join.entries(scorer_keys, rng, group)
    join = hidden_join.joined(mine.keys, evaluator_keys, rng)
    counts = join.counts()
    within = np.arange(len(join.rows)) - np.repeat(join.starts[:-1], counts)
    first = within < count
    dummy_entry = np.repeat(np.arange(len(mine)), np.maximum(count - counts, 0))
    real_own = np.repeat(mine.rows, counts)[first]
    return Slots(mine.rows, join, real_own, join.rows[first], dummy_entry)


def dummy_rows(
    slots: Slots, rule: str, peers: int, rng: np.random.Generator, tries: int = 100
) -> np.ndarray:
    """The evaluator's row in each dummy slot under a row rule (random, holder, oracle), drawn
    again while it holds the entry's key."""
    join = slots.join
    by_row: dict[int, list[int]] = {}  # for the oracle: the rows holding a key of each row
    for entry, peer in zip(np.repeat(slots.entry_rows, join.counts()), join.rows, strict=True):
        by_row.setdefault(int(entry), []).append(int(peer))

    def draw(index: np.ndarray) -> np.ndarray:
        if rule == "random":
            return rng.integers(0, peers, len(index))
        if rule == "holder":
            return join.rows[rng.integers(0, len(join.rows), len(index))]
        return np.array(
            [
                rng.choice(by_row[r]) if r in by_row else rng.integers(peers)
                for r in slots.dummy_own[index].tolist()
            ],
            dtype=np.int64,
        )

    starts = join.starts
    holders = [set(join.rows[starts[e] : starts[e + 1]].tolist()) for e in range(len(starts) - 1)]
    rows = draw(np.arange(len(slots.dummy_entry)))
    for _ in range(tries):
        drawn = zip(rows.tolist(), slots.dummy_entry.tolist(), strict=True)
        bad = np.flatnonzero(np.array([row in holders[e] for row, e in drawn], dtype=bool))
        if not len(bad):
            break
        rows[bad] = draw(bad)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--recipes", default="", help="instead of the schema's or the defaults")
    parser.add_argument("--count", type=int, default=1, help="the fixed count C an entry")
    parser.add_argument(
        "--repeats", type=int, default=5, help="draws of the decrypted values, each two folds"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    inputs = sealed_inputs(args, args.recipes)
    agreement = inputs.daemon_agreement()
    parties = sealed_parties(agreement, inputs.tables, inputs.recipes, args.seed)
    keys, units = parties.keys, parties.units
    setting = session.setting(agreement.method.sealed_crypto, agreement.method.sealed_thresholds)
    forms = scoring_forms(agreement, parties)
    group = group_size(inputs.recipes)
    rng = np.random.default_rng(args.seed)
    results: dict[str, Any] = {"recipes": inputs.recipes, "count": args.count, "rows": []}

    for scorer, evaluator in (("alice", "bob"), ("bob", "alice")):
        form = forms[scorer]
        y = linear_form.evaluator_part(units[evaluator], form.evaluator)
        slots = fixed_slots(keys[scorer], keys[evaluator], args.count, group, rng)
        real = scored(form, y, slots.real_own, slots.real_peer)
        rejected = real < 0
        dummy_own = slots.dummy_own
        # The evaluator's own model on its own file: its near misses, and lambda for `scaled`.
        own_form = forms[evaluator]
        own_y = linear_form.evaluator_part(units[evaluator], own_form.evaluator)
        near_own, near = near_misses(own_form, own_y, keys[evaluator], group, rng)
        lam, own_auc = calibrated_lambda(own_form, own_y, near_own, near, rng)
        random_rows = dummy_rows(slots, "random", len(y), rng)
        dummies = {
            "random": scored(form, y, dummy_own, random_rows),
            "holder": scored(form, y, dummy_own, dummy_rows(slots, "holder", len(y), rng)),
            "scaled": form.c[dummy_own]
            + lam * np.einsum("ij,ij->i", form.x[dummy_own], y[random_rows]),
            "sampled": rng.choice(near[near < 0], len(dummy_own)),
            "oracle": scored(form, y, dummy_own, dummy_rows(slots, "oracle", len(y), rng)),
        }
        # What the scorer knows of its own row: its constant, its mean score against its file.
        scorer_y = linear_form.evaluator_part(units[scorer], form.evaluator)
        row_mean = form.c + form.x @ scorer_y.mean(axis=0)
        print(
            f"{scorer} scoring: {len(slots.entry_rows):,} entries, {int(rejected.sum()):,} real "
            f"rejects of {len(real):,} real slots, {len(dummy_own):,} dummies; the evaluator's "
            f"lambda {lam} (AUC {own_auc:.3f} on its own model)",
            flush=True,
        )
        for rule in RULES:
            dummy = dummies[rule]
            kept = dummy < 0
            scores = np.r_[real[rejected], dummy[kept]]
            own_rows = np.r_[slots.real_own[rejected], dummy_own[kept]]
            label = np.r_[np.zeros(int(rejected.sum())), np.ones(int(kept.sum()))].astype(int)
            own_row = np.stack([form.c[own_rows], row_mean[own_rows]], axis=1)
            aucs = repeated_attacks(scores, own_row, label, setting, args.repeats, rng)
            exact = float(roc_auc_score(label, scores))
            aucs["ceiling_exact_score"] = max(exact, 1.0 - exact)
            every = np.r_[real, dummy]
            bucket = np.searchsorted(np.asarray(setting.thresholds), every, side="left")
            is_dummy = np.r_[np.zeros(len(real)), np.ones(len(dummy))].astype(int)
            aucs["all_slots_bucket"] = float(roc_auc_score(is_dummy, -bucket))
            row = {
                "scorer": scorer,
                "rule": rule,
                "real_slots": len(real),
                "real_rejects": int(rejected.sum()),
                "dummies": len(dummy),
                "dummies_rejected": int(kept.sum()),
                "dummies_accepted_share": round(float(1 - kept.mean()), 4),
                "median_score_real_reject": round(float(np.median(real[rejected])), 3),
                "median_score_dummy": round(float(np.median(dummy[kept])), 3),
                "auc": {k: round(v, 4) for k, v in aucs.items()},
            }
            if rule == "scaled":
                row |= {"lambda": lam, "lambda_auc_own_model": round(own_auc, 4)}
            results["rows"].append(row)
            print(
                f"  {rule:<8} accepted {row['dummies_accepted_share']:.3f}  median s real "
                f"{row['median_score_real_reject']:.2f} dummy {row['median_score_dummy']:.2f}  "
                + "  ".join(f"{k} {v:.3f}" for k, v in aucs.items()),
                flush=True,
            )
    if args.json:
        results["command"] = run_command(args)
        write_result(args.json, results)


if __name__ == "__main__":
    main()
