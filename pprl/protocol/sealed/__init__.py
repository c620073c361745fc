"""Sealed linkage: the parts of the method a party can run without seeing the peer's
vectors (blinded blocking keys; encrypted scoring is still to come)."""
