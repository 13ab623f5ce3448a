"""Helpers the test modules share (no test module imports another: tests/test_layout.py holds that); the fixtures
they share are in tests/conftest.py."""
