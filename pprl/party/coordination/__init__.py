"""The coordinator that moves both daemons through the phases, and its sessions."""
