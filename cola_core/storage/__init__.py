"""Where data lives: source and output specs, reading and writing with Spark, the session
factory, and publishing staged outputs all or nothing (folders by the file system, tables
through the catalog).
"""
