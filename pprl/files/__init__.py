"""The files a party reads and writes outside its run store: records and reference CSVs,
generated data, and the atomic write they all use. pprl.protocol never touches a file; the
daemon and the commands read through here."""
