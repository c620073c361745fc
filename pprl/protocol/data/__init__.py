"""Values and records: how a cell is read and compared, the reference set, the register error
model and generated data."""
