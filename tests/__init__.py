"""gpufleet's tests: a package, so pytest imports tests/conftest.py once, as tests.conftest, the
module the tests import their helpers from (one plan cache, one set of hooks)."""
