"""The method, pure: the agreement, smashing, training, the privacy gate, matching and sealed
linkage, on values and arrays only (no file, no network, no gRPC)."""
