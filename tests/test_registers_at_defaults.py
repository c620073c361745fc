"""benchmarks/registers_at_defaults.py reads `pprl demo`'s output as it is printed: a refusal
names who refused and each party's estimate, from the passing party's TRAIN line too."""

from tests.scripts import benchmark_script

bench = benchmark_script("registers_at_defaults")

# As the demo printed them (a run at 400 records), cut short where "..." stands.
PASSED_LINE = (
    "      bob    trained on 2500 pairs; the blocking keys join 90.1% of synthetic true pairs; "
    "expected F1 about 0.93 (precision 0.99, recall 0.88; ...)\n"
)
ALICE_REFUSED = (
    "alice: FAILED_PRECONDITION [POOR_LINKAGE]: TRAIN failed: expected F1 about 0.94 (precision "
    "1.00, recall 0.89; the mean over 15% to 60% of compared values changed, each as likely: from "
    "0.87 ...), below the minimum of 0.99; nothing was sent. What would help: ..., or, knowing "
    "the estimate, a lower [privacy] min_expected_f1 (in /tmp/w1/alice.toml)"
)
ERROR = "pprl: error: run 79456425: TRAIN failed: " + ALICE_REFUSED


def test_a_refusal_names_the_refusing_party_and_both_estimates() -> None:
    both = ERROR + "; " + ALICE_REFUSED.replace("alice", "bob").replace("0.94", "0.91")
    outcome = bench.demo_outcome(1, "[3/7] TRAIN\n", "logs kept in /tmp/w1\n" + both, None, 16.5)
    assert outcome["status"] == "refused"
    assert outcome["reasons"] == {"alice": "POOR_LINKAGE", "bob": "POOR_LINKAGE"}
    # "alice.toml" after alice's estimate does not take bob's for hers
    assert outcome["expected"] == {"alice": 0.94, "bob": 0.91}
    row = bench.table_row("nicknames", {"pprl": outcome})
    assert "refused at TRAIN by alice (POOR_LINKAGE) and bob (POOR_LINKAGE)" in row
    assert "alice 0.94, bob 0.91" in row


def test_the_party_that_passed_gives_its_estimate_from_its_train_line() -> None:
    outcome = bench.demo_outcome(1, PASSED_LINE, ERROR, None, 16.5)
    assert outcome["reasons"] == {"alice": "POOR_LINKAGE"}
    assert outcome["expected"] == {"alice": 0.94, "bob": 0.93}


def test_another_failure_is_no_refusal_and_keeps_its_message() -> None:
    error = "pprl: error: --records-a and --records-b go together"
    outcome = bench.demo_outcome(2, "", error + "\n", None, 0.4)
    assert outcome["status"] == "failed" and outcome["expected"] == {}
    assert bench.pprl_cell(outcome) == "failed: --records-a and --records-b go together"


def test_a_linked_run_reads_the_summary_and_a_system_not_run_is_a_dash() -> None:
    summary = {
        "linkage": {"precision": 0.93412, "recall": 0.86071, "f1": 0.89589},
        "parties": {"alice": {"expected": {"f1": 0.93561}}, "bob": {"expected": {"f1": 0.922}}},
        "seconds": 19.34,
    }
    outcome = bench.demo_outcome(0, "", "", summary, 27.5)
    assert outcome["f1"] == 0.8959 and outcome["expected"] == {"alice": 0.9356, "bob": 0.922}
    row = bench.table_row("namesakes", {"pprl": outcome})
    assert row == (
        "| namesakes | F1 0.8959 (P 0.934, R 0.861; 28 s) | alice 0.94, bob 0.92 | - | - |"
    )
