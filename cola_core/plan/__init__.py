"""Measuring: the pre-flight refuses what Spark cannot run before any job, the planner folds a
block into one scan, the split and the samples are the other Spark actions, and the staged split
writes both outputs of a split from one pass (its staging write, then its destinations).
"""
