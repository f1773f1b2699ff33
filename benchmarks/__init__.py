"""The single-scan benchmark: a generated orders table, the 15-rule block, and the runner.

Reproduce the published figures with ``.venv/bin/python -m benchmarks.run --rows 2000000 --rounds 5``.
"""
