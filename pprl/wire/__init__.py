"""The wire's generated gRPC code, one subpackage per version (make proto); do not edit."""
