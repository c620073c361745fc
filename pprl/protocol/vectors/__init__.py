"""What a party releases: smashed distance vectors or Bloom filters, their codes, and where their
random draws come from."""
