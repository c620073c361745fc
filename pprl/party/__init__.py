"""The daemon around the method: its configuration, run store, phases, peer calls, gRPC
services and coordinator."""
