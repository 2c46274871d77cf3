"""tests/ecosystem/ holds libraries' own test files (each folder with its licence), which
tests/test_ecosystem.py runs through the drop-in in subprocesses; the project's own test
process, which has imported real torch, never collects them."""

collect_ignore_glob = ["*"]
