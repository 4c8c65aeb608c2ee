"""The simulated world: the client and its retry policy, the lossy network, the API and its designs, the payment
processor and its ledger, the faults, the trace, and the database (`idemsim.model.db`, a model of PostgreSQL).

The model stands on `idemsim.base` and `idemsim.kernel` alone (tests/test_layers.py): it knows nothing of scenario
files, verdicts or views. It reads as plain SimPy; what makes it fast lives in the kernel.
"""
