"""The agent run of seed 002: its machine, evidence validation, results and their reports.

Everything here except ``proof_runner`` is pure: no clock, no randomness, no network. File
reads for evidence validation go through the small ``RepositoryView`` protocol, so the caller
decides what "the checkout" is.
"""
