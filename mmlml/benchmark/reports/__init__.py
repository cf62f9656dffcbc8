"""The reports of a sweep: its results, oracle, claims, record and the
check of the committed docs."""
