"""The single-scan benchmark: a generated orders table, the 15- and 80-rule blocks, the runner,
and a counter of the Py4J round trips the driver makes (``benchmarks.py4j_calls``).

Reproduce the published figures with ``.venv/bin/python -m benchmarks.run --rows 2000000 --rounds 9``;
``benchmarks/NOTES.md`` has the figures and the Py4J profile of issue 11.
"""
