"""Rule dicts into checks: the parser (targets, legacy forms, codes) and the registry of
built-in and custom check types.
"""
