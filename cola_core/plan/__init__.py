"""Measuring: the planner folds a block into one scan, the split and the samples are the
other Spark actions, and the staged split writes both outputs of a split in one pass.
"""
