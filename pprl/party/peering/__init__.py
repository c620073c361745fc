"""Talking to the peer daemon: calls and chunked transfers over mutual TLS."""
