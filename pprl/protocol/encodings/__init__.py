"""What a party encodes its records as for the peer, one object per variant.

An encoding decides what the agreement checks, the wire's shape, how records are smashed,
how the privacy gate attacks the release, how the party trains and matches, and the words
it prints (pprl.protocol.encodings.base). `registry.ENCODINGS` holds them by the name
`[method] encoding` gives; sealed linkage's lives with the rest of that mode
(pprl.protocol.sealed.encoding).
"""
