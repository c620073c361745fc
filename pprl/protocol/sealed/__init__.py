"""Sealed linkage, the daemons' default encoding, whole: blinded blocking keys, encrypted
scoring and the steps two daemons take (session), its encoding (encoding), the entries it
reads exactly (exact_entries) and its expected linkage (expectation); docs/research/sealed.md."""
