"""The gRPC daemon: the server, its control and peer services, authorisation and logging."""
