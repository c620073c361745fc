"""What blinding blocking keys costs (pprl.protocol.sealed.blinding): both parties' work in one
process, timed step by step, and the doubly blinded join checked against the plaintext one.

Each party holds `--size` rows of `--keys` keys drawn from `--vocabulary` values (keys repeat,
as blocking keys do). Per party: hash and blind its own keys, re-blind the peer's, join. Bytes
are what each party sends: its blinded keys and its re-blinding of the peer's.

    python benchmarks/blinding_cost.py --size 5000 --keys 8 --json out.json
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import ec

from lab.result_file import write_result
from pprl.protocol.sealed.blinding import POINT_BYTES, Blinder, hashed
from pprl.protocol.sealed.shared_keys import shared_key_pairs

CONTEXT = b"benchmark run"


def p256_microseconds(keys: list[str]) -> float:
    """The same blinding on P-256 (cofactor 1) through `cryptography`, for comparison: a
    point per key by try-and-increment on the hash, then ECDH with a fresh scalar and the
    result read back as a point (what re-blinding needs); timed from the point on."""
    curve = ec.SECP256R1()
    scalar = ec.generate_private_key(curve)
    points = []
    for digest in hashed(CONTEXT, keys):
        for counter in range(256):
            candidate = b"\x02" + bytes([counter]) + digest[1:]
            try:
                points.append(ec.EllipticCurvePublicKey.from_encoded_point(curve, candidate))
                break
            except ValueError:
                continue
    began = time.perf_counter()
    for point in points:
        shared = scalar.exchange(ec.ECDH(), point)
        ec.EllipticCurvePublicKey.from_encoded_point(curve, b"\x02" + shared)
    return 1e6 * (time.perf_counter() - began) / len(points)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=5000, help="rows a side")
    parser.add_argument("--keys", type=int, default=8, help="keys a row")
    parser.add_argument("--vocabulary", type=int, help="distinct keys (default: 2 x size)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--compare", action="store_true", help="also time P-256 blinding on 2,000 of the keys"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    vocabulary = args.vocabulary or 2 * args.size
    keys = {
        side: [
            [f"{k}:{rng.randrange(vocabulary)}" for k in range(args.keys)] for _ in range(args.size)
        ]
        for side in ("alice", "bob")
    }
    alice, bob = Blinder(), Blinder()
    flat = {side: [k for row in rows for k in row] for side, rows in keys.items()}
    began = time.perf_counter()
    sent_a = alice.blind_keys(CONTEXT, flat["alice"])
    blind_seconds = time.perf_counter() - began
    sent_b = bob.blind_keys(CONTEXT, flat["bob"])
    began = time.perf_counter()
    back_a = bob.reblind(sent_a)
    reblind_seconds = time.perf_counter() - began
    bobs = alice.reblind(sent_b)

    def grouped(values: list[bytes]) -> list[list[bytes]]:
        return [values[i : i + args.keys] for i in range(0, len(values), args.keys)]

    began = time.perf_counter()
    pairs = shared_key_pairs(grouped(back_a), grouped(bobs))
    join_seconds = time.perf_counter() - began
    plain: dict[str, list[int]] = {}
    for j, row in enumerate(keys["bob"]):
        for k in set(row):
            plain.setdefault(k, []).append(j)
    expected = {
        (i, j) for i, row in enumerate(keys["alice"]) for k in set(row) for j in plain.get(k, ())
    }
    assert {(int(i), int(j)) for i, j in pairs} == expected, "blinded join differs from plaintext"
    operations = len(sent_a)
    result = {
        "command": vars(args) | {"json": str(args.json and args.json.name)},
        "keys_a_side": operations,
        "pairs": len(pairs),
        "blind_us_per_key": 1e6 * blind_seconds / operations,
        "reblind_us_per_key": 1e6 * reblind_seconds / operations,
        "party_seconds": blind_seconds + reblind_seconds + join_seconds,
        "join_seconds": join_seconds,
        "bytes_sent_per_party": 2 * operations * POINT_BYTES,
    }
    print(
        f"{args.size:,} rows x {args.keys} keys: blind {result['blind_us_per_key']:.0f} us/key, "
        f"re-blind {result['reblind_us_per_key']:.0f} us/key, join {join_seconds:.2f} s; "
        f"{result['party_seconds']:.1f} s and {result['bytes_sent_per_party'] / 1e6:.1f} MB "
        f"a party; {len(pairs):,} candidate pairs, equal to the plaintext join",
        flush=True,
    )
    if args.compare:
        result["p256_us_per_key"] = p256_microseconds(flat["alice"][:2000])
        print(f"P-256 through the same library: {result['p256_us_per_key']:.0f} us/key")
    if args.json:
        write_result(args.json, result)


if __name__ == "__main__":
    main()
