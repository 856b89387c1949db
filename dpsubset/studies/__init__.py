"""Data and studies around the package: bundled real data sets with their public
bounds (:mod:`.datasets`), the paper's simulation designs (:mod:`.simulate`),
recovery studies with tables and plots (:mod:`.experiments`) and the demo that
``make demo`` runs (:mod:`.demo`).

Nothing here is on the path of a release: these modules call the public API the way
a user would.
"""
