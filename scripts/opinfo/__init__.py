"""Pieces of ``scripts/opinfo_compare.py``: sharded against torch's OpInfo database.

``names`` maps OpInfo entries to sharded callables, ``convert`` moves samples and results
between torch and sharded, ``runner`` runs one OpInfo's forward, gradient and error samples.
These modules import torch: they run only in a venv that has it, never in the test suite.
"""
