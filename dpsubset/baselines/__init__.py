"""The selection methods the source papers compare top-R and mistakes with.

Each module registers its ``method=`` with :func:`dpsubset.selection.register_method`
when imported; importing this package registers them all.
"""
