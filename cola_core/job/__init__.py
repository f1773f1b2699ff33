"""A job: the frozen spec that reaches the driver, and the runner, the one layer that
writes (outputs, a sql rule's failed rows, the report table, history, pages, the results file).
"""
