"""The phases that differ in sealed linkage ([method] encoding = "sealed";
pprl.protocol.sealed.session has the steps), and what the peer service does for the peer's.

- SMASH (`smash`): the records' vectors, kept here (never sent), and their blocking keys,
  blinded once.
- EXCHANGE (`exchange`): the keys to the peer, which returns them blinded again (and, serving
  the peer's call, this party blinds the peer's keys again and keeps them).
- MATCH (`match`): the candidate pairs from both sets of doubly blinded keys; this party's
  classifier scored on them under CKKS with the peer as the evaluator (`evaluation`, the
  stream's layout in `stream_shape`, its checks in `stream_checks`); the accepted pairs one
  to one.

The hidden join ([method] sealed_join = "hidden") adds its key entries to each phase
(`hidden_entries`); `stored` holds what the phases keep in the run store and read back.
"""
