"""What a daemon keeps on disk: the state database, a run's artifacts, its inputs and caches."""
