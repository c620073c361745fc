"""Generated gRPC code for proto/pprl/wire/v1/linkage.proto (make proto); do not edit."""
