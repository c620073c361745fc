"""Sealed linkage, the default method: blocking keys from each party's plaintext, blinded so
that neither party can evaluate them alone, joined (in the open graph or hidden in the
evaluator), and each party's classifier scored on the candidate pairs under CKKS, with the
peer's vectors never seen (session runs the steps in order)."""
