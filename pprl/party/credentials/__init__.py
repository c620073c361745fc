"""A party's secrets and identities: Bloom and noise keys, certificates, TLS credentials."""
