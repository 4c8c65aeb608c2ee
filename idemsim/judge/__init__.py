"""What a finished run shows: the tally gathered as it ran, the properties judged on both ledgers, the summary
(`Summary`, the contract every view reads), the few measures a sweep keeps, and the statistics of many runs.
Nothing here runs the model or draws.
"""
