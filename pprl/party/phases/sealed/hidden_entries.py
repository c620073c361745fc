"""Sealed linkage's hidden join on one party ([method] sealed_join = "hidden";
pprl.protocol.sealed.hidden_join has the steps): what SMASH, EXCHANGE and MATCH add to the
graph join's (pprl.party.phases.sealed), and what this party does as the peer's evaluator.

- SMASH: besides the rows' keys (blinded with the row scalar), one entry per key of each row,
  shuffled, blinded with a second scalar; and a secret order for sending the rows' keys.
- EXCHANGE: the rows' keys go one to a message in that order (the peer, blinding them again
  with its entry scalar, cannot tell which belong to one row) and come back blinded twice;
  the entries go to the peer, which keeps them.
- MATCH: the peer's counts per entry lay out the slots; after scoring, the rows' best slots
  are named and the peer resolves them to its rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pprl import failpoints
from pprl.files.atomic import atomic_file
from pprl.party.peering.peer import PeerClient
from pprl.party.phases.context import PhaseFailed, RunContext
from pprl.party.storage.artifacts import (
    BLINDING_SECRET,
    ENTRY_SECRET,
    KEY_ORDER,
    OWN_ENTRIES,
    OWN_KEYS_TWICE,
    OWN_NAMED,
    PEER_ENTRIES_TWICE,
    PEER_JOIN,
    PEER_NAMED,
)
from pprl.protocol.linkage import reflection
from pprl.protocol.linkage.matching import Matches
from pprl.protocol.sealed import hidden_join, key_spread, session
from pprl.protocol.sealed.blinding import POINT_BYTES, Blinder, Spread, split
from pprl.protocol.sealed.recipes import group_size, most_keys, recipe_number
from pprl.protocol.vectors.randomness import SEALED_JOIN
from pprl.wire.v1 import linkage_pb2 as pb


def smash(
    ctx: RunContext,
    run_id: str,
    keys: Sequence[Sequence[str]],
    context: bytes,
    spread: Spread | None = None,
) -> int:
    """The entries, blinded with a fresh entry scalar, and the order the rows' keys travel
    in; written, not yet recorded (SMASH records everything once all is written). Returns
    how many entries."""
    rng = ctx.randomness.generator(SEALED_JOIN)
    method = ctx.agreement(run_id).method
    group = group_size(method.sealed_keys)
    buckets = len(session.thresholds(method.sealed_thresholds)) + 1
    entries = hidden_join.entries(keys, rng, group)
    draws = hidden_join.check_draws(len(entries), buckets, rng)
    blinder = Blinder(spread=spread)
    counts, values = session.blinded_rows(blinder, context, entries.keys)
    with atomic_file(ctx.store.artifact_path(run_id, ENTRY_SECRET)) as tmp:
        tmp.write_bytes(blinder.secret())
        tmp.chmod(0o600)
    with atomic_file(ctx.store.artifact_path(run_id, OWN_ENTRIES)) as tmp, tmp.open("wb") as out:
        np.savez(
            out,
            rows=entries.rows,
            counts=counts,
            values=np.frombuffer(values, dtype=np.uint8),
            fallback=entries.fallback,
            recipes=np.array([recipe_number(keys[0]) for keys in entries.keys], dtype=np.int32),
            check_uniforms=draws.uniforms,
            check_buckets=draws.buckets,
        )
    total = sum(len(row) for row in keys)
    with atomic_file(ctx.store.artifact_path(run_id, KEY_ORDER)) as tmp, tmp.open("wb") as out:
        np.save(out, rng.permutation(total))
    return len(entries)


def record_smash(ctx: RunContext, run_id: str, entries: int) -> None:
    ctx.store.record_artifact(run_id, ENTRY_SECRET)
    ctx.store.record_artifact(run_id, KEY_ORDER)
    ctx.store.record_artifact(run_id, OWN_ENTRIES, {"entries": entries})


def own_entries(ctx: RunContext, run_id: str, *names: str) -> tuple[np.ndarray, ...]:
    """The named arrays of this party's entries, read alone from one load: "rows" (each
    entry's row), "counts" (its values), "values" (the entries blinded once, flat bytes),
    "fallback" (whether it is a fallback recipe's key), "recipes" (the recipe it was made by),
    "check_uniforms" and "check_buckets" (hidden_join.CheckDraws)."""
    with np.load(ctx.artifact(run_id, OWN_ENTRIES).path) as data:
        return tuple(data[name] for name in names)


def exchange(
    ctx: RunContext, run_id: str, peer: PeerClient, digest: str, values: bytes
) -> tuple[bytes, int]:
    """The rows' keys (blinded once, in row order) sent in the secret order, one to a message,
    and returned blinded twice in row order; then the entries. Returns the keys and the bytes
    sent."""
    order = np.load(ctx.artifact(run_id, KEY_ORDER).path)
    own = split(values, len(order), "own keys")
    shuffled = [own[i] for i in order.tolist()]
    back, sent = peer.blind_keys(
        run_id, digest, np.ones(len(order), dtype=np.int64), b"".join(shuffled)
    )
    returned = split(back, len(order), f"{peer.peer}'s re-blinding")
    in_rows: list[bytes] = [b""] * len(order)
    for position, row_key in enumerate(order.tolist()):
        in_rows[row_key] = returned[position]
    counts, entries = own_entries(ctx, run_id, "counts", "values")
    sent += peer.send_entries(run_id, digest, counts, entries.tobytes())
    return b"".join(in_rows), sent


def match_slots(
    ctx: RunContext, run_id: str, peer: PeerClient, digest: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(the slot pairs (entry, slot number) to score, each entry's own row, the counts, each
    entry's check bucket or -1): the peer's counts per entry, checked against the entries
    sent and its rows, and the checks taken among the entries they join."""
    rows, uniforms, buckets = own_entries(ctx, run_id, "rows", "check_uniforms", "check_buckets")
    counts = peer.join_counts(run_id, digest, len(rows), ctx.peer_rows(run_id) or 0)
    slots = ctx.agreement(run_id).method.sealed_slots
    if slots and not (counts == slots).all():
        raise PhaseFailed(
            f"{peer.peer} told counts other than the agreed {slots} slots an entry",
            reason=pb.BAD_CIPHERTEXT,
        )
    checks = hidden_join.checks(rows, counts, hidden_join.CheckDraws(uniforms, buckets))
    return hidden_join.slot_pairs(counts), rows, counts, checks


def resolved_matches(
    ctx: RunContext,
    run_id: str,
    peer: PeerClient,
    digest: str,
    slots: np.ndarray,
    entry_rows: np.ndarray,
    counts: np.ndarray,
    buckets: np.ndarray,
    first: bool,
) -> tuple[Matches, int]:
    """The accepted pairs one to one: the rows' best slots named to the peer, resolved to its
    rows, each pair once at its best bucket. Returns them and how many slots were named."""
    own_rows = entry_rows[slots[:, 0]]
    # Entries a row, and never more than the evaluator resolves a row (NAMES_PER_ROW).
    most = np.minimum(np.bincount(entry_rows), hidden_join.NAMES_PER_ROW)
    # A fallback key's slots are named only by a row no other key found accepted.
    fallback, recipes = own_entries(ctx, run_id, "fallback", "recipes")
    fallback = fallback[slots[:, 0]]
    method = ctx.agreement(run_id).method
    named = hidden_join.best_slots(
        own_rows, buckets, most, method.sealed_names_within, fallback=fallback
    )
    if failpoints.name_every_slot():
        named = np.ones(len(named), dtype=bool)
    entry = slots[named, 0]
    starts = np.concatenate([[0], np.cumsum(counts)])
    within = slots[named, 1] - starts[entry]
    peer_rows = peer.resolve_slots(run_id, digest, entry, within, ctx.peer_rows(run_id) or 0)
    pairs, best = hidden_join.accepted_pairs(own_rows[named], peer_rows, buckets[named])

    def write(path) -> None:
        with path.open("wb") as out:
            np.savez(out, own=own_rows[named], peer=peer_rows, recipes=recipes[entry])

    # Which recipe found each named pair: why an agreed pair matched (why_matched).
    ctx.write_artifact(run_id, OWN_NAMED, write, {"named": int(named.sum())})
    return session.one_to_one(pairs, best, first, digest, method.assignment), int(named.sum())


# -- what this party does as the peer's evaluator ------------------------------------------
def check_bound(ctx: RunContext, run_id: str, count: int, what: str) -> None:
    """Refuse more keys or entries than the peer may send: its declared rows times the agreed
    recipes' keys a row (a crafted key is a guess tested; more would be more guesses)."""
    bound = ctx.peer_declared(run_id) * most_keys(ctx.agreement(run_id).method.sealed_keys)
    if count > bound:
        raise PhaseFailed(
            f"{what} refused: {count:,}, more than the peer's declared rows times the keys an "
            f"honest row of the agreed recipes holds ({bound:,})",
            reason=pb.KEY_BOUND,
        )


def keep_peer_entries(ctx: RunContext, run_id: str, counts: np.ndarray, values: bytes) -> int:
    """The peer's entries (`counts`: each entry's values, one or the agreed group size)
    blinded again with this party's row scalar and kept; a resend of the same entries
    confirmed. Returns how many."""
    count = len(counts)
    group = group_size(ctx.agreement(run_id).method.sealed_keys)
    if not np.isin(counts, (1, group)).all():
        raise PhaseFailed(
            f"entries refused: an entry of other than 1 or the agreed {group} values",
            reason=pb.BAD_CIPHERTEXT,
        )
    check_bound(ctx, run_id, len(values) // POINT_BYTES, "entries' values")
    degenerate = key_spread.degenerate_refusal(values, ctx.peer_declared(run_id))
    if degenerate is not None:
        raise PhaseFailed(f"entries refused: {degenerate}", reason=pb.DEGENERATE_KEYS)
    own = _read_flat(ctx, run_id, OWN_ENTRIES)
    theirs = np.frombuffer(values, np.uint8).reshape(-1, POINT_BYTES)
    if reflection.repeated_share([own], [theirs]) > reflection.NOISY_SHARE:
        raise PhaseFailed(
            "entries refused: they repeat this party's own entries (sent back to it)",
            reason=pb.REFLECTED,
        )
    with ctx.spreading() as spread:
        secret = ctx.artifact(run_id, BLINDING_SECRET).path.read_bytes()
        again = session.reblinded(Blinder.from_secret(secret, spread), values, "the peer's entries")
    held = ctx.store.artifact(run_id, PEER_ENTRIES_TWICE, verify=False)
    if held is not None:
        with np.load(ctx.artifact(run_id, PEER_ENTRIES_TWICE).path) as data:
            same = np.array_equal(data["counts"], counts) and data["values"].tobytes() == again
        if not same:
            raise PhaseFailed(
                "entries refused: this run already holds other entries from you",
                reason=pb.ALREADY_RECEIVED,
            )
        return count

    def write(path) -> None:
        with path.open("wb") as out:
            np.savez(out, counts=counts, values=np.frombuffer(again, dtype=np.uint8))

    ctx.write_artifact(run_id, PEER_ENTRIES_TWICE, write, {"entries": count})
    return count


def peer_join(ctx: RunContext, run_id: str) -> hidden_join.Join:
    """The join of the peer's entries with this party's rows, made once (its order of each
    entry's rows is what the slots hold: the scoring and the naming must see the same)."""
    held = ctx.store.artifact(run_id, PEER_JOIN, verify=False)
    if held is not None:
        with np.load(ctx.artifact(run_id, PEER_JOIN).path) as data:
            return hidden_join.Join(data["starts"], data["rows"])
    if ctx.store.artifact(run_id, PEER_ENTRIES_TWICE, verify=False) is None or (
        ctx.store.artifact(run_id, OWN_KEYS_TWICE, verify=False) is None
    ):
        raise PhaseFailed(
            "the join is not possible yet: both parties' EXCHANGE must have run",
            reason=pb.OUT_OF_ORDER,
        )
    with np.load(ctx.artifact(run_id, PEER_ENTRIES_TWICE).path) as data:
        entries = session.grouped(data["counts"], data["values"].tobytes())
    with np.load(ctx.artifact(run_id, OWN_KEYS_TWICE).path) as data:
        own = session.grouped(data["counts"], data["values"].tobytes())
    rng = ctx.randomness.generator(SEALED_JOIN + " slots")
    join = hidden_join.joined(entries, own, rng)
    slots = ctx.agreement(run_id).method.sealed_slots
    if slots:
        join = hidden_join.fixed(join, slots, len(own), rng)

    def write(path) -> None:
        with path.open("wb") as out:
            np.savez(out, starts=join.starts, rows=join.rows)

    ctx.write_artifact(run_id, PEER_JOIN, write, {"entries": len(entries), "slots": len(join.rows)})
    return join


def resolve_for_peer(
    ctx: RunContext, run_id: str, entries: np.ndarray, slots: np.ndarray
) -> np.ndarray:
    """This party's row in each slot the peer names: each a slot the join holds, none twice
    in a call, and over all the peer's calls no more slots than its declared rows times
    hidden_join.NAMES_PER_ROW (what an honest scorer names: best_slots), nor than the entries
    it sent. A peer naming every slot would learn the keys' graph the hidden join withholds."""
    join = peer_join(ctx, run_id)
    bound = min(len(join.counts()), ctx.peer_declared(run_id) * hidden_join.NAMES_PER_ROW)
    if len(entries) != len(slots):
        raise PhaseFailed(
            f"{len(entries):,} entries for {len(slots):,} slots", reason=pb.BAD_MATCHES
        )
    codes = entries * (int(join.counts().max(initial=0)) + 1) + slots
    if len(np.unique(codes)) != len(codes):
        raise PhaseFailed(f"{len(entries):,} slots named, some twice", reason=pb.BAD_MATCHES)
    if len(entries) > bound:
        raise PhaseFailed(
            f"{len(entries):,} slots named, more than the peer's rows need ({bound:,})",
            reason=pb.NAMING_BOUND,
        )
    try:
        rows = join.resolve(entries, slots)
    except ValueError as error:
        raise PhaseFailed(f"slots refused: {error}", reason=pb.BAD_MATCHES) from None
    held = ctx.store.artifact(run_id, PEER_NAMED, verify=False)
    before = np.load(held.path) if held is not None else np.zeros(0, dtype=np.int64)
    named = np.union1d(before, codes)
    if len(named) > bound:
        raise PhaseFailed(
            f"slots refused: {len(named):,} named over this run's calls, more than the "
            f"peer's rows need ({bound:,})",
            reason=pb.NAMING_BOUND,
        )
    if len(named) > len(before):

        def write(path) -> None:
            with path.open("wb") as out:
                np.save(out, named)

        ctx.write_artifact(run_id, PEER_NAMED, write, {"named": len(named)})
    return rows


def _read_flat(ctx: RunContext, run_id: str, name: str) -> np.ndarray:
    with np.load(ctx.artifact(run_id, name).path) as data:
        return data["values"].reshape(-1, POINT_BYTES)
