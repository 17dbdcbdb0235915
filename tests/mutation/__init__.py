"""Mutation testing with mutmut: ``python -m tests.mutation MODULE ...`` (``nox -s mutate``).

Each module is mutated by mutmut in a copy of the tree (``.mutation/<module>/``), against the
test folders that cover it (``COVERING_TESTS``); of those, mutmut runs for each mutant only the
tests that called the mutated function. Known equivalent mutants are read from
``tests/mutation/equivalent.toml``. ``docs/development.md`` says when to run it and what score
to hold.
"""
