"""Helpers the tests share and that hold no tests themselves: scripted games of every kind
(`fuzz_states`), and running servers, users and started games for the load and HTTP tests
(`load_support`)."""
