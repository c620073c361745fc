"""The work of each phase of Algorithm 1 and the runner that moves a run through them."""
