"""The inside of benchmarks/secure_join_cost.py: the keys' join as a two-party secure
computation in SPU (SecretFlow's secure processing unit), protocol Cheetah (two parties,
semi-honest, no third party). It runs in SPU's own environment (SPU pins numpy below 2), so
it imports nothing of pprl: it reads the entries from an .npz file and writes what the
computation opens, with its time and bytes, to another.

    .venv-spu/bin/python benchmarks/secure_join_spu.py IN.npz OUT.npz --window W [--field 32]

Both parties run in this one process, each in its own thread over SPU's in-memory link (its
simulator): the protocol's messages are real, the network is not.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np
import spu.libspu as libspu
import spu.utils.simulation as spsim

LINK = re.compile(r"Link details: total send bytes (\d+), recv bytes (\d+)")


def join(window: int):
    """Sort every entry by (key, side, a unique id) inside the computation, then flag each
    entry against its next `window` neighbours: a flag is a slot whose two entries hold the
    same key from different sides. The sides come out beside the rows, so that a slot is
    read by them and not by its order. The unique id keeps every sort key distinct, which
    SPU's sort needs so that the comparisons it opens after its shuffle say nothing."""

    def program(keys, sides, ids, rows):
        key, side, _, row = jax.lax.sort((keys, sides, ids, rows), num_keys=3)
        flags = [
            jnp.pad((key[:-w] == key[w:]) & (side[:-w] != side[w:]), (0, w))
            for w in range(1, window + 1)
        ]
        return jnp.stack(flags), side, row

    return program


FIELDS = {64: libspu.FieldType.FM64, 32: libspu.FieldType.FM32}


def run(entries: dict[str, np.ndarray], window: int, field: int) -> dict[str, np.ndarray]:
    """The join on `entries` (keys, sides, rows) in the ring of `field` bits, with the
    seconds it took and the bytes the first party sent and received (SPU's own count, read
    from the profile it logs)."""
    config = libspu.RuntimeConfig(protocol=libspu.ProtocolKind.CHEETAH, field=FIELDS[field])
    config.enable_pphlo_profile = True
    simulator = spsim.Simulator(2, config)
    program = spsim.sim_jax(simulator, join(window))
    ids = np.arange(len(entries["keys"]), dtype=np.int64)
    with tempfile.TemporaryFile(mode="w+") as log:
        saved = [os.dup(1), os.dup(2)]
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            start = time.perf_counter()
            flags, sides, rows = program(entries["keys"], entries["sides"], ids, entries["rows"])
            seconds = time.perf_counter() - start
        finally:
            for fd, copy in enumerate(saved, start=1):
                os.dup2(copy, fd)
                os.close(copy)
        log.seek(0)
        found = LINK.findall(log.read())
    sent, received = (int(v) for v in found[-1]) if found else (-1, -1)
    return {
        "flags": np.asarray(flags, dtype=bool),
        "sides": np.asarray(sides, dtype=np.int64),
        "rows": np.asarray(rows, dtype=np.int64),
        "seconds": np.array(seconds),
        "sent_bytes": np.array(sent),
        "received_bytes": np.array(received),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("entries")
    parser.add_argument("out")
    parser.add_argument("--window", type=int, required=True)
    parser.add_argument("--field", type=int, choices=sorted(FIELDS), default=64)
    args = parser.parse_args()
    with np.load(args.entries) as data:
        entries = {name: data[name] for name in ("keys", "sides", "rows")}
    np.savez(args.out, **run(entries, args.window, args.field))


if __name__ == "__main__":
    main()
