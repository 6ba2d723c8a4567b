"""The tests' one support package: a keyring, waits, capabilities, fake clients, snapshot apps."""
