"""The rule language, in pure Python: a block's structure, rules files, parameter specs,
thresholds, judging a measured value, and the result a rule gives.
"""
