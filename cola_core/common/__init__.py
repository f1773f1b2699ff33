"""Leaves every layer shares: how values and codes are written, what a rule's values are,
column resolution, and how Spark's failures read. Standard library and pyspark only.
"""
