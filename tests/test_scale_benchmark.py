"""benchmarks/scale.py reads each size's demo summary into rates (per record, per candidate)
and projects a larger linkage from the largest run's rates."""

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


def test_the_projection_scales_records_and_candidates_and_divides_the_spreadable_phases() -> None:
    run = bench.outcome(1000, _summary(1000, PHASES, 1100, 0.98), 100.0)
    one = bench.projection(run, 10_000, 1)
    eight = bench.projection(run, 10_000, 8)
    # Ten times the records: every phase ten times its seconds (MATCH's by its candidates).
    assert abs(one["phase_hours"]["match"] * 3600 - 410.0) < 2
    assert abs(one["phase_hours"]["agree"] * 3600 - 110.0) < 2
    # AGREE, REVEAL and LINK stay in the daemon; the others divide by the workers.
    assert abs(eight["phase_hours"]["smash"] * 3600 - 110.0 / 8) < 2
    assert eight["phase_hours"]["link"] == one["phase_hours"]["link"]
    assert eight["hours"] < one["hours"]


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
