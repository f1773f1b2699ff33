"""What keeps hostile rules harmless: the SQL lexer and guard, the bound on what a call
builds, and regex translation with its backtracking analysis. Pure Python, no Spark.
"""
