#!/usr/bin/env python3
"""Prints the SCRAM-SHA-256 verifier of the password read from standard input (first line).

PostgreSQL stores a password given in this form as it is (RFC 5802 / RFC 7677 with PostgreSQL's
text encoding), so ALTER ROLE … PASSWORD '<verifier>' sets a password without the plain text ever
reaching the server, its logs or a command line. Used by bootstrap.sh.
"""
import base64
import hashlib
import hmac
import os
import sys

ITERATIONS = 4096  # PostgreSQL's default scram_iterations


def verifier(password: str, salt: bytes, iterations: int = ITERATIONS) -> str:
    salted = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    b64 = lambda b: base64.b64encode(b).decode("ascii")
    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def main() -> None:
    password = sys.stdin.readline().rstrip("\n")
    if not password or not password.isascii() or not password.isprintable():
        sys.exit("scram_verifier: the password must be one line of printable ASCII")
    print(verifier(password, os.urandom(16)))


if __name__ == "__main__":
    main()
