"""A party's own classifier: pair features, the synthetic training pairs of Algorithm 2, and
training."""
