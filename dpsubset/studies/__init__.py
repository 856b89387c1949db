"""Data and studies around the package: bundled real data sets with their public
bounds (:mod:`.datasets`), the paper's simulation designs (:mod:`.simulate`),
recovery studies with tables and plots (:mod:`.experiments`), the planning of a release
before any data are seen (``dps.plan``, :mod:`.plan`: rows or eps needed, by simulation
from public inputs) and the demo that ``make demo`` runs (:mod:`.demo`).

Nothing here is on the path of a release: these modules call the public API the way
a user would.
"""
