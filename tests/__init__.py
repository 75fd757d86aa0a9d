"""The tests as one package, so that each test module is imported once, under one name.

Without this file pytest imports ``tests/unit/test_x.py`` as ``unit.test_x``, and a test that
says ``from tests.unit.test_x import helper`` imports (and assertion-rewrites, that is compiles)
the same file a second time, as ``tests.unit.test_x``, in the middle of a running test. Once, in
a fresh-clone CI run, that compile met a garbage-collector finalizer and CPython 3.11 failed
with "AST constructor recursion depth mismatch". With the package, the name is the same and the
import is a lookup.
"""
