"""benchmarks/scale.py reads each size's demo summary into rates (per record, per candidate)
and projects a larger linkage from the largest run's rates."""

import json

from tests.scripts import benchmark_script

bench = benchmark_script("scale")


def _summary(size: int, seconds: dict[str, float], candidates: int, f1: float) -> dict:
    """A demo summary as `pprl demo --json` writes it, cut to what the benchmark reads."""
    party = {
        "phase_seconds": seconds,
        "scored_pairs": candidates,
        "peak_rss_bytes": 2**30,
    }
    slower = dict(party, phase_seconds={k: v + 1 for k, v in seconds.items()})
    return {
        "parties": {"alice": party, "bob": slower},
        "bytes_sent": {"alice": 1000 * size, "bob": 1200 * size},
        "linkage": {"f1": f1, "precision": 0.99, "recall": 0.97},
        "seconds": sum(seconds.values()) + 7,
    }


PHASES = dict.fromkeys(bench.PHASES, 10.0) | {"match": 40.0}


def test_rates_take_the_slower_party_and_count_per_record_and_candidate() -> None:
    run = bench.outcome(1000, _summary(1000, PHASES, 1100, 0.98), 100.0)
    assert run["status"] == "linked" and run["f1"] == 0.98
    assert run["phase_seconds"]["match"] == 41.0  # Bob's, the slower
    rates = run["rates"]
    assert rates["match_ms_per_candidate"] == round(41_000 / 1100, 4)
    assert rates["smash_ms_per_record"] == 11.0
    assert rates["candidates_per_record"] == 1.1
    assert rates["bytes_per_record"] == 1200.0
    assert run["peak_rss_gib"] == 1.0


def test_the_projection_scales_records_and_divides_the_blinding_among_the_workers() -> None:
    run = bench.outcome(1000, _summary(1000, PHASES, 1100, 0.98), 100.0, keys=9000)
    assert run["rates"]["keys_per_record"] == 9.0
    blind = 0.0005  # 9 keys a record: 4.5 ms of SMASH's 11 ms a record
    one = bench.projection(run, 10_000, 1, blind)
    eight = bench.projection(run, 10_000, 8, blind)
    every = bench.projection(run, 10_000, 8, blind, every_step=True)
    # Ten times the records: every phase ten times its seconds (MATCH's by its candidates).
    assert abs(one["phase_hours"]["match"] * 3600 - 410.0) < 2
    assert abs(one["phase_hours"]["agree"] * 3600 - 110.0) < 2
    # On eight workers only the blinding's 45 s of SMASH's 110 s divides today.
    assert abs(eight["phase_hours"]["smash"] * 3600 - (65.0 + 45.0 / 8)) < 2
    assert eight["phase_hours"]["match"] == one["phase_hours"]["match"]
    # Every heavy step spread divides SMASH, TRAIN, EXCHANGE and MATCH; LINK stays.
    assert abs(every["phase_hours"]["smash"] * 3600 - 110.0 / 8) < 2
    assert every["phase_hours"]["link"] == one["phase_hours"]["link"]
    assert every["hours"] < eight["hours"] < one["hours"]


def test_the_keys_come_from_smash_lines_and_a_summary_run_before_is_read(tmp_path) -> None:
    log = (
        "      alice  smashed 1,000 records (kept here: sealed linkage sends no vectors); "
        "8,800 blocking keys from 7 recipes, blinded\n"
        "      bob    smashed 1,000 records (kept here: sealed linkage sends no vectors); "
        "9,000 blocking keys from 7 recipes, blinded in 2 local worker processes\n"
    )
    assert bench.blocking_keys(log) == 9000
    summary = tmp_path / "run.json"
    summary.write_text(json.dumps(_summary(1000, PHASES, 1100, 0.98) | {"demo_seconds": 90.0}))
    (tmp_path / "run.log").write_text(log)
    size, path, output = bench.summarised(f"1000={summary}={tmp_path / 'run.log'}")
    run = bench.from_summary(size, path, output)
    assert run["blocking_keys"] == 9000 and run["demo_seconds"] == 90.0


def test_growth_compares_time_per_record_of_the_largest_and_smallest() -> None:
    small = bench.outcome(1000, _summary(1000, PHASES, 1000, 0.98), 100.0)
    doubled = {k: 2.6 * v for k, v in PHASES.items()}
    large = bench.outcome(2000, _summary(2000, doubled, 2000, 0.98), 100.0)
    failed = {"size": 4000, "status": "failed", "message": "boom", "seconds": 1.0}
    growth = bench.growth([small, large, failed])
    assert growth is not None and 1.2 < growth < 1.35
    assert bench.growth([small, failed]) is None
    table = bench.table([small, large, failed])
    assert "| 2,000 | 0.9800 |" in table and "| 4,000 | failed: boom |" in table
