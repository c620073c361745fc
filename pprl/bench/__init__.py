"""What `pprl bench` runs: linkage quality, scale and peer comparisons on FEBRL4, generated and
European-style registers. Research-only code (attacks, cost and join models) lives in
benchmarks/lab/, outside the installed package."""
