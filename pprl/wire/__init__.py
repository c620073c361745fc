"""Generated gRPC code for proto/pprl/wire/linkage.proto (make proto); do not edit."""
