"""What the benchmark scripts share and the installed package does not need: attacks on what
a party sees, cost and join models, in-process runs of the method, peer adapters and the
result files. A script run as `python benchmarks/x.py` has benchmarks/ on its path and
imports these as `lab.<module>`; the tests do the same (pyproject's pytest pythonpath). The
package never imports them (tests/test_layers.py)."""
